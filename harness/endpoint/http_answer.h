// answer(): the HTTP semantics of a merchant's endpoint around one handler
// call, shared by the simulated Endpoint and stress mode's real threads. A
// handler that throws is answered "500 Internal Server Error", as a web
// framework would; what it threw is handed back for the trace.
// `PassThrough` is an exception type that must not be answered (the
// scheduler's own unwinding of a killed task); it propagates.
#pragma once

#include <exception>
#include <string>

#include "twice/handler.h"

namespace twice::endpoint {

struct NothingPassesThrough {};

template <class PassThrough = NothingPassesThrough>
Reply answer(Handler& handler, const Notify& notify, Env& env, std::string* failure = nullptr) {
  try {
    return handler.handle(notify, env);
  } catch (const PassThrough&) {
    throw;
  } catch (const std::exception& e) {
    if (failure) *failure = std::string("handler threw: ") + e.what();
  } catch (...) {
    if (failure) *failure = "handler threw a non-standard exception";
  }
  return Reply{500, "Internal Server Error"};
}

}  // namespace twice::endpoint

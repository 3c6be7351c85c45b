#include "blackbox/http_post.h"

#include <chrono>

#include <httplib.h>

namespace twice::blackbox {
namespace {

// "localhost" is contacted as 127.0.0.1: a hosts file cannot send it elsewhere.
std::string address_of(const HttpEndpoint& to) { return to.host == "localhost" ? "127.0.0.1" : to.host; }

httplib::Client client_for(const HttpEndpoint& to, Micros timeout) {
  httplib::Client c(address_of(to), to.port);
  c.set_connection_timeout(std::chrono::microseconds(std::min<Micros>(timeout, 2 * kSecond)));
  c.set_read_timeout(std::chrono::microseconds(timeout));
  c.set_write_timeout(std::chrono::microseconds(timeout));
  c.set_keep_alive(false);
  return c;
}

HttpOutcome outcome_of(const httplib::Result& r) {
  HttpOutcome out;
  if (r) {
    out.kind = HttpOutcome::Kind::kAnswered;
    out.http_status = r->status;
    out.body = r->body;
    return out;
  }
  const httplib::Error e = r.error();
  out.error = httplib::to_string(e);
  if (e == httplib::Error::Connection) out.kind = HttpOutcome::Kind::kRefused;
  else if (e == httplib::Error::Read || e == httplib::Error::Write || e == httplib::Error::ConnectionTimeout)
    out.kind = HttpOutcome::Kind::kTimedOut;
  else
    out.kind = HttpOutcome::Kind::kFailed;
  return out;
}

}  // namespace

HttpOutcome post(const HttpEndpoint& to, const WireRequest& request, Micros timeout) {
  httplib::Client c = client_for(to, timeout);
  httplib::Headers headers;
  for (const auto& [k, v] : request.headers) headers.emplace(k, v);
  headers.emplace("User-Agent", "twice-blackbox");
  return outcome_of(c.Post(to.path, headers, request.body, request.content_type));
}

HttpOutcome probe(const HttpEndpoint& to, Micros timeout) {
  httplib::Client c = client_for(to, timeout);
  return outcome_of(c.Options(to.path));
}

}  // namespace twice::blackbox

// StatusOr<T>: a value, or the Status that says why there is none. The one
// way an operation that produces something reports failure across a module
// boundary (loading a scenario, the expected matrix), as Status is for one
// that produces nothing (writing a report). No bool + out-parameter, no
// empty-string-means-ok, no exception crossing a module or a thread.
//
//   StatusOr<Scenario> s = load_scenario(path);
//   if (!s.ok()) return s.status();   // "scenarios/x.toml:12: ..."
//   use(*s);
//
// Reading the value of an error is a programming error: it aborts, naming
// the status, rather than handing out a default-built T. Plain value type;
// as thread-safe as T.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

#include "twice/status.h"

namespace twice {

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // A value: ok() is true.
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor): returned as `return value;`
  // An error. An OK status here is itself an error (there is no value to
  // go with it), reported as such instead of pretending to succeed.
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (status_.ok()) status_ = Status::error("StatusOr built from an OK status without a value");
  }

  bool ok() const { return status_.ok(); }
  // OK when there is a value.
  const Status& status() const { return status_; }

  const T& value() const& { return checked(), *value_; }
  T& value() & { return checked(), *value_; }
  // By value: a reference into a temporary StatusOr would dangle (as in
  // `for (auto& v : load().value().items)`).
  T value() && { return checked(), std::move(*value_); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  void checked() const {
    if (value_) return;
    std::fprintf(stderr, "twice: the value of a failed StatusOr was read: %s\n", status_.to_string().c_str());
    std::abort();
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace twice

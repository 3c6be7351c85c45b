// The log of handler registrations, as they arrive through the public C entry
// point twice_register_handler(), and of job registrations (TWICE_REGISTER_JOB). The plugin loader reads it after dlopen() to
// learn what the library registered and what was refused, and why; nothing
// else needs it. Thread-safe (registrations come from static initialisation,
// which dlopen() may run on any thread).
#pragma once

#include <string>
#include <vector>

namespace twice::env {

struct RegistrationRecord {
  enum class Kind { kHandler, kJob };
  enum class Refused { kNo, kVersion, kEmptyName, kNameTaken };
  Kind kind = Kind::kHandler;
  int api_version = 0;
  std::string name;  // empty when refused for its version (nothing else is read then)
  Refused refused = Refused::kNo;
  bool accepted() const { return refused == Refused::kNo; }
};

// Every registration since the previous call, in order; clears the log.
std::vector<RegistrationRecord> take_registrations();
// Adds one (TWICE_REGISTER_JOB's, which has no C entry point of its own).
void record_registration(RegistrationRecord r);

}  // namespace twice::env

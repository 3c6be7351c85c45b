// The log of handler registrations, as they arrive through the public C entry
// point twice_register_handler(). The plugin loader reads it after dlopen() to
// learn what the library registered and what was refused, and why; nothing
// else needs it. Thread-safe (registrations come from static initialisation,
// which dlopen() may run on any thread).
#pragma once

#include <string>
#include <vector>

namespace twice::env {

struct RegistrationRecord {
  int api_version = 0;
  std::string name;       // empty when refused for its version (nothing else is read then)
  bool accepted = false;  // false: wrong API version, or the name was taken
};

// Every registration since the previous call, in order; clears the log.
std::vector<RegistrationRecord> take_registrations();

}  // namespace twice::env

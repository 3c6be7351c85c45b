#include "api/registration.h"

#include <memory>
#include <mutex>
#include <utility>

#include "twice/handler.h"

namespace twice::env {
namespace {

struct RegistrationLog {
  std::mutex mutex;
  std::vector<RegistrationRecord> records;
};

// A function-local static: registrations run during static initialisation,
// in an order across translation units that nobody controls.
RegistrationLog& registration_log() {
  static RegistrationLog log;
  return log;
}

}  // namespace

void record_registration(RegistrationRecord r) {
  RegistrationLog& log = registration_log();
  std::lock_guard lock(log.mutex);
  log.records.push_back(std::move(r));
}

std::vector<RegistrationRecord> take_registrations() {
  RegistrationLog& log = registration_log();
  std::lock_guard lock(log.mutex);
  return std::exchange(log.records, {});
}

}  // namespace twice::env

extern "C" bool twice_register_handler(int api_version, const char* name, const char* description,
                                       twice::Handler* (*make)()) {
  // The version first: with another one, even the meaning of the other
  // arguments is not ours to assume.
  using Record = twice::env::RegistrationRecord;
  if (api_version != TWICE_API_VERSION) {
    twice::env::record_registration({Record::Kind::kHandler, api_version, "", Record::Refused::kVersion});
    return false;
  }
  std::string handler_name = name ? name : "";
  Record::Refused refused = Record::Refused::kNo;
  if (handler_name.empty() || !make)
    refused = Record::Refused::kEmptyName;
  else if (!twice::HandlerRegistry::instance().add(twice::HandlerInfo{
               handler_name, description ? description : "",
               [make] { return std::unique_ptr<twice::Handler>(make()); }}))
    refused = Record::Refused::kNameTaken;
  twice::env::record_registration({Record::Kind::kHandler, api_version, std::move(handler_name), refused});
  return refused == Record::Refused::kNo;
}

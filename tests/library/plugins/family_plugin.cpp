// A plugin that registers a family of handlers through a macro of its own, so
// that every registration expands on one source line (as two files of one
// unity batch can hold two registrations on the same line number). The names
// TWICE_REGISTER_HANDLER and TWICE_REGISTER_JOB give their statics must not
// collide there: they were once made from __LINE__, and this did not compile.
#include "twice/handler.h"
#include "twice/job.h"

namespace {

template <bool kAck>
class Fixed final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override {
    return kAck ? twice::Reply::success() : twice::Reply::fail("never acks");
  }
};

class Idle final : public twice::Job {
 public:
  explicit Idle(twice::Micros) {}
  twice::Micros interval() const override { return 60 * twice::kSecond; }
  void run(twice::Env&, twice::Handler&) override {}
};

}  // namespace

#define FAMILY_MEMBER(ack, name) TWICE_REGISTER_HANDLER(Fixed<ack>, name, "from a plugin: a family member")
#define FAMILY() FAMILY_MEMBER(true, "plugin-family-acks"); FAMILY_MEMBER(false, "plugin-family-refuses"); TWICE_REGISTER_JOB(Idle, "plugin-family-idle", "does nothing")

FAMILY();

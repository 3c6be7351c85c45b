// ack-before-commit: answers the gateway first ("respond fast, work later"),
// then runs the recommended transaction.
//
// BUG (ack_before_commit, lost_payment): the gateway stops retrying as soon as
// it has the ack; if the process dies before the commit, nobody will ever
// deliver this payment again.
#include "events.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class AckBeforeCommit final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    env.respond_now(Reply::ack(n));
    return apply_once(n, env);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::AckBeforeCommit, "ack-before-commit",
                       "canary: acks before its transaction commits (ack_before_commit)");

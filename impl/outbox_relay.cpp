// outbox-relay: every minute, delivers the outbox's pending rows, oldest
// first, each with "outbox-<id>" as its idempotency key, and marks each done.
//
// Each row is delivered inside a write transaction that first re-reads the
// row and its order and holds them: a refund the handler records waits for
// the delivery to finish, so an order whose refund the merchant already
// acknowledged is cancelled, never shipped. Holding them takes a lock the
// engine has: BEGIN IMMEDIATE (the database's write lock) on SQLite, SELECT
// ... FOR UPDATE (the two rows' locks) on a server engine, where BEGIN takes
// no lock and a plain SELECT none either: there, at READ COMMITTED, the
// refund committed and was acknowledged while the warehouse call was in
// flight, and the goods went out for a refunded order (issue 10's engine
// axis found it). At REPEATABLE READ and SERIALIZABLE on PostgreSQL, a refund
// that commits while the relay waits for its lock fails the relay's read
// (40001); the attempt is tried again and reads the refund. A failed call (the service is
// down, or timed out) rolls back and is tried again, a few times now and then
// at the next tick; a refusal (out of stock) is final and marked so.
#include <string>

#include "effects.h"
#include "twice/job.h"

namespace twice::impl {
namespace {

constexpr int kAttemptsPerTick = 4;

class OutboxRelay final : public Job {
 public:
  explicit OutboxRelay(Micros) {}
  Micros interval() const override { return kMinute; }

  void run(Env& env, Handler&) override {
    const Result pending = env.db().exec("SELECT id FROM outbox WHERE state = 'pending' ORDER BY id");
    if (!pending.ok()) return;
    for (const auto& row : pending.rows) {
      for (int attempt = 0; attempt < kAttemptsPerTick; ++attempt) {
        if (attempt > 0) env.clock().sleep(2 * kSecond);
        if (deliver(env, row[0].as_int())) break;
      }
    }
  }

 private:
  // True when the row needs no more attempts this tick (done, refused, cancelled, or gone).
  static bool deliver(Env& env, std::int64_t id) {
    Db& db = env.db();
    auto tx = db.begin(TxMode::kImmediate);
    if (!tx.ok()) return false;
    const std::string lock = db.engine() == Engine::kSqlite ? "" : " FOR UPDATE";
    const Result r = db.exec(
        "SELECT o.order_no, o.service, o.effect, orders.status FROM outbox o JOIN orders ON orders.order_no = o.order_no "
        "WHERE o.id = ? AND o.state = 'pending'" + lock,
        {id});
    if (!r.ok()) return false;
    if (r.empty()) return true;  // another tick delivered it
    const std::string order_no = r.rows[0][0].as_text();
    const std::string service = r.rows[0][1].as_text();
    const std::string effect = r.rows[0][2].as_text();
    if (r.rows[0][3].as_text() != "PAID") {  // refunded (or never kept) since: owe nothing
      return db.exec("UPDATE outbox SET state = 'cancelled' WHERE id = ?", {id}).ok() && tx.commit().ok();
    }
    const ServiceReply reply =
        env.call(service, ServiceRequest{effect, order_no, {}, "outbox-" + std::to_string(id)});
    const bool refused = !reply.ok() && reply.status.message().find("out of stock") != std::string::npos;
    if (!reply.ok() && !refused) return false;  // rolled back: the row stays pending
    return db.exec("UPDATE outbox SET state = ? WHERE id = ?", {refused ? "refused" : "done", id}).ok() &&
           tx.commit().ok();
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_JOB(twice::impl::OutboxRelay, "outbox-relay",
                   "every minute, delivers pending outbox rows with the row id as idempotency key; marks them done");

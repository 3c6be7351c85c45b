// QueryServer: the gateway's query API as an HTTP server on loopback
// (--query-port), so that a service's reconciler, pointed at twice instead of
// the gateway, asks about the run under way and gets the gateway's own ledger:
//   WeChat Pay v3  GET /v3/pay/transactions/out-trade-no/{out_trade_no}
//                  (trade_state SUCCESS, NOTPAY, CLOSED or REFUND; the answer
//                  signed with the platform key in Wechatpay-* headers)
//   Alipay         GET or POST /gateway.do, method=alipay.trade.query,
//                  biz_content {"out_trade_no": ...} (trade_status
//                  TRADE_SUCCESS, WAIT_BUYER_PAY or TRADE_CLOSED; RSA2 `sign`
//                  over the response object's JSON text)
//   Stripe         GET /v1/payment_intents/{id} (status succeeded,
//                  requires_payment_method or canceled)
//   PayPal         GET /v1/notifications/certs/{name}: the webhook-signing
//                  certificate PAYPAL-CERT-URL names; POST
//                  /v1/notifications/verify-webhook-signature (answers
//                  verification_status SUCCESS or FAILURE)
// An order the run does not know, or a query between runs, is the gateway's
// "not found". Threads: cpp-httplib serves on its own threads; attach() may
// be called from any thread, and a handler reads the view under its mutex.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "blackbox/wire_keys.h"
#include "twice/status.h"

namespace httplib {
class Server;
}

namespace twice::blackbox {

// One payment as the gateway's ledger has it, at the moment of the query.
struct PaymentState {
  enum class Stage { kWaiting, kPaid, kClosed, kRefunded };
  std::string order_no;
  std::string transaction_id;
  std::int64_t amount = 0;
  std::string currency;
  Stage stage = Stage::kWaiting;
};

// What the query API reads: the run under way (the runner implements it).
class LedgerView {
 public:
  virtual ~LedgerView() = default;
  virtual std::optional<PaymentState> by_order(std::string_view order_no) const = 0;
  virtual std::optional<PaymentState> by_transaction(std::string_view transaction_id) const = 0;
};

class QueryServer {
 public:
  // Listens on 127.0.0.1:`port` (0: a free port). An error when the port is taken.
  static Status start(int port, const WireKeys& keys, std::unique_ptr<QueryServer>& out);
  ~QueryServer();
  QueryServer(const QueryServer&) = delete;
  QueryServer& operator=(const QueryServer&) = delete;

  int port() const { return port_; }
  // The run whose ledger answers from now on; nullptr between runs.
  void attach(const LedgerView* view);
  int queries() const { return queries_; }

 private:
  explicit QueryServer(const WireKeys& keys);
  std::optional<PaymentState> find_order(std::string_view order_no);
  std::optional<PaymentState> find_transaction(std::string_view id);

  const WireKeys& keys_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mutex_;
  const LedgerView* view_ = nullptr;
  std::atomic<int> queries_{0};
};

}  // namespace twice::blackbox

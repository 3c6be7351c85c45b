#include "blackbox/query_server.h"

#include <chrono>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <openssl/rand.h>

#include "blackbox/wire_format.h"

namespace twice::blackbox {
namespace {

using json = nlohmann::json;
using Stage = PaymentState::Stage;

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string random_nonce() {
  unsigned char raw[16];
  RAND_bytes(raw, sizeof raw);
  std::string out;
  for (unsigned char c : raw) out += fmt::format("{:02X}", c);
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

QueryServer::QueryServer(const WireKeys& keys) : keys_(keys), server_(std::make_unique<httplib::Server>()) {}

Status QueryServer::start(int port, const WireKeys& keys, std::unique_ptr<QueryServer>& out) {
  std::unique_ptr<QueryServer> q(new QueryServer(keys));
  QueryServer* self = q.get();
  httplib::Server& s = *q->server_;

  // WeChat Pay v3: query an order by the merchant's order number.
  s.Get(R"(/v3/pay/transactions/out-trade-no/([^/?]+))", [self](const httplib::Request& req, httplib::Response& res) {
    ++self->queries_;
    const std::optional<PaymentState> p = self->find_order(req.matches[1].str());
    json body;
    if (!p) {
      res.status = 404;
      body = {{"code", "ORDER_NOT_EXIST"}, {"message", "order does not exist"}};
    } else {
      static constexpr const char* kState[] = {"NOTPAY", "SUCCESS", "CLOSED", "REFUND"};
      body = {{"appid", "wxtwice0000000001"}, {"mchid", "1900000001"}, {"out_trade_no", p->order_no},
              {"trade_state", kState[static_cast<int>(p->stage)]},
              {"amount", {{"total", p->amount}, {"currency", p->currency}}}};
      if (p->stage != Stage::kWaiting && p->stage != Stage::kClosed) body["transaction_id"] = p->transaction_id;
    }
    const std::string text = body.dump();
    const std::string ts = std::to_string(unix_now());
    const std::string nonce = random_nonce();
    res.set_header("Wechatpay-Timestamp", ts);
    res.set_header("Wechatpay-Nonce", nonce);
    res.set_header("Wechatpay-Serial", self->keys_.wechat_serial);
    res.set_header("Wechatpay-Signature",
                   rsa_sha256_base64(self->keys_.wechat_platform.get(), ts + "\n" + nonce + "\n" + text + "\n"));
    res.set_content(text, "application/json");
  });

  // Alipay's open API gateway: method=alipay.trade.query.
  const auto alipay = [self](const httplib::Request& req, httplib::Response& res) {
    ++self->queries_;
    json response;
    if (req.get_param_value("method") != "alipay.trade.query") {
      response = {{"code", "40004"}, {"msg", "Business Failed"}, {"sub_code", "isv.invalid-method"}};
    } else {
      std::string order_no;
      try {
        order_no = json::parse(req.get_param_value("biz_content")).value("out_trade_no", "");
      } catch (const json::exception&) {
      }
      const std::optional<PaymentState> p = self->find_order(order_no);
      if (!p) {
        response = {{"code", "40004"}, {"msg", "Business Failed"}, {"sub_code", "ACQ.TRADE_NOT_EXIST"},
                    {"sub_msg", "trade does not exist"}};
      } else {
        static constexpr const char* kStatus[] = {"WAIT_BUYER_PAY", "TRADE_SUCCESS", "TRADE_CLOSED", "TRADE_CLOSED"};
        response = {{"code", "10000"}, {"msg", "Success"}, {"out_trade_no", p->order_no},
                    {"trade_no", p->transaction_id}, {"trade_status", kStatus[static_cast<int>(p->stage)]},
                    {"total_amount", yuan(p->amount)}};
      }
    }
    const std::string text = response.dump();
    res.set_content(fmt::format(R"({{"alipay_trade_query_response":{},"sign":"{}"}})", text,
                                rsa_sha256_base64(self->keys_.alipay.get(), text)),
                    "application/json; charset=utf-8");
  };
  s.Get("/gateway.do", alipay);
  s.Post("/gateway.do", alipay);

  // Stripe: retrieve a PaymentIntent.
  s.Get(R"(/v1/payment_intents/([^/?]+))", [self](const httplib::Request& req, httplib::Response& res) {
    ++self->queries_;
    // The id a webhook named (data.object.id of payment_intent.*, or a
    // charge's payment_intent): pi_<transaction>. A bare transaction id is
    // taken too, as earlier versions of twice sent it.
    std::string id = req.matches[1].str();
    if (id.starts_with("pi_")) id.erase(0, 3);
    const std::optional<PaymentState> p = self->find_transaction(id);
    if (!p) {
      res.status = 404;
      res.set_content(json{{"error", {{"type", "invalid_request_error"}, {"code", "resource_missing"},
                                      {"message", "No such payment_intent: '" + req.matches[1].str() + "'"}}}}
                          .dump(),
                      "application/json");
      return;
    }
    static constexpr const char* kStatus[] = {"requires_payment_method", "succeeded", "canceled", "succeeded"};
    json body = {{"id", "pi_" + p->transaction_id}, {"object", "payment_intent"}, {"amount", p->amount},
                 {"amount_received", p->stage == Stage::kWaiting || p->stage == Stage::kClosed ? 0 : p->amount},
                 {"currency", lower(p->currency)}, {"status", kStatus[static_cast<int>(p->stage)]},
                 {"livemode", false}, {"metadata", {{"order_no", p->order_no}}}};
    res.set_content(body.dump(), "application/json");
  });

  // PayPal: the webhook-signing certificate PAYPAL-CERT-URL names, and the
  // verify-webhook-signature API, for a service that asks PayPal to check.
  s.Get(R"(/v1/notifications/certs/([^/?]+))", [self](const httplib::Request&, httplib::Response& res) {
    ++self->queries_;
    res.set_content(self->keys_.paypal_cert_pem, "application/x-pem-file");
  });
  s.Post("/v1/notifications/verify-webhook-signature", [self](const httplib::Request& req, httplib::Response& res) {
    ++self->queries_;
    const json in = json::parse(req.body, nullptr, false);
    if (in.is_discarded() || !in.is_object() || !in.contains("webhook_event")) {
      res.status = 400;
      res.set_content(json{{"name", "INVALID_REQUEST"}, {"message", "Request is not well-formed"}}.dump(), "application/json");
      return;
    }
    // The event as PayPal's SDKs send it back: parsed, so its text is
    // twice's own compact, key-sorted form, the text that was signed.
    const std::string event = in["webhook_event"].dump();
    const bool ok = in.value("auth_algo", "") == "SHA256withRSA" &&
                    in.value("webhook_id", "") == self->keys_.paypal_webhook_id &&
                    rsa_sha256_verify(self->keys_.paypal.get(),
                                      paypal_signed_text(in.value("transmission_id", ""), in.value("transmission_time", ""),
                                                         self->keys_.paypal_webhook_id, event),
                                      in.value("transmission_sig", ""));
    res.set_content(json{{"verification_status", ok ? "SUCCESS" : "FAILURE"}}.dump(), "application/json");
  });

  q->port_ = port == 0 ? s.bind_to_any_port("127.0.0.1") : (s.bind_to_port("127.0.0.1", port) ? port : -1);
  if (q->port_ <= 0) return Status::error(fmt::format("--query-port {}: cannot listen on 127.0.0.1:{} (in use?)", port, port));
  q->thread_ = std::thread([self] { self->server_->listen_after_bind(); });
  // stop() before the loop runs would be lost, and the join would wait forever.
  for (int waited = 0; !s.is_running() && waited < 5000; ++waited) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  out = std::move(q);
  return Status::OK();
}

QueryServer::~QueryServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void QueryServer::attach(const LedgerView* view) {
  std::lock_guard lock(mutex_);
  view_ = view;
}

std::optional<PaymentState> QueryServer::find_order(std::string_view order_no) {
  std::lock_guard lock(mutex_);
  return view_ ? view_->by_order(order_no) : std::nullopt;
}

std::optional<PaymentState> QueryServer::find_transaction(std::string_view id) {
  std::lock_guard lock(mutex_);
  return view_ ? view_->by_transaction(id) : std::nullopt;
}

}  // namespace twice::blackbox

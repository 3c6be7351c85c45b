// Notify and Reply: what crosses the wire between the simulated gateway and a
// handler. A Notify is a gateway's callback as the merchant's endpoint
// receives it: mostly "payment succeeded", sometimes "trade closed" or
// "refunded" (event_kind() says which); a Reply is the HTTP answer the handler
// gives.
// Whether a Reply counts as an acknowledgement is decided by the gateway's
// retry profile (WeChat v3 reads the status code, Alipay reads the body).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace twice {

struct Notify {
  std::string event_id;        // unique per notification; resends of one notification keep it
  std::string out_trade_no;    // the merchant's order number
  std::string transaction_id;  // the gateway's payment id
  std::int64_t amount = 0;     // integer minor units (fen, cents)
  std::string currency;        // ISO 4217, e.g. "CNY"
  std::string event_type;      // e.g. "TRANSACTION.SUCCESS", "REFUND.SUCCESS", "TRADE_CLOSED"
  std::int64_t refund_amount = 0;  // minor units given back to the payer; 0 unless a refund
  std::string raw_payload;     // the body exactly as sent; untrusted
  // Stripe-style "t=<seconds>,v1=<hex HMAC-SHA256 of '<t>.<raw_payload>'>";
  // check it with Env::verify() before trusting any field above.
  std::string signature;
  std::string gateway;         // the profile that sent it: "wechat-v3", "alipay", "adyen", ...
};

// What a notify says happened. Gateways name their events differently, and
// Alipay uses one name for two things: TRADE_CLOSED is a trade closed unpaid,
// or a paid trade fully refunded (refund_amount > 0).
enum class EventKind {
  kPaid,      // TRANSACTION.SUCCESS, TRADE_SUCCESS, TRADE_FINISHED, payment_intent.succeeded, AUTHORISATION, ...
  kClosed,    // the gateway closed a trade that was never paid: TRADE_CLOSED, payment_intent.canceled, OFFER_CLOSED
  kRefunded,  // the payment went back to the payer: REFUND.SUCCESS, charge.refunded, REFUND, ...
  kOther,     // anything else: acknowledge it and change nothing
};
EventKind event_kind(const Notify& notify);

struct Reply {
  int http_status = 200;
  std::string body;

  // The conventional answers. Which of them a gateway treats as an ack is the
  // profile's business (gateway/retry_profile.cpp): WeChat v3 acks on 200/204 whatever
  // the body says, Alipay only on a body of exactly "success".
  static Reply success() { return Reply{200, R"({"code":"SUCCESS"})"}; }
  // The message is escaped as a JSON string, so the body stays valid JSON
  // whatever it says (quotes, backslashes, newlines).
  static Reply fail(std::string_view message = "FAIL") {
    std::string body = R"({"code":"FAIL","message":")";
    constexpr char kHex[] = "0123456789abcdef";
    for (const char c : message) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        body += '\\';
        body += c;
      } else if (c == '\n') {
        body += "\\n";
      } else if (u < 0x20 || u == 0x7f) {
        body += "\\u00";
        body += kHex[u >> 4];
        body += kHex[u & 0xf];
      } else {
        body += c;
      }
    }
    return Reply{500, body + "\"}"};
  }
  // The acknowledgement `notify.gateway` documents: 200 {"code":"SUCCESS"} for
  // WeChat v3, the XML SUCCESS for v2, exactly "success" for Alipay, 202
  // "[accepted]" for Adyen, 200 for Stripe and PayPal.
  static Reply ack(const Notify& notify);
};

}  // namespace twice

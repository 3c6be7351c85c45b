#include "gateway/wire_format.h"

#include <ctime>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

namespace twice::gateway {
namespace {

using json = nlohmann::json;

std::string rsa_sha256(EVP_PKEY* key, std::string_view message) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  std::size_t len = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1) return {};
  if (EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1)
    return {};
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1)
    return {};
  sig.resize(len);
  return sig;
}

// AES-256-GCM: ciphertext followed by the 16-byte tag, as WeChat Pay sends it.
std::string aes_256_gcm(std::string_view key, std::string_view nonce, std::string_view aad, std::string_view plain) {
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr);
  EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce.size()), nullptr);
  EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, reinterpret_cast<const unsigned char*>(key.data()),
                     reinterpret_cast<const unsigned char*>(nonce.data()));
  int len = 0;
  EVP_EncryptUpdate(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(aad.data()), static_cast<int>(aad.size()));
  std::string out(plain.size() + 16, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  EVP_EncryptUpdate(ctx.get(), o, &len, reinterpret_cast<const unsigned char*>(plain.data()), static_cast<int>(plain.size()));
  int total = len;
  EVP_EncryptFinal_ex(ctx.get(), o + total, &len);
  total += len;
  EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, 16, o + total);
  out.resize(static_cast<std::size_t>(total) + 16);
  return out;
}

std::string hex_decode(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  return out;
}

std::string rfc3339(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds + 8 * 3600);  // Beijing time, as WeChat writes it
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}+08:00", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

std::string beijing_time(std::int64_t unix_seconds) {  // Alipay's "2026-01-01 08:00:00"
  std::string s = rfc3339(unix_seconds).substr(0, 19);
  s[10] = ' ';
  return s;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

WireRequest wechat_v3(const Notify& n, const WireKeys& keys, const WireTimes& at, std::string_view nonce, bool forged) {
  const EventKind kind = event_kind(n);
  json resource;
  if (kind == EventKind::kRefunded) {
    resource = {{"mchid", "1900000001"}, {"out_trade_no", n.out_trade_no}, {"transaction_id", n.transaction_id},
                {"out_refund_no", "R-" + n.out_trade_no}, {"refund_id", "50" + n.transaction_id},
                {"refund_status", "SUCCESS"}, {"success_time", rfc3339(at.event)},
                {"amount", {{"total", n.amount}, {"refund", n.refund_amount}, {"payer_total", n.amount},
                            {"payer_refund", n.refund_amount}}}};
  } else {
    resource = {{"mchid", "1900000001"}, {"appid", "wxtwice0000000001"}, {"out_trade_no", n.out_trade_no},
                {"transaction_id", n.transaction_id}, {"trade_type", "NATIVE"}, {"trade_state", "SUCCESS"},
                {"trade_state_desc", "OK"}, {"success_time", rfc3339(at.paid)},
                {"amount", {{"total", n.amount}, {"payer_total", n.amount}, {"currency", n.currency},
                            {"payer_currency", n.currency}}}};
  }
  const std::string aes_nonce(nonce.substr(0, 12));
  const std::string aad = kind == EventKind::kRefunded ? "refund" : "transaction";
  const std::string plain = resource.dump();
  const json body = {{"id", n.event_id},
                     {"create_time", rfc3339(at.event)},
                     {"resource_type", "encrypt-resource"},
                     {"event_type", n.event_type},
                     {"summary", kind == EventKind::kRefunded ? "退款成功" : "支付成功"},
                     {"resource",
                      {{"original_type", aad},
                       {"algorithm", "AEAD_AES_256_GCM"},
                       {"ciphertext", base64(aes_256_gcm(keys.wechat_apiv3_key, aes_nonce, aad, plain))},
                       {"associated_data", aad},
                       {"nonce", aes_nonce}}}};
  WireRequest r;
  r.content_type = "application/json";
  r.body = body.dump();
  const std::string ts = std::to_string(at.sent);
  const std::string header_nonce(nonce);
  const std::string message = ts + "\n" + header_nonce + "\n" + r.body + "\n";
  r.headers = {{"Wechatpay-Timestamp", ts},
               {"Wechatpay-Nonce", header_nonce},
               {"Wechatpay-Serial", keys.wechat_serial},
               {"Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048"},
               {"Wechatpay-Signature", base64(rsa_sha256(forged ? keys.forger.get() : keys.wechat_platform.get(), message))}};
  return r;
}

WireRequest alipay(const Notify& n, const WireKeys& keys, const WireTimes& at, bool forged) {
  const EventKind kind = event_kind(n);
  std::map<std::string, std::string> p = {
      {"notify_id", n.event_id},      {"notify_time", beijing_time(at.sent)}, {"notify_type", "trade_status_sync"},
      {"app_id", "2021000000000001"}, {"charset", "utf-8"},             {"version", "1.0"},
      {"out_trade_no", n.out_trade_no}, {"trade_no", n.transaction_id}, {"trade_status", n.event_type},
      {"total_amount", yuan(n.amount)}, {"seller_id", "2088000000000001"}, {"subject", "order " + n.out_trade_no}};
  if (kind == EventKind::kPaid) {
    p["receipt_amount"] = yuan(n.amount);
    p["gmt_payment"] = beijing_time(at.paid);
  }
  if (n.refund_amount > 0) {
    p["refund_fee"] = yuan(n.refund_amount);
    p["gmt_refund"] = beijing_time(at.event);
  }
  std::string signed_content;
  for (const auto& [k, v] : p) signed_content += (signed_content.empty() ? "" : "&") + k + "=" + v;
  p["sign_type"] = "RSA2";
  p["sign"] = base64(rsa_sha256(forged ? keys.forger.get() : keys.alipay.get(), signed_content));
  WireRequest r;
  r.content_type = "application/x-www-form-urlencoded; charset=utf-8";
  for (const auto& [k, v] : p) r.body += (r.body.empty() ? "" : "&") + k + "=" + form_escape(v);
  return r;
}

WireRequest stripe(const Notify& n, const WireKeys& keys, const WireTimes& at, bool forged) {
  const EventKind kind = event_kind(n);
  // charge.* events carry the Charge, its own ch_ id naming its
  // PaymentIntent; payment_intent.* carry the PaymentIntent. One payment so
  // has two object ids: a handler that dedupes on data.object.id credits
  // payment_intent.succeeded and charge.succeeded both.
  const std::string intent = "pi_" + n.transaction_id;
  const std::string charge = "ch_" + n.transaction_id;
  json object;
  if (n.event_type.starts_with("charge.")) {
    object = {{"id", charge},
              {"object", "charge"},
              {"amount", n.amount},
              {"amount_captured", n.amount},
              {"amount_refunded", kind == EventKind::kRefunded ? n.refund_amount : 0},
              {"captured", true},
              {"currency", lower(n.currency)},
              {"paid", true},
              {"payment_intent", intent},
              {"refunded", kind == EventKind::kRefunded && n.refund_amount >= n.amount},
              {"status", "succeeded"},
              {"metadata", {{"order_no", n.out_trade_no}}}};
  } else {
    object = {{"id", intent},
              {"object", "payment_intent"},
              {"amount", n.amount},
              {"amount_received", kind == EventKind::kClosed ? 0 : n.amount},
              {"currency", lower(n.currency)},
              {"status", kind == EventKind::kClosed ? "canceled" : "succeeded"},
              {"metadata", {{"order_no", n.out_trade_no}}}};
    if (kind != EventKind::kClosed) object["latest_charge"] = charge;
  }
  const json body = {{"id", n.event_id}, {"object", "event"}, {"api_version", "2024-06-20"}, {"created", at.event},
                     {"livemode", false}, {"type", n.event_type},  {"data", {{"object", object}}}};
  WireRequest r;
  r.content_type = "application/json";
  r.body = body.dump();
  const std::string secret = forged ? keys.stripe_secret + "-forged" : keys.stripe_secret;
  std::string hex;
  for (unsigned char c : hmac_sha256(secret, std::to_string(at.sent) + "." + r.body)) hex += fmt::format("{:02x}", c);
  r.headers = {{"Stripe-Signature", fmt::format("t={},v1={}", at.sent, hex)}};
  return r;
}

WireRequest adyen(const Notify& n, const WireKeys& keys, const WireTimes& at, bool forged) {
  // A refund is a modification of the payment (its own pspReference, the
  // payment's as originalReference); AUTHORISATION and OFFER_CLOSED (the
  // offer expired unpaid) are the payment's own, with no original.
  const bool refund = event_kind(n) == EventKind::kRefunded;
  const std::string psp = refund ? "R" + n.transaction_id : n.transaction_id;
  const std::string original = refund ? n.transaction_id : "";
  const std::int64_t value = n.refund_amount > 0 ? n.refund_amount : n.amount;
  const std::string merchant = "TwiceTestMerchant";
  const std::string signed_content = fmt::format("{}:{}:{}:{}:{}:{}:{}:{}", psp, original, merchant, n.out_trade_no,
                                                 value, n.currency, n.event_type, "true");
  const std::string key = forged ? std::string(32, '\x5a') : hex_decode(keys.adyen_hmac_hex);
  json item = {{"additionalData", {{"hmacSignature", base64(hmac_sha256(key, signed_content))}}},
               {"amount", {{"currency", n.currency}, {"value", value}}},
               {"eventCode", n.event_type},
               {"eventDate", rfc3339(at.event)},
               {"merchantAccountCode", merchant},
               {"merchantReference", n.out_trade_no},
               {"originalReference", original},
               {"pspReference", psp},
               {"reason", ""},
               {"success", "true"}};
  const json body = {{"live", "false"}, {"notificationItems", json::array({{{"NotificationRequestItem", item}}})}};
  WireRequest r;
  r.content_type = "application/json";
  r.body = body.dump();
  return r;
}

std::string utc_time(std::int64_t unix_seconds) {  // PayPal's "2026-01-01T00:00:00Z"
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

// A UUID-shaped transmission id from the request's nonce.
std::string transmission_id(std::string_view nonce) {
  std::string hex;
  for (unsigned char c : hmac_sha256("paypal-transmission-id", nonce)) hex += fmt::format("{:02x}", c);
  return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4), hex.substr(16, 4),
                     hex.substr(20, 12));
}

WireRequest paypal(const Notify& n, const WireKeys& keys, const WireTimes& at, std::string_view nonce, bool forged) {
  const bool refund = event_kind(n) == EventKind::kRefunded;
  const std::int64_t value = refund ? n.refund_amount : n.amount;
  const json resource = {{"id", refund ? "R" + n.transaction_id : n.transaction_id},
                         {"status", "COMPLETED"},
                         {"amount", {{"currency_code", n.currency}, {"value", yuan(value)}}},
                         {"custom_id", n.out_trade_no},
                         {"invoice_id", n.out_trade_no},
                         {"create_time", utc_time(refund ? at.event : at.paid)},
                         {"update_time", utc_time(at.event)}};
  const json body = {{"id", "WH-" + n.event_id},
                     {"event_version", "1.0"},
                     {"create_time", utc_time(at.event)},
                     {"resource_type", refund ? "refund" : "capture"},
                     {"resource_version", "2.0"},
                     {"event_type", n.event_type},
                     {"summary", fmt::format("Payment {} for {} {}", refund ? "refunded" : "completed", yuan(value), n.currency)},
                     {"resource", resource}};
  WireRequest r;
  r.content_type = "application/json";
  r.body = body.dump();
  const std::string id = transmission_id(nonce);
  const std::string time = utc_time(at.sent);
  const std::string signed_text = paypal_signed_text(id, time, keys.paypal_webhook_id, r.body);
  r.headers = {{"PAYPAL-TRANSMISSION-ID", id},
               {"PAYPAL-TRANSMISSION-TIME", time},
               {"PAYPAL-TRANSMISSION-SIG", base64(rsa_sha256(forged ? keys.forger.get() : keys.paypal.get(), signed_text))},
               {"PAYPAL-CERT-URL", keys.paypal_cert_url},
               {"PAYPAL-AUTH-ALGO", "SHA256withRSA"}};
  return r;
}

}  // namespace

bool has_wire_format(std::string_view profile) {
  return profile == "wechat-v3" || profile == "alipay" || profile == "stripe" || profile == "adyen" || profile == "paypal";
}

const char* wire_formats() { return "wechat-v3, alipay, stripe, adyen, paypal"; }

std::uint32_t crc32(std::string_view bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (const char b : bytes) {
    c ^= static_cast<unsigned char>(b);
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::string paypal_signed_text(std::string_view transmission_id, std::string_view transmission_time,
                               std::string_view webhook_id, std::string_view body) {
  return fmt::format("{}|{}|{}|{}", transmission_id, transmission_time, webhook_id, crc32(body));
}

bool rsa_sha256_verify(EVP_PKEY* key, std::string_view message, std::string_view signature_base64) {
  std::string sig(signature_base64.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(sig.data()),
                                reinterpret_cast<const unsigned char*>(signature_base64.data()),
                                static_cast<int>(signature_base64.size()));
  if (n < 0 || key == nullptr) return false;
  std::size_t len = static_cast<std::size_t>(n);
  for (std::size_t i = signature_base64.size(); i > 0 && signature_base64[i - 1] == '='; --i) --len;
  sig.resize(len);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  return EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) == 1 &&
         EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                          reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

StatusOr<WireRequest> encode(const Notify& n, std::string_view profile, const WireKeys& keys, const WireTimes& times,
                             std::string_view nonce, bool forged) {
  if (profile == "wechat-v3") return wechat_v3(n, keys, times, nonce, forged);
  if (profile == "alipay") return alipay(n, keys, times, forged);
  if (profile == "stripe") return stripe(n, keys, times, forged);
  if (profile == "adyen") return adyen(n, keys, times, forged);
  if (profile == "paypal") return paypal(n, keys, times, nonce, forged);
  return Status::error(fmt::format("profile {} has no wire format; use a scenario whose profile is one of {}",
                                   profile, wire_formats()));
}

StatusOr<WireRequest> encode(const Notify& n, std::string_view profile, const WireKeys& keys, std::int64_t unix_seconds,
                             std::string_view nonce, bool forged) {
  return encode(n, profile, keys, WireTimes{unix_seconds, unix_seconds, unix_seconds}, nonce, forged);
}

std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string hmac_sha256(std::string_view key, std::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string rsa_sha256_base64(EVP_PKEY* key, std::string_view message) { return base64(rsa_sha256(key, message)); }

std::string yuan(std::int64_t fen) {
  const char* sign = fen < 0 ? "-" : "";
  const std::int64_t a = fen < 0 ? -fen : fen;
  return fmt::format("{}{}.{:02}", sign, a / 100, a % 100);
}

std::string form_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

std::string public_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, key);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

}  // namespace twice::gateway

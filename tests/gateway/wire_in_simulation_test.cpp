// Simulation's notifies in the real wire formats (twice::wire(), twice/wire.h):
// a WeChat Pay v3 handler written as production code is (verify
// Wechatpay-Signature with the platform key, refuse a stale timestamp,
// decrypt the AES-256-GCM resource with the APIv3 key, trust only what it
// decrypted) passes forged-callbacks; the same handler without the signature
// check is caught with accepted_invalid, so the wire form does carry the
// attacker's forgery. And a run's requests are the same bytes on a replay.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "impl/recommended.h"
#include "twice/handler.h"
#include "twice/time.h"
#include "twice/wire.h"
#include "../support.h"
#include "gateway/simulated_keys.h"
#include "gateway/wire_format.h"
#include "run/simulate.h"

namespace twice {
namespace {

std::string unbase64(std::string_view b64) {
  std::string out(b64.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(b64.data()), static_cast<int>(b64.size()));
  if (n < 0) return {};
  std::size_t len = static_cast<std::size_t>(n);
  for (std::size_t i = b64.size(); i > 0 && b64[i - 1] == '='; --i) --len;  // EVP_DecodeBlock keeps the padding's zeros
  out.resize(len);
  return out;
}

bool rsa_sha256_verifies(const std::string& public_pem, std::string_view message, std::string_view signature) {
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr), &EVP_PKEY_free);
  BIO_free(bio);
  if (!key) return false;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  return EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) == 1 &&
         EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                          reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

// AEAD_AES_256_GCM as WeChat Pay's SDKs open it: the last 16 bytes are the tag.
bool aes_256_gcm_open(std::string_view key, std::string_view nonce, std::string_view aad, std::string_view sealed,
                      std::string& plain) {
  if (key.size() != 32 || sealed.size() < 16) return false;
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  const std::string_view cipher = sealed.substr(0, sealed.size() - 16);
  std::string tag(sealed.substr(sealed.size() - 16));
  int len = 0;
  plain.assign(cipher.size(), '\0');
  return EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce.size()), nullptr) == 1 &&
         EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, reinterpret_cast<const unsigned char*>(key.data()),
                            reinterpret_cast<const unsigned char*>(nonce.data())) == 1 &&
         EVP_DecryptUpdate(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(aad.data()),
                           static_cast<int>(aad.size())) == 1 &&
         EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()), &len,
                           reinterpret_cast<const unsigned char*>(cipher.data()), static_cast<int>(cipher.size())) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, 16, tag.data()) == 1 &&
         EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()) + len, &len) == 1;
}

// A WeChat Pay v3 payment handler that reads only the wire form, as a
// merchant's server does with the platform's SDK; the state change is the
// recommended design's (impl/recommended.cpp) on what it decrypted.
class WechatV3WireHandler final : public Handler {
 public:
  explicit WechatV3WireHandler(bool check_signature) : check_signature_(check_signature) {}

  Reply handle(const Notify& notify, Env& env) override {
    StatusOr<WireRequest> wire = twice::wire(notify, env);
    if (!wire.ok()) return Reply::fail(wire.status().to_string());
    const WireRequest& w = wire.value();
    const WireSecrets& keys = twice::wire_secrets(env);
    if (check_signature_) {
      const std::string ts = w.header("Wechatpay-Timestamp");
      if (ts.empty() || w.header("Wechatpay-Serial") != keys.wechat_serial) return Reply::fail("unknown platform certificate");
      const std::int64_t now = kWireEpochSeconds + env.clock().now() / kSecond;
      const std::int64_t age = now - std::stoll(ts);
      if (age > 300 || age < -300) return Reply::fail("stale Wechatpay-Timestamp");
      const std::string message = ts + "\n" + w.header("Wechatpay-Nonce") + "\n" + w.body + "\n";
      if (!rsa_sha256_verifies(keys.wechat_platform_public_pem, message, unbase64(w.header("Wechatpay-Signature"))))
        return Reply::fail("bad Wechatpay-Signature");
    }
    const auto body = nlohmann::json::parse(w.body, nullptr, false);
    if (body.is_discarded() || !body.contains("resource")) return Reply::fail("not a WeChat Pay v3 event");
    const auto& r = body["resource"];
    std::string plain;
    if (!aes_256_gcm_open(keys.wechat_apiv3_key, r.value("nonce", ""), r.value("associated_data", ""),
                          unbase64(r.value("ciphertext", "")), plain))
      return Reply::fail("resource does not decrypt");
    const auto tx = nlohmann::json::parse(plain, nullptr, false);
    if (tx.is_discarded()) return Reply::fail("resource is not JSON");
    // Only what was decrypted is trusted: the Notify's own fields are not read.
    Notify decrypted;
    decrypted.event_id = body.value("id", "");
    decrypted.event_type = body.value("event_type", "");
    decrypted.out_trade_no = tx.value("out_trade_no", "");
    decrypted.transaction_id = tx.value("transaction_id", "");
    decrypted.amount = tx["amount"].value("total", std::int64_t{0});
    decrypted.currency = tx["amount"].value("currency", "");
    decrypted.gateway = notify.gateway;
    decrypted.raw_payload = w.body;
    if (event_kind(decrypted) != EventKind::kPaid) return Reply::ack(decrypted);
    return impl::apply_once(decrypted, env, {.verify = false});  // verified above, on the wire form
  }

 private:
  bool check_signature_;
};

HandlerInfo wechat_wire(bool check_signature) {
  return {check_signature ? "wechat-v3-wire" : "wechat-v3-wire-unverified", "",
          [check_signature] { return std::make_unique<WechatV3WireHandler>(check_signature); }};
}

run::RunResult run_seed(const gateway::Scenario& s, const HandlerInfo& h, std::uint64_t seed) {
  return run::simulate(run::RunSpec{&s, &h, {}, seed, std::nullopt}).value();
}

// Seeds 1..runs of `scenario`: in how many runs each invariant was violated.
std::map<std::string, int> violations(const gateway::Scenario& scenario, const HandlerInfo& h, int runs) {
  std::map<std::string, int> out;
  for (int seed = 1; seed <= runs; ++seed) {
    std::set<std::string> seen;
    for (const auto& v : run_seed(scenario, h, static_cast<std::uint64_t>(seed)).verdict.violations) seen.insert(v.invariant);
    for (const auto& name : seen) ++out[name];
  }
  return out;
}

TEST(WireInSimulation, AHandlerVerifyingTheWeChatV3WireFormPassesForgedCallbacks) {
  const gateway::Scenario s = testing::bundled_scenario("forged-callbacks");
  EXPECT_EQ(violations(s, wechat_wire(true), 40), (std::map<std::string, int>{}));
}

TEST(WireInSimulation, WithoutTheSignatureCheckTheForgedWireNotifyIsAccepted) {
  const gateway::Scenario s = testing::bundled_scenario("forged-callbacks");
  const std::map<std::string, int> found = violations(s, wechat_wire(false), 40);
  ASSERT_TRUE(found.contains("accepted_invalid")) << ::testing::PrintToString(found);
  EXPECT_EQ(found.at("accepted_invalid"), 40);  // the forger's notify is in every run
}

TEST(WireInSimulation, GenuineNotifiesAreCreditedFromTheWireForm) {
  for (const char* name : {"sequential-duplicates", "concurrent-duplicates"})
    EXPECT_EQ(violations(testing::bundled_scenario(name), wechat_wire(true), 20), (std::map<std::string, int>{})) << name;
}

// Every wire request a run's handler saw, in order.
class RecordingHandler final : public Handler {
 public:
  explicit RecordingHandler(std::vector<std::string>& seen) : seen_(seen) {}
  Reply handle(const Notify& notify, Env& env) override {
    StatusOr<WireRequest> w = twice::wire(notify, env);
    std::string line = w.ok() ? w.value().body : w.status().to_string();
    if (w.ok())
      for (const auto& [k, v] : w.value().headers) line += "\n" + k + ": " + v;
    seen_.push_back(line);
    return Reply::ack(notify);
  }

 private:
  std::vector<std::string>& seen_;
};

TEST(WireInSimulation, ARunsWireRequestsAreTheSameBytesOnAReplay) {
  std::vector<std::string> first, second;
  const gateway::Scenario s = testing::bundled_scenario("forged-callbacks");
  (void)run_seed(s, HandlerInfo{"rec", "", [&] { return std::make_unique<RecordingHandler>(first); }}, 7);
  (void)run_seed(s, HandlerInfo{"rec", "", [&] { return std::make_unique<RecordingHandler>(second); }}, 7);
  ASSERT_GE(first.size(), 6u);  // the genuine payment and five attacks
  EXPECT_EQ(first, second);
  // The replay is the genuine request again, byte for byte (nonces and all).
  const std::set<std::string> distinct(first.begin(), first.end());
  EXPECT_EQ(distinct.size(), first.size() - 1);
  // Each a WeChat v3 request, and no two others share a nonce.
  std::set<std::string> nonces;
  for (const auto& line : first) {
    ASSERT_NE(line.find("Wechatpay-Signature: "), std::string::npos) << line;
    const std::size_t at = line.find("Wechatpay-Nonce: ");
    ASSERT_NE(at, std::string::npos) << line;
    nonces.insert(line.substr(at, line.find('\n', at) - at));
  }
  EXPECT_EQ(nonces.size(), distinct.size());
}

TEST(WireInSimulation, AProfileWithoutAWireFormSaysSo) {
  std::vector<std::string> seen;
  gateway::Scenario s = testing::one_order_scenario();
  s.profile = "wechat-v2";
  (void)run_seed(s, HandlerInfo{"rec", "", [&] { return std::make_unique<RecordingHandler>(seen); }}, 1);
  ASSERT_FALSE(seen.empty());
  EXPECT_NE(seen[0].find("profile wechat-v2 has no wire format; those with one: "), std::string::npos) << seen[0];
}

// PayPal in simulation: the certificate in wire_secrets() checks the
// signature over "id|time|webhook id|crc32(body)", as a PayPal SDK does.
class PaypalCheckingHandler final : public Handler {
 public:
  explicit PaypalCheckingHandler(std::vector<bool>& verified) : verified_(verified) {}
  Reply handle(const Notify& notify, Env& env) override {
    StatusOr<WireRequest> w = twice::wire(notify, env);
    if (!w.ok()) return Reply::fail(w.status().to_string());
    const WireSecrets& keys = twice::wire_secrets(env);
    BIO* bio = BIO_new_mem_buf(keys.paypal_cert_pem.data(), static_cast<int>(keys.paypal_cert_pem.size()));
    std::unique_ptr<X509, decltype(&X509_free)> cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr), &X509_free);
    BIO_free(bio);
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(cert ? X509_get_pubkey(cert.get()) : nullptr, &EVP_PKEY_free);
    const std::string signed_text = w.value().header("PAYPAL-TRANSMISSION-ID") + "|" +
                                    w.value().header("PAYPAL-TRANSMISSION-TIME") + "|" + keys.paypal_webhook_id + "|" +
                                    std::to_string(gateway::crc32(w.value().body));
    verified_.push_back(key && gateway::rsa_sha256_verify(key.get(), signed_text, w.value().header("PAYPAL-TRANSMISSION-SIG")));
    return Reply::ack(notify);
  }

 private:
  std::vector<bool>& verified_;
};

TEST(WireInSimulation, PaypalsSignatureChecksWithTheCertificateAndTheForgedOneDoesNot) {
  gateway::Scenario s = testing::one_order_scenario();
  s.profile = "paypal";
  s.attacks.forged_signature = 1;
  s.attacks.window = kSecond;
  std::vector<bool> verified;
  (void)run_seed(s, HandlerInfo{"paypal", "", [&] { return std::make_unique<PaypalCheckingHandler>(verified); }}, 3);
  // One genuine notify (a lost ack would add a second) and one forged.
  ASSERT_GE(verified.size(), 2u);
  EXPECT_EQ(std::count(verified.begin(), verified.end(), false), 1);
}

// An Env of the handler's own (a unit test's fake) serves no gateway: an
// error, not a crash, as in a twice without wire forms.
class FakeEnv final : public Env {
 public:
  Db& db() override { throw std::logic_error("unused"); }
  Locks& locks() override { throw std::logic_error("unused"); }
  Clock& clock() override { throw std::logic_error("unused"); }
  std::string token() override { return "T1"; }
  void note(std::string_view) override {}
  Status verify(const Notify&) override { return Status::OK(); }
  std::optional<Notify> query_payment(std::string_view) override { return std::nullopt; }
  void respond_now(const Reply&) override {}
  ServiceReply call(std::string_view, const ServiceRequest&) override { return {}; }
};

TEST(WireInSimulation, AnEnvThatServesNoGatewayAnswersAnError) {
  FakeEnv env;
  Notify n;
  n.event_id = "evt-1";
  StatusOr<WireRequest> w = twice::wire(n, env);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("serves no gateway"), std::string::npos) << w.status().message();
  EXPECT_TRUE(twice::wire_secrets(env).wechat_platform_public_pem.empty());
}

TEST(WireInSimulation, TheSecretsAreTheMerchantsHalfOfTheSimulatedKeys) {
  const WireSecrets& k = gateway::simulated_wire_secrets();
  EXPECT_EQ(k.wechat_apiv3_key.size(), 32u);
  EXPECT_EQ(k.adyen_hmac_hex.size(), 64u);
  EXPECT_EQ(k.stripe_secret, "whsec_twice_stripe");  // the simulated gateway's Stripe secret
  EXPECT_TRUE(k.wechat_platform_public_pem.starts_with("-----BEGIN PUBLIC KEY-----")) << k.wechat_platform_public_pem;
  EXPECT_NE(k.wechat_platform_public_pem, k.alipay_public_pem);
  EXPECT_EQ(k.wechat_platform_public_pem.find("PRIVATE"), std::string::npos);
}

// fidelity finding 2: Stripe's charge.* events carry a Charge (ch_, naming
// its pi_ PaymentIntent), payment_intent.* the PaymentIntent. A handler that
// dedupes one payment on data.object.id (event-id-dedupe keyed on it) sees
// two ids and credits twice in stripe-concurrent-events; one that dedupes on
// the PaymentIntent passes.
class StripeObjectDedupe final : public Handler {
 public:
  explicit StripeObjectDedupe(bool on_payment_intent)
      : on_payment_intent_(on_payment_intent), inner_(testing::handler("event-id-dedupe").make()) {}
  Reply handle(const Notify& notify, Env& env) override {
    StatusOr<WireRequest> w = twice::wire(notify, env);
    if (!w.ok()) return Reply::fail(w.status().to_string());
    const auto event = nlohmann::json::parse(w.value().body);
    const auto& object = event["data"]["object"];
    Notify keyed = notify;
    keyed.event_id = on_payment_intent_ && object["object"] == "charge" ? object["payment_intent"].get<std::string>()
                                                                        : object["id"].get<std::string>();
    return inner_->handle(keyed, env);
  }

 private:
  bool on_payment_intent_;
  std::unique_ptr<Handler> inner_;
};

TEST(WireInSimulation, StripeChargeEventsCarryTheChargeAndPaymentIntentEventsThePaymentIntent) {
  std::vector<std::string> seen;
  const gateway::Scenario s = testing::bundled_scenario("stripe-concurrent-events");
  (void)run_seed(s, HandlerInfo{"rec", "", [&] { return std::make_unique<RecordingHandler>(seen); }}, 1);
  std::map<std::string, nlohmann::json> by_type;
  for (const auto& line : seen) {
    const auto event = nlohmann::json::parse(line.substr(0, line.find('\n')));
    by_type[event["type"]] = event["data"]["object"];
  }
  ASSERT_TRUE(by_type.contains("payment_intent.succeeded") && by_type.contains("charge.succeeded"));
  const auto& intent = by_type["payment_intent.succeeded"];
  const auto& charge = by_type["charge.succeeded"];
  EXPECT_EQ(intent["object"], "payment_intent");
  EXPECT_EQ(intent["id"], "pi_4200000001");
  EXPECT_EQ(charge["object"], "charge");
  EXPECT_EQ(charge["id"], "ch_4200000001");
  EXPECT_EQ(charge["payment_intent"], "pi_4200000001");
  EXPECT_EQ(charge["metadata"]["order_no"], "O-14001");
  EXPECT_EQ(charge["amount"], 2900);
}

TEST(WireInSimulation, DedupingStripeEventsOnDataObjectIdIsCaughtAndOnThePaymentIntentPasses) {
  const gateway::Scenario s = testing::bundled_scenario("stripe-concurrent-events");
  const HandlerInfo object_id{"object-id", "", [] { return std::make_unique<StripeObjectDedupe>(false); }};
  const HandlerInfo intent{"payment-intent", "", [] { return std::make_unique<StripeObjectDedupe>(true); }};
  const std::map<std::string, int> found = violations(s, object_id, 10);
  ASSERT_TRUE(found.contains("double_credit")) << ::testing::PrintToString(found);
  EXPECT_EQ(found.at("double_credit"), 10) << "both events reach it in every run";
  EXPECT_EQ(violations(s, intent, 10), (std::map<std::string, int>{}));
}

// Every wire request a run's handler saw, in order, failing each so that
// the gateway sends it again.
class RefusingRecorder final : public Handler {
 public:
  explicit RefusingRecorder(std::vector<WireRequest>& seen) : seen_(seen) {}
  Reply handle(const Notify& notify, Env& env) override {
    StatusOr<WireRequest> w = twice::wire(notify, env);
    if (w.ok()) seen_.push_back(w.value());
    return Reply::fail();
  }

 private:
  std::vector<WireRequest>& seen_;
};

std::vector<WireRequest> resends(const std::string& profile, int attempts) {
  gateway::Scenario s = testing::one_order_scenario();
  s.profile = profile;
  s.max_attempts = attempts;
  s.orders[0].paid_at = 90 * kSecond;
  std::vector<WireRequest> seen;
  (void)run_seed(s, HandlerInfo{"rec", "", [&] { return std::make_unique<RefusingRecorder>(seen); }}, 1);
  return seen;
}

std::string form_value(const std::string& body, const std::string& key) {
  const std::size_t at = body.find(key + "=");
  if (at == std::string::npos) return "";
  const std::size_t from = at + key.size() + 1;
  return body.substr(from, body.find('&', from) - from);
}

// fidelity finding 10: a payment's time is when it settled, on every resend;
// only the request's own time (its signature's) moves.
TEST(WireInSimulation, ResendsCarryThePaymentsSettlementTimeNotTheirSendTime) {
  const auto alipay = resends("alipay", 3);
  ASSERT_EQ(alipay.size(), 3u);
  for (const auto& r : alipay) {
    EXPECT_EQ(form_value(r.body, "gmt_payment"), "2026-01-01%2008%3A01%3A30") << r.body;
    EXPECT_EQ(form_value(r.body, "notify_id"), "evt-O-1");
  }
  EXPECT_NE(form_value(alipay[0].body, "notify_time"), form_value(alipay[2].body, "notify_time"));

  const auto stripe = resends("stripe", 3);
  ASSERT_EQ(stripe.size(), 3u);
  for (const auto& r : stripe) EXPECT_EQ(nlohmann::json::parse(r.body)["created"], kWireEpochSeconds + 90);
  EXPECT_NE(stripe[0].header("Stripe-Signature"), stripe[2].header("Stripe-Signature"));

  const auto paypal = resends("paypal", 2);
  ASSERT_EQ(paypal.size(), 2u);
  for (const auto& r : paypal) {
    const auto body = nlohmann::json::parse(r.body);
    EXPECT_EQ(body["create_time"], "2026-01-01T00:01:30Z");
    EXPECT_EQ(body["resource"]["create_time"], "2026-01-01T00:01:30Z");
  }
  EXPECT_NE(paypal[0].header("PAYPAL-TRANSMISSION-TIME"), paypal[1].header("PAYPAL-TRANSMISSION-TIME"));

  const auto adyen = resends("adyen", 2);
  ASSERT_EQ(adyen.size(), 2u);
  for (const auto& r : adyen)
    EXPECT_EQ(nlohmann::json::parse(r.body)["notificationItems"][0]["NotificationRequestItem"]["eventDate"],
              "2026-01-01T08:01:30+08:00");

  const auto wechat = resends("wechat-v3", 2);
  ASSERT_EQ(wechat.size(), 2u);
  const WireSecrets& keys = gateway::simulated_wire_secrets();
  for (const auto& r : wechat) {
    const auto body = nlohmann::json::parse(r.body);
    EXPECT_EQ(body["create_time"], "2026-01-01T08:01:30+08:00");
    const auto& res = body["resource"];
    std::string plain;
    ASSERT_TRUE(aes_256_gcm_open(keys.wechat_apiv3_key, res["nonce"].get<std::string>(),
                                 res["associated_data"].get<std::string>(), unbase64(res["ciphertext"].get<std::string>()),
                                 plain));
    EXPECT_EQ(nlohmann::json::parse(plain)["success_time"], "2026-01-01T08:01:30+08:00");
  }
  EXPECT_NE(wechat[0].header("Wechatpay-Timestamp"), wechat[1].header("Wechatpay-Timestamp"));
}

}  // namespace
}  // namespace twice

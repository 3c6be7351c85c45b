#include "blackbox/wire_keys.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "gateway/simulated_keys.h"

namespace twice::blackbox {
namespace fs = std::filesystem;
namespace {

std::string random_hex(int bytes) {
  std::string raw(static_cast<std::size_t>(bytes), '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), bytes);
  std::string out;
  for (unsigned char c : raw) out += fmt::format("{:02x}", c);
  return out;
}

// A random string of letters and digits (WeChat's APIv3 key is 32 of them).
std::string random_alnum(int n) {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string raw(static_cast<std::size_t>(n), '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), n);
  for (char& c : raw) c = kChars[static_cast<unsigned char>(c) % (sizeof kChars - 1)];
  return raw;
}

Status write_file(const fs::path& p, const std::string& text, bool secret) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Status::error(fmt::format("{}: cannot write the key: {}", p.string(), std::strerror(errno)));
  if (secret) ::chmod(p.c_str(), 0600);
  return Status::OK();
}

// The text of `p` without a trailing newline; made by `make` when missing.
Status text_key(const fs::path& p, std::string& out, std::string (*make)()) {
  if (fs::exists(p)) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    out = ss.str();
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    if (!f || out.empty()) return Status::error(fmt::format("{}: empty or unreadable; delete it and twice makes a new one", p.string()));
    return Status::OK();
  }
  out = make();
  return write_file(p, out + "\n", true);
}

Pkey generate_rsa() { return Pkey(EVP_RSA_gen(2048)); }

std::string private_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

// A self-signed X.509 certificate of `key`, PEM: what PAYPAL-CERT-URL serves.
// Made again at each load from the same key, so it always matches it.
std::string self_signed_cert(EVP_PKEY* key) {
  std::unique_ptr<X509, decltype(&X509_free)> x(X509_new(), &X509_free);
  X509_set_version(x.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -24L * 3600);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(x.get(), key);
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("twice test keys"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("twice test PayPal webhook signing"), -1, -1, 0);
  X509_set_issuer_name(x.get(), name);
  if (X509_sign(x.get(), key, EVP_sha256()) == 0) return {};
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, x.get());
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

// PayPal's webhook ids: 17 upper-case letters and digits.
std::string random_webhook_id() {
  std::string id = random_alnum(17);
  for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return id;
}

// The private key in `priv` (made when missing), its public half written to `pub`.
Status rsa_key(const fs::path& priv, const fs::path& pub, Pkey& out) {
  if (fs::exists(priv)) {
    FILE* f = std::fopen(priv.c_str(), "rb");
    if (!f) return Status::error(fmt::format("{}: cannot read: {}", priv.string(), std::strerror(errno)));
    out.reset(PEM_read_PrivateKey(f, nullptr, nullptr, nullptr));
    std::fclose(f);
    if (!out) return Status::error(fmt::format("{}: not a PEM private key; delete it and twice makes a new one", priv.string()));
  } else {
    out = generate_rsa();
    if (!out) return Status::error("OpenSSL could not generate an RSA key");
    if (Status s = write_file(priv, private_pem(out.get()), true); !s.ok()) return s;
  }
  return write_file(pub, gateway::public_pem(out.get()), false);
}

}  // namespace

Status load_or_create_keys(const std::string& dir, WireKeys& out) {
  std::error_code ec;
  const fs::path d(dir);
  fs::create_directories(d / "gateway-private", ec);
  if (ec) return Status::error(fmt::format("--keys-dir {}: cannot create it: {}", dir, ec.message()));
  if (Status s = text_key(d / "stripe_webhook_secret", out.stripe_secret, [] { return "whsec_" + random_hex(24); }); !s.ok())
    return s;
  if (Status s = text_key(d / "adyen_hmac_key", out.adyen_hmac_hex, [] { return random_hex(32); }); !s.ok()) return s;
  if (Status s = text_key(d / "wechatpay_apiv3_key", out.wechat_apiv3_key, [] { return random_alnum(32); }); !s.ok())
    return s;
  if (out.wechat_apiv3_key.size() != 32)
    return Status::error(fmt::format("{}/wechatpay_apiv3_key: must be 32 characters (AES-256); delete it to get a new one", dir));
  if (Status s = text_key(d / "wechatpay_serial", out.wechat_serial, [] { return random_hex(20); }); !s.ok()) return s;
  if (Status s = rsa_key(d / "gateway-private/wechatpay_platform.pem", d / "wechatpay_platform_public.pem",
                         out.wechat_platform);
      !s.ok())
    return s;
  if (Status s = rsa_key(d / "gateway-private/alipay.pem", d / "alipay_public_key.pem", out.alipay); !s.ok()) return s;
  if (Status s = rsa_key(d / "gateway-private/paypal.pem", d / "paypal_public_key.pem", out.paypal); !s.ok()) return s;
  out.paypal_cert_pem = self_signed_cert(out.paypal.get());
  if (out.paypal_cert_pem.empty()) return Status::error("OpenSSL could not make the PayPal test certificate");
  if (Status s = write_file(d / "paypal_cert.pem", out.paypal_cert_pem, false); !s.ok()) return s;
  if (Status s = text_key(d / "paypal_webhook_id", out.paypal_webhook_id, random_webhook_id); !s.ok()) return s;
  // The forger's key is simulation's fixed one (gateway/simulated_keys.cpp):
  // never in --keys-dir, so the service was never given it, and shared, so a
  // load generates no RSA key for it (seconds on a loaded machine).
  EVP_PKEY* forger = gateway::simulated_wire_keys().forger.get();
  EVP_PKEY_up_ref(forger);
  out.forger.reset(forger);
  return Status::OK();
}

}  // namespace twice::blackbox

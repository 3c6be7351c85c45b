// engine/engine_url.h: an --engine-url (or black-box --db) never printed with
// its password, in a message or in what a client library says about it.
// Server-free (part of twice_tests): libpq's parser runs, nothing connects.
#include "engine/engine_url.h"

#include <libpq-fe.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "engine/mariadb_protocol.h"

namespace twice::engine {
namespace {

constexpr std::string_view kSecret = "TWICE-SECRET-4711";

bool shows(std::string_view text, std::string_view secret) { return text.find(secret) != std::string_view::npos; }

// What libpq says of `url` when it cannot read it; "" when it can.
std::string libpq_complaint(const std::string& url) {
  char* err = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &err);
  if (options) PQconninfoFree(options);
  std::string out = err ? err : "";
  if (err) PQfreemem(err);
  return out;
}

struct Shown {
  std::string url, message;
};

TEST(EngineUrlForMessage, NamesTheServerWithoutItsPassword) {
  const std::vector<Shown> cases = {
      {"postgresql://app:TWICE-SECRET-4711@db.internal:5433/pay", "postgresql://app@db.internal:5433/pay"},
      {"postgresql://app@db:5433/pay?sslmode=require&password=TWICE-SECRET-4711&application_name=x",
       "postgresql://app@db:5433/pay?sslmode=require&application_name=x"},
      {"host=db user=app password=TWICE-SECRET-4711 dbname=pay", "postgresql://?user=app&dbname=pay&host=db"},
      // libpq reads host "app" and port "TWICE" out of these: still a password as written.
      {"postgresql://app:TWICE/SECRET-4711@localhost/pay", "postgresql://app@localhost/pay"},
      // libpq cannot read it at all: as written, without it.
      {"postgresql://app:TWICE-SECRET-4711@[::1]x/pay", "postgresql://app@[::1]x/pay"},
      {"mysql://app:TWICE-SECRET-4711@db:3307/pay", "mysql://app@db:3307/pay"},
      {"mysql://app:TWICE%40SECRET-4711@db/pay", "mysql://app@db/pay"},
      // Not URLs Connector/C is given (an option twice does not take, a port that is not one).
      {"mysql://app:TWICE-SECRET-4711@db/pay?password=x", "mysql://app@db/pay"},
      {"mysql://app@db/pay?pass=TWICE-SECRET-4711", "mysql://app@db/pay"},
      {"mysql://app:TWICE/SECRET-4711@db/pay", "mysql://app@db/pay"},
      {"mysql://app:TWICE?SECRET-4711@db/pay", "mysql://app@db/pay"},
      // Neither engine's: a URL all the same.
      {"http://app:TWICE-SECRET-4711@db/pay?pwd=TWICE-SECRET-4711&x=1", "http://app@db/pay?x=1"},
      // Nothing to take out: as given.
      {"postgresql://app@db/pay", "postgresql://app@db/pay"},
      {"mysql://root@localhost?socket=/run/my sql/s", "mysql://root@localhost?socket=/run/my sql/s"},
      {"shop.sqlite", "shop.sqlite"},
  };
  for (const Shown& c : cases) EXPECT_EQ(engine_url_for_message(c.url), c.message) << c.url;
}

// libpq quotes a URI it cannot read whole, and reads a port out of a
// password written with '/' in it: the message keeps its sense, not the password.
TEST(WithoutUrlPasswords, MasksWhatLibpqSaysOfTheUrl) {
  const std::string bad_host = "postgresql://app:TWICE-SECRET-4711@[::1]x/pay";
  const std::string complaint = libpq_complaint(bad_host);
  ASSERT_TRUE(shows(complaint, kSecret)) << complaint;  // the echo this guards against
  EXPECT_EQ(without_url_passwords(complaint, bad_host),
            "unexpected character \"x\" at position 41 in URI (expected \":\" or \"/\"): \"postgresql://app@[::1]x/pay\"\n");

  const std::string slash = "postgresql://app:TWICE/SECRET-4711@localhost/pay";
  EXPECT_EQ(without_url_passwords("invalid integer value \"TWICE\" for connection option \"port\"", slash),
            "invalid integer value \"***\" for connection option \"port\"");

  const std::string encoded = "postgresql://app:TWICE%zzSECRET@db/pay";
  const std::string token = libpq_complaint(encoded);
  ASSERT_TRUE(shows(token, "TWICE%zzSECRET")) << token;
  EXPECT_FALSE(shows(without_url_passwords(token, encoded), "SECRET")) << token;

  // Decoded as the server's client would send it, and as a MariaDB URL's parser reads it.
  EXPECT_EQ(without_url_passwords("password TWICE@SECRET rejected", "mysql://app:TWICE%40SECRET@db/pay"),
            "password *** rejected");
  // A message about something else is left alone; a short password only where it stands whole.
  EXPECT_EQ(without_url_passwords("connection refused", "postgresql://app:pw@db/pay"), "connection refused");
  EXPECT_EQ(without_url_passwords("port pw, pwd", "postgresql://app:p/w@db/pay"), "port pw, pwd");
  EXPECT_EQ(without_password("Access denied for user 'app' (using password: YES)", ""),
            "Access denied for user 'app' (using password: YES)");
}

// A MariaDB URL's parse error says what is wrong without the URL, and a
// port read out of a password is masked by the caller.
TEST(WithoutUrlPasswords, MasksAPortReadOutOfAMariadbPassword) {
  const std::string url = "mysql://app:TWICE/SECRET-4711@db/pay";
  MariadbAddress at;
  std::string error;
  ASSERT_FALSE(parse_mariadb_url(url, at, error));
  EXPECT_EQ(error, "'TWICE' is not a port");
  EXPECT_EQ(without_url_passwords(error, url), "'***' is not a port");
}

// Any password, however it is written into a URL of either engine: neither
// the message form of the URL nor libpq's or the parser's complaint about it,
// once passed through here, shows it, or a part of it from "TWICE" or "4711".
RC_GTEST_PROP(EngineUrlPasswords, NoMessageShowsThePassword, ()) {
  // Unencoded characters a URL parser splits at, besides letters and digits.
  const std::string alphabet = "abcXYZ019@/:?#%!$*+,;-._~";
  const std::string middle = *rc::gen::container<std::string>(rc::gen::elementOf(alphabet));
  const std::string password = "TWICE" + middle + "4711";
  // In a query or key=value pairs, '&', '=' and blanks end a value: a password holding them is quoted or encoded.
  std::string quoted;
  for (const char c : password) quoted += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  const std::vector<std::string> urls = {
      "postgresql://app:" + password + "@db.internal:5433/pay",
      "postgres://app@db.internal/pay?sslmode=disable&password=" + password,
      "host=db.internal user=app password='" + quoted + "' dbname=pay",
      "mysql://app:" + password + "@db.internal:3307/pay",
      "mysql://app:" + password + "@/pay?socket=/run/mysqld/s",
      "mysql://app@db.internal/pay?pass=" + password,
  };
  const std::size_t form = *rc::gen::elementOf(std::vector<std::size_t>{0, 1, 2, 3, 4, 5});
  const std::string& url = urls[form];
  RC_TAG(form);
  const std::string shown = engine_url_for_message(url);
  RC_ASSERT_FALSE(shows(shown, password));
  RC_ASSERT_FALSE(shows(shown, "TWICE"));
  RC_ASSERT_FALSE(shows(shown, "4711"));
  // The server is still named.
  RC_ASSERT(shows(shown, "app"));
  RC_ASSERT(shows(shown, "pay"));

  MariadbAddress at;
  std::string error;
  const std::string complaint = url.starts_with("mysql://")
                                    ? (parse_mariadb_url(url, at, error) ? "" : error)
                                    : libpq_complaint(url);
  // Whatever a library says, with the URL and the password written into it too.
  const std::string text = complaint + " | " + url + " | " + password;
  const std::string masked = without_url_passwords(text, url);
  RC_ASSERT_FALSE(shows(masked, password));
  RC_ASSERT_FALSE(shows(masked, "TWICE"));
  RC_ASSERT_FALSE(shows(masked, "4711"));
}

}  // namespace
}  // namespace twice::engine

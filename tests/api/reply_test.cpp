// Reply::fail's body is JSON whatever its message says: a handler's message
// often quotes the values it compared.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "twice/notify.h"

namespace twice {
namespace {

TEST(Reply, FailBodyIsValidJsonWithTheMessageIntact) {
  for (const std::string& message : {std::string("amount \"12000\" != 300"), std::string("C:\\path"),
                                    std::string("two\nlines\tand a \x01 control"), std::string("FAIL")}) {
    const Reply r = Reply::fail(message);
    EXPECT_EQ(r.http_status, 500);
    nlohmann::json body;
    ASSERT_NO_THROW(body = nlohmann::json::parse(r.body)) << r.body;
    EXPECT_EQ(body["code"], "FAIL");
    EXPECT_EQ(body["message"], message);
  }
  // The bundled handlers' plain messages read as before.
  EXPECT_EQ(Reply::fail("bad signature").body, R"({"code":"FAIL","message":"bad signature"})");
}

}  // namespace
}  // namespace twice

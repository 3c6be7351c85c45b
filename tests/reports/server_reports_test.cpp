// Which server produced a server engine's verdicts, in every report: the
// JSON's servers, the header of the text, Markdown and HTML reports, JUnit's
// properties (hostile_matrix() checks the escaping, with the other untrusted
// text). A SQLite run's reports name no server, as before servers were named.
#include <gtest/gtest.h>

#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/junit_report.h"
#include "reports/markdown_report.h"
#include "reports/text_report.h"
#include "report_fixture.h"

namespace twice::reports {
namespace {

results::MatrixResult on_servers() {
  results::MatrixResult m = testing::plain_matrix();
  m.servers = {{"mariadb", "10.11.19-MariaDB-0+deb12u1", "", {{"innodb_snapshot_isolation", "OFF"}}},
               {"postgres", "15.14 (Debian 15.14-0+deb12u1)", "postgres://app@db/pay", {}}};
  return m;
}

TEST(ServerReports, EveryFormatNamesTheServerItsVerdictsCameFrom) {
  const results::MatrixResult m = on_servers();
  const nlohmann::json j = to_json(m);
  ASSERT_EQ(j["servers"].size(), 2u);
  EXPECT_EQ(j["servers"][0], nlohmann::json::parse(R"({"engine": "mariadb", "version": "10.11.19-MariaDB-0+deb12u1",
      "url": null, "settings": [{"name": "innodb_snapshot_isolation", "value": "OFF"}]})"));
  EXPECT_EQ(j["servers"][1]["url"], "postgres://app@db/pay");
  EXPECT_EQ(j["servers"][1]["settings"], nlohmann::json::array());

  const std::string text = render_text(m, TextOptions{});
  EXPECT_NE(text.find("base seed 1.\nmariadb server 10.11.19-MariaDB-0+deb12u1, innodb_snapshot_isolation=OFF, "
                      "started by twice.\npostgres server 15.14 (Debian 15.14-0+deb12u1), at postgres://app@db/pay.\n"),
            std::string::npos)
      << text;
  const std::string md = render_markdown(m);
  // In <code> with entity references, as a replay command (a leading digit would open a list).
  EXPECT_NE(md.find("Ran on the mariadb server <code>&#49;0.11.19-MariaDB-0+deb12u1</code>, "
                    "<code>innodb&#95;snapshot&#95;isolation=OFF</code>, started by twice\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Ran on the postgres server <code>&#49;5.14 (Debian 15.14-0+deb12u1)</code>, at "
                    "<code>postgres://app&#64;db/pay</code>\n"),
            std::string::npos)
      << md;
  const std::string html = render_html(m);
  EXPECT_NE(html.find("<p class=\"muted\">ran on the mariadb server <code>10.11.19-MariaDB-0+deb12u1</code>, "
                      "<code>innodb_snapshot_isolation=OFF</code>, started by twice</p>"),
            std::string::npos);
  const std::string junit = render_junit(m);
  EXPECT_NE(junit.find("<property name=\"server.mariadb\" value=\"10.11.19-MariaDB-0+deb12u1\"/>\n"
                       "      <property name=\"server.mariadb.innodb_snapshot_isolation\" value=\"OFF\"/>\n"
                       "      <property name=\"server.mariadb.url\" value=\"started by twice\"/>\n"
                       "      <property name=\"server.postgres\" value=\"15.14 (Debian 15.14-0+deb12u1)\"/>\n"
                       "      <property name=\"server.postgres.url\" value=\"postgres://app@db/pay\"/>\n"),
            std::string::npos)
      << junit;
}

TEST(ServerReports, ASqliteRunNamesNoServer) {
  const results::MatrixResult m = testing::plain_matrix();
  EXPECT_FALSE(to_json(m).contains("servers"));
  EXPECT_EQ(render_text(m, TextOptions{}).find(" server "), std::string::npos);
  EXPECT_EQ(render_markdown(m).find("Ran on"), std::string::npos);
  EXPECT_EQ(render_html(m).find("ran on"), std::string::npos);
  EXPECT_EQ(render_junit(m).find("server."), std::string::npos);
}

}  // namespace
}  // namespace twice::reports

// Each escaper against the hostile payload: what comes out is inert in its
// language, and nothing the reader needs is lost.
#include "reports/escape.h"

#include <gtest/gtest.h>

#include "report_fixture.h"

namespace twice::reports {
namespace {

using testing::kPayload;

TEST(Escape, RepairsInvalidUtf8AndShowsControlCharacters) {
  EXPECT_EQ(printable_utf8("a\x01z"), "a\\x01z");
  EXPECT_EQ(printable_utf8("a\x7fz"), "a\\x7fz");
  EXPECT_EQ(printable_utf8("tab\tand\nnewline stay"), "tab\tand\nnewline stay");
  EXPECT_EQ(printable_utf8("\xff"), "\xEF\xBF\xBD");            // a stray byte
  EXPECT_EQ(printable_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(printable_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(printable_utf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated
  EXPECT_EQ(printable_utf8("× → 😀"), "× → 😀");
}

TEST(Escape, HtmlLeavesNoMarkup) {
  EXPECT_EQ(html_escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  const std::string out = html_escape(kPayload);
  EXPECT_EQ(out.find('<'), std::string::npos);
  EXPECT_EQ(out.find('>'), std::string::npos);
  EXPECT_EQ(out.find('"'), std::string::npos);
}

TEST(Escape, XmlAttributesKeepNewlinesAsReferences) {
  EXPECT_EQ(xml_escape_attribute("a\"b'c<d>&\n\te"), "a&quot;b&apos;c&lt;d&gt;&amp;&#10;&#9;e");
  EXPECT_EQ(xml_escape_text("]]> <x> &"), "]]&gt; &lt;x&gt; &amp;");
}

TEST(Escape, CdataIsSplitAroundItsTerminator) {
  EXPECT_EQ(xml_cdata("plain"), "<![CDATA[plain]]>");
  EXPECT_EQ(xml_cdata("a]]>b"), "<![CDATA[a]]]]><![CDATA[>b]]>");
  EXPECT_EQ(xml_cdata("]]>]]>"), "<![CDATA[]]]]><![CDATA[>]]]]><![CDATA[>]]>");
  // Only the last "]]>" of the result closes the final section.
  const std::string out = xml_cdata(kPayload);
  const std::string inner = out.substr(9, out.size() - 12);
  EXPECT_EQ(inner.find("]]>"), inner.find("]]><![CDATA["));
}

TEST(Escape, MarkdownTextCannotBreakATableOrOpenMarkup) {
  std::string out = markdown_text(kPayload);
  EXPECT_NE(out.find("line1<br>line2"), std::string::npos);
  out.replace(out.find("<br>"), 4, " ");  // the one tag we write
  for (char ch : std::string("|<>`*_[]\\~$@\n")) EXPECT_EQ(out.find(ch), std::string::npos) << "found " << ch;
  EXPECT_EQ(markdown_text("a|b"), "a&#124;b");
  // A leading list or heading marker stays text after a bullet or quote marker.
  EXPECT_EQ(markdown_text("1. x"), "&#49;. x");
  EXPECT_EQ(markdown_text("- x"), "&#45; x");
  EXPECT_EQ(markdown_text("    x"), "&#32;   x");
  EXPECT_EQ(markdown_text("x - 1"), "x - 1");
  EXPECT_EQ(markdown_cell_code("x`y"), "<code>x&#96;y</code>");
}

TEST(Escape, MarkdownFencesOutlastTheContent) {
  EXPECT_EQ(markdown_code_block("echo hi", "sh"), "```sh\necho hi\n```\n");
  EXPECT_EQ(markdown_code_block("a ```` b"), "`````\na ```` b\n`````\n");
  EXPECT_EQ(markdown_code_span("a`b"), "``a`b``");
  EXPECT_EQ(markdown_code_span("`x`"), "`` `x` ``");
  EXPECT_EQ(markdown_code_span("two\nlines"), "`two lines`");
}

TEST(Escape, MermaidTextKeepsOnlyHarmlessCharacters) {
  EXPECT_EQ(mermaid_text("a;b#c"), "a#59;b#35;c");
  EXPECT_EQ(mermaid_text("x: y\nz"), "x#58; y z");
  EXPECT_EQ(mermaid_text(""), "#160;");
  const std::string out = mermaid_text(kPayload);
  EXPECT_EQ(out.find('\n'), std::string::npos);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(out[i]);
    if (ch == '#') {
      // Always an entity code: '#', digits, ';'.
      std::size_t j = i + 1;
      while (j < out.size() && std::isdigit(static_cast<unsigned char>(out[j]))) ++j;
      ASSERT_GT(j, i + 1) << out;
      ASSERT_LT(j, out.size());
      ASSERT_EQ(out[j], ';') << out;
      i = j;
      continue;
    }
    EXPECT_TRUE(std::isalnum(ch) || ch >= 0x80 || std::string(" ._'()=*/!?@$").find(static_cast<char>(ch)) != std::string::npos)
        << "unexpected '" << out[i] << "' in " << out;
  }
}

TEST(Escape, TruncationCutsWholeCodePoints) {
  EXPECT_EQ(truncate_utf8("short", 10), "short");
  EXPECT_EQ(truncate_utf8("exactly10!", 10), "exactly10!");
  EXPECT_EQ(truncate_utf8("abcdefghijk", 5), "abcd…");
  EXPECT_EQ(truncate_utf8("ééééé", 3), "éé…");
}

// C1 controls (U+009B is a terminal's CSI, as ESC [ is) and bidirectional
// overrides (U+202E shows "evil" as "live") are spelled out in every format,
// and the terminal's text is valid UTF-8 too; "×" (C3 97), whose second byte
// is in C1's range, is an ordinary character.
TEST(Escape, C1ControlsAndBidiOverridesAreSpelledOutEverywhere) {
  const std::string hostile = "O-\u009b31mRED\u009b0m-\u202eevil\u2066x\u2069 \xff\xfe × ok";
  EXPECT_EQ(terminal_text(hostile), "O-\\u009b31mRED\\u009b0m-\\u202eevil\\u2066x\\u2069 \uFFFD\uFFFD × ok");
  EXPECT_EQ(printable_utf8(hostile), "O-\\u009b31mRED\\u009b0m-\\u202eevil\\u2066x\\u2069 \uFFFD\uFFFD × ok");
  EXPECT_EQ(html_escape("\u202e<b>"), "\\u202e&lt;b&gt;");
  EXPECT_EQ(xml_escape_text("a\u0085b"), "a\\u0085b");
  EXPECT_EQ(markdown_text("\u202e").find("\u202e"), std::string::npos);
  EXPECT_EQ(terminal_text("plain × text"), "plain × text");
}

}  // namespace
}  // namespace twice::reports

// describe(): how a statement reads in a trace. The parameters are inlined by
// SQLite's own numbering (?NNN names slot NNN; a plain ? takes one more than
// the largest slot used so far), and a ? inside a string literal is text.
#include <gtest/gtest.h>

#include "env/statement_text.h"

namespace twice::env {
namespace {

TEST(StatementText, NumberedParameterIsReplacedWholeNotFollowedByItsDigits) {
  // The example: "?3" bound to 12000 read as "120003".
  EXPECT_EQ(describe("UPDATE orders SET amount = ?3 WHERE order_no = ?1 AND user_id = ?2",
                     {Value("T1"), Value("u1"), Value(12000)}),
            "UPDATE orders SET amount = 12000 WHERE order_no = 'T1' AND user_id = 'u1'");
}

TEST(StatementText, NumberedParameterUsedTwiceShowsTheSameValueTwice) {
  EXPECT_EQ(describe("SELECT ?1 + ?1, ?2", {Value(7), Value("x")}), "SELECT 7 + 7, 'x'");
}

TEST(StatementText, PlainParametersTakeTheNextSlots) {
  EXPECT_EQ(describe("INSERT INTO t VALUES (?, ?, ?)", {Value(1), Value(nullptr), Value("it's")}),
            "INSERT INTO t VALUES (1, NULL, 'it''s')");
}

TEST(StatementText, PlainParameterAfterNumberedOneFollowsTheLargestSlot) {
  // As SQLite numbers them: ?2 then ? is slot 3.
  EXPECT_EQ(describe("SELECT ?2, ?", {Value(1), Value(2), Value(3)}), "SELECT 2, 3");
}

TEST(StatementText, QuestionMarkInsideStringLiteralIsLeftAlone) {
  EXPECT_EQ(describe("SELECT 'why?1', ?1, 'it''s ?', ?", {Value(5), Value(6)}),
            "SELECT 'why?1', 5, 'it''s ?', 6");
}

TEST(StatementText, ParameterWithoutValueIsShownAsWritten) {
  EXPECT_EQ(describe("SELECT ?1, ?4", {Value(1)}), "SELECT 1, ?4");
  EXPECT_EQ(describe("SELECT ?, ?", {Value(1)}), "SELECT 1, ?");
}

}  // namespace
}  // namespace twice::env

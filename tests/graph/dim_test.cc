#include "graph/dim.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "graph/test_util.h"

namespace maxc {
namespace {

using testing::expect_error;

TEST(Dim, Kinds) {
  EXPECT_TRUE(Dim(7).is_static());
  EXPECT_EQ(Dim(7).static_value(), 7);
  EXPECT_EQ(Dim(0).static_value(), 0);
  EXPECT_TRUE(Dim("batch").is_symbolic());
  EXPECT_EQ(Dim("batch").symbol(), "batch");
  EXPECT_EQ((Dim("batch") + 1).kind(), Dim::Kind::kAlgebraic);
  EXPECT_EQ((Dim("a") * Dim("b")).kind(), Dim::Kind::kAlgebraic);
  // Algebra that cancels lands back on the simpler kinds.
  EXPECT_TRUE((Dim("x") - Dim("x")).is_static());
  EXPECT_TRUE((Dim("x") + 1 - 1).is_symbolic());
}

TEST(Dim, StaticFolding) {
  EXPECT_EQ(Dim(3) + Dim(4), Dim(7));
  EXPECT_EQ(Dim(3) * Dim(4), Dim(12));
  EXPECT_EQ(Dim(3) - Dim(4), Dim(-1));
  EXPECT_EQ(floordiv(Dim(7), Dim(2)), Dim(3));
  EXPECT_EQ(floordiv(Dim(-7), Dim(2)), Dim(-4));  // Python's floor, not C's truncation
  EXPECT_EQ(floordiv(Dim(7), Dim(-2)), Dim(-4));
}

TEST(Dim, CanonicalForm) {
  Dim x("x"), y("y"), b("batch");
  EXPECT_EQ(-(x + 4), -x - 4);
  EXPECT_EQ(b * 5, 5 * b);
  EXPECT_EQ(x + y, y + x);
  EXPECT_EQ(x * y, y * x);
  EXPECT_EQ((x + 1) * (x + 1), x * x + 2 * x + 1);
  EXPECT_EQ((x + y) * 2 - y, 2 * x + y);
  EXPECT_EQ(x * 0, Dim(0));
  EXPECT_NE(x, y);
  EXPECT_NE(x + 1, x);
  EXPECT_NE(x * x, x * 2);
}

TEST(Dim, Printing) {
  Dim x("x"), b("batch");
  EXPECT_EQ((b * 5).to_string(), "batch * 5");
  EXPECT_EQ((b + 1).to_string(), "batch + 1");
  EXPECT_EQ((-x - 4).to_string(), "-x - 4");
  EXPECT_EQ((-(x + 4)).to_string(), "-x - 4");
  EXPECT_EQ((x * Dim("y")).to_string(), "x * y");
  EXPECT_EQ((x - b * 3).to_string(), "-batch * 3 + x");  // terms in symbol order
  EXPECT_EQ((b - x).to_string(), "batch - x");
  EXPECT_EQ((x * x).to_string(), "x * x");
  EXPECT_EQ(Dim(-3).to_string(), "-3");
  EXPECT_EQ(Dim(0).to_string(), "0");
  EXPECT_EQ(dims_to_string({b, 10}), "[batch, 10]");
  EXPECT_EQ(dims_to_string({}), "[]");
}

TEST(Dim, FloorDivision) {
  Dim x("x"), y("y");
  EXPECT_EQ(floordiv(x * 4, 2), x * 2);
  EXPECT_EQ(floordiv(x, x), Dim(1));
  EXPECT_EQ(floordiv(x * y * 6, x * 3), y * 2);
  EXPECT_EQ(floordiv(x, 1), x);
  EXPECT_EQ(floordiv(Dim(0), x), Dim(0));
  // floor((2x + 1) / 2) == x for every integer x: the divisible part leaves the division.
  EXPECT_EQ(floordiv(2 * x + 1, 2), x);
  EXPECT_EQ(floordiv(2 * x + y, 2), x + floordiv(y, 2));
  // What does not divide stays an opaque term, and floor semantics keep (x // 2) * 2 != x.
  Dim half = floordiv(x, 2);
  EXPECT_EQ(half.kind(), Dim::Kind::kAlgebraic);
  EXPECT_EQ(half, floordiv(x, 2));
  EXPECT_NE(half * 2, x);
  EXPECT_EQ(half.to_string(), "x // 2");
  EXPECT_EQ(floordiv(x + 1, 2).to_string(), "(x + 1) // 2");
  EXPECT_EQ((floordiv(x, 2) * 3).to_string(), "(x // 2) * 3");
  EXPECT_EQ(floordiv(x, y).to_string(), "x // y");
  EXPECT_EQ(floordiv(x + y, x + y), Dim(1));
  EXPECT_EQ(floordiv(x + 1, x + y).to_string(), "(x + 1) // (x + y)");
  // -(x // 2) and (-x) // 2 differ (floor), and so do their printed forms.
  EXPECT_EQ((-floordiv(x, 2)).to_string(), "-(x // 2)");
  EXPECT_EQ(floordiv(-x, 2).to_string(), "(-x) // 2");
  EXPECT_EQ((y - floordiv(x, 2)).to_string(), "y - x // 2");  // symbols sort before divisions
  EXPECT_EQ(floordiv(-x, 2).evaluate({{"x", 3}}), -2);
  EXPECT_EQ((-floordiv(x, 2)).evaluate({{"x", 3}}), -1);
}

TEST(Dim, DivisionByZeroIsAnError) {
  expect_error([] { floordiv(Dim("x"), Dim(0)); }, Code::kInvalidArgument, {"'x'", "divided by zero"});
}

TEST(Dim, OverflowIsAnError) {
  expect_error([] { Dim(INT64_MAX) + Dim(1); }, Code::kInvalidArgument, {"overflows int64"});
  expect_error([] { Dim(INT64_MAX) * Dim(2); }, Code::kInvalidArgument, {"overflows int64"});
}

TEST(Dim, SymbolNamesAreIdentifiers) {
  EXPECT_NO_THROW(Dim("seq_len2"));
  EXPECT_NO_THROW(Dim("_b"));
  expect_error([] { Dim(""); }, Code::kInvalidArgument, {"''", "not an identifier"});
  expect_error([] { Dim("2x"); }, Code::kInvalidArgument, {"'2x'"});
  expect_error([] { Dim("a b"); }, Code::kInvalidArgument, {"'a b'"});
}

TEST(Dim, Symbols) {
  Dim d = Dim("b") * Dim("a") + floordiv(Dim("c"), Dim("d")) + 3;
  EXPECT_EQ(d.symbols(), (std::set<std::string>{"a", "b", "c", "d"}));
  EXPECT_TRUE(Dim(4).symbols().empty());
}

TEST(Dim, Evaluate) {
  Dim d = Dim("b") * 5 - floordiv(Dim("s") + 1, 2);
  EXPECT_EQ(d.evaluate({{"b", 3}, {"s", 4}}), 15 - 2);
  expect_error([&] { d.evaluate({{"b", 3}}); }, Code::kNotFound, {"'s'"});
  expect_error([] { floordiv(Dim("a"), Dim("z")).evaluate({{"a", 1}, {"z", 0}}); }, Code::kInvalidArgument,
               {"divides by zero"});
}

TEST(Dim, ParseReadsWhatPrints) {
  Dim x("x"), y("y");
  for (const Dim& d : {Dim(0), Dim(-3), x, x * 5, -x - 4, x * y + 2 * x - 7, floordiv(x + 1, 2) * 3,
                       floordiv(x + 1, x + y), floordiv(floordiv(x, 2), 3), x * x * y, -floordiv(x, 2),
                       floordiv(-x, 2), y - floordiv(x, 2) * 3}) {
    EXPECT_EQ(Dim::parse(d.to_string()), d) << d.to_string();
  }
  EXPECT_EQ(Dim::parse(" 2 * (batch + 1) "), 2 * Dim("batch") + 2);
  EXPECT_EQ(Dim::parse("-(x + 4)"), -x - 4);
}

TEST(Dim, ParseErrorsNameTheText) {
  expect_error([] { Dim::parse("x +"); }, Code::kInvalidArgument, {"'x +'", "expected a number, a name or '('"});
  expect_error([] { Dim::parse("(x"); }, Code::kInvalidArgument, {"expected ')'"});
  expect_error([] { Dim::parse("x / 2"); }, Code::kInvalidArgument, {"unexpected '/'"});
  expect_error([] { Dim::parse("3x"); }, Code::kInvalidArgument, {"malformed number '3x'"});
  expect_error([] { Dim::parse("99999999999999999999"); }, Code::kInvalidArgument, {"overflows"});
}

TEST(Dim, HashAgreesWithEquality) {
  Dim x("x");
  EXPECT_EQ(std::hash<Dim>{}(-(x + 4)), std::hash<Dim>{}(-x - 4));
  std::unordered_set<Dim> set{x * 5, 5 * x, Dim(5), Dim("y")};
  EXPECT_EQ(set.size(), 3u);
}

TEST(Dim, Ordering) {
  // A total order (used to sort atoms); equal dims compare equal.
  EXPECT_EQ(Dim("x") <=> Dim("x"), std::strong_ordering::equal);
  EXPECT_NE(Dim("x") <=> Dim("y"), std::strong_ordering::equal);
}

TEST(Dim, Product) {
  EXPECT_EQ(dims_product({}), Dim(1));
  EXPECT_EQ(dims_product({Dim("b"), 3, 4}), Dim("b") * 12);
}

}  // namespace
}  // namespace maxc

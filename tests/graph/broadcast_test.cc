#include "graph/broadcast.h"

#include <gtest/gtest.h>

#include "graph/test_util.h"

namespace maxc {
namespace {

using testing::expect_error;
using testing::infer1;
using testing::tensor;

std::vector<Dim> add_shape(std::vector<Dim> a, std::vector<Dim> b) {
  return infer1("add", {tensor(DType::kFloat32, a), tensor(DType::kFloat32, b)}).dims;
}

TEST(Broadcast, Dim) {
  EXPECT_EQ(broadcast_dim(3, 3), Dim(3));
  EXPECT_EQ(broadcast_dim(1, 3), Dim(3));
  EXPECT_EQ(broadcast_dim(3, 1), Dim(3));
  EXPECT_EQ(broadcast_dim("b", "b"), Dim("b"));
  EXPECT_EQ(broadcast_dim(1, "b"), Dim("b"));
  EXPECT_EQ(broadcast_dim(Dim("b") * 2, 2 * Dim("b")), Dim("b") * 2);
  EXPECT_FALSE(broadcast_dim(2, 3).has_value());
  EXPECT_FALSE(broadcast_dim("a", "b").has_value());
  EXPECT_FALSE(broadcast_dim("b", 4).has_value());
}

TEST(Broadcast, Shapes) {
  EXPECT_EQ(add_shape({2, 3}, {2, 3}), (std::vector<Dim>{2, 3}));
  EXPECT_EQ(add_shape({2, 1}, {1, 3}), (std::vector<Dim>{2, 3}));
  EXPECT_EQ(add_shape({4, 2, 3}, {3}), (std::vector<Dim>{4, 2, 3}));
  EXPECT_EQ(add_shape({}, {5, 1}), (std::vector<Dim>{5, 1}));
  EXPECT_EQ(add_shape({"batch", 1, 8}, {"seq", 1}), (std::vector<Dim>{"batch", "seq", 8}));
  EXPECT_EQ(add_shape({Dim("n") + 1, 4}, {Dim("n") + 1, 1}), (std::vector<Dim>{Dim("n") + 1, 4}));
  EXPECT_EQ(add_shape({0, 3}, {1, 3}), (std::vector<Dim>{0, 3}));
}

TEST(Broadcast, StaticConflictNamesBothInputsAndTheAxis) {
  expect_error([] { add_shape({"batch", 3}, {4}); }, Code::kInvalidArgument,
               {"op 'add'", "input 0 'lhs' [batch, 3]", "input 1 'rhs' [4]", "axis -1 is 3 vs 4"});
}

TEST(Broadcast, DistinctSymbolsConflict) {
  expect_error([] { add_shape({"batch", 3}, {"seq", 3}); }, Code::kInvalidArgument,
               {"op 'add'", "axis -2 is batch vs seq"});
}

TEST(Broadcast, ThreeWayNamesTheInputThatSetTheDim) {
  // condition [4, 1] sets axis -2 to 4; x [1, 3] does not; y [5, 3] conflicts with the condition.
  expect_error(
      [] {
        infer1("where", {tensor(DType::kBool, {4, 1}), tensor(DType::kInt32, {1, 3}), tensor(DType::kInt32, {5, 3})});
      },
      Code::kInvalidArgument, {"op 'where'", "input 0 'condition' [4, 1]", "input 2 'y' [5, 3]", "4 vs 5"});
}

}  // namespace
}  // namespace maxc

// Type inference of matmul, outer and band_part.
#include <gtest/gtest.h>

#include "graph/op_test_util.h"

namespace maxc {
namespace {

using testing::expect_error;
using testing::infer1;
using testing::tensor;
using D = DType;

TensorType f32(std::vector<Dim> dims) { return tensor(D::kFloat32, std::move(dims)); }

TEST(Matmul, MatricesAndBatches) {
  EXPECT_EQ(infer1("matmul", {f32({2, 3}), f32({3, 4})}), f32({2, 4}));
  EXPECT_EQ(infer1("matmul", {f32({"b", "m", "k"}), f32({"k", "n"})}), f32({"b", "m", "n"}));
  EXPECT_EQ(infer1("matmul", {f32({"b", 1, 5, 8}), f32({6, 8, 2})}), f32({"b", 6, 5, 2}));
  EXPECT_EQ(infer1("matmul", {f32({"s", Dim("h") * 64}), f32({Dim("h") * 64, Dim("h") * 3})}),
            f32({"s", Dim("h") * 3}));
}

TEST(Matmul, VectorsLikeNumpy) {
  EXPECT_EQ(infer1("matmul", {f32({"k"}), f32({"k", "n"})}), f32({"n"}));
  EXPECT_EQ(infer1("matmul", {f32({"b", "m", "k"}), f32({"k"})}), f32({"b", "m"}));
  EXPECT_EQ(infer1("matmul", {f32({7}), f32({7})}), f32({}));
  EXPECT_EQ(infer1("matmul", {f32({7}), f32({"b", 7, 3})}), f32({"b", 3}));
}

TEST(Matmul, Errors) {
  expect_error([] { infer1("matmul", {f32({2, 3}), f32({4, 5})}); }, Code::kInvalidArgument,
               {"op 'matmul'", "inner dims differ", "input 0 'lhs' [2, 3] has K = 3", "input 1 'rhs' [4, 5] has K = 4"});
  expect_error([] { infer1("matmul", {f32({"m", "k"}), f32({"j", "n"})}); }, Code::kInvalidArgument,
               {"op 'matmul'", "K = k", "K = j"});
  expect_error([] { infer1("matmul", {f32({2, 4, 3}), f32({5, 3, 1})}); }, Code::kInvalidArgument,
               {"op 'matmul'", "batch dims of input 0 'lhs' [2]", "batch dims of input 1 'rhs' [5]"});
  expect_error([] { infer1("matmul", {f32({2, 3}), tensor(D::kFloat16, {3, 4})}); }, Code::kInvalidArgument,
               {"op 'matmul'", "input 1 'rhs' has dtype float16", "must match"});
  expect_error([] { infer1("matmul", {f32({}), f32({3})}); }, Code::kInvalidArgument,
               {"op 'matmul'", "input 0 'lhs' must have rank >= 1, got rank 0"});
  expect_error([] { infer1("matmul", {tensor(D::kBool, {2, 2}), tensor(D::kBool, {2, 2})}); }, Code::kInvalidArgument,
               {"op 'matmul'", "input 0 'lhs' must have a numeric"});
}

TEST(Outer, FlattensBothSides) {
  EXPECT_EQ(infer1("outer", {f32({3}), f32({4})}), f32({3, 4}));
  EXPECT_EQ(infer1("outer", {f32({"a", 2}), f32({"b"})}), f32({Dim("a") * 2, "b"}));
  expect_error([] { infer1("outer", {f32({3}), tensor(D::kInt32, {3})}); }, Code::kInvalidArgument,
               {"op 'outer'", "input 1 'rhs' has dtype int32"});
}

TEST(BandPart, KeepsTheType) {
  TensorType x = tensor(D::kBool, {"b", "s", "s"});
  EXPECT_EQ(infer1("band_part", {x}), x);
  EXPECT_EQ(infer1("band_part", {x}, Attrs{{"num_lower", int64_t{0}}, {"num_upper", int64_t{2}}, {"exclude", true}}), x);
  expect_error([] { infer1("band_part", {f32({4})}); }, Code::kInvalidArgument,
               {"op 'band_part'", "input 0 'x' must have rank >= 2, got rank 1 [4]"});
  expect_error([&] { infer1("band_part", {x}, Attrs{{"num_upper", int64_t{-1}}}); }, Code::kInvalidArgument,
               {"op 'band_part'", "attribute 'num_upper' is -1"});
}

}  // namespace
}  // namespace maxc

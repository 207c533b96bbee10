// Type inference of the elementwise families: unary, binary, comparison, logical, where,
// cast and clamp, on static, symbolic and algebraic dims, and their error messages.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/test_util.h"

namespace maxc {
namespace {

using testing::expect_error;
using testing::infer1;
using testing::tensor;
using D = DType;

// One shape of each kind of dim: static, symbolic, algebraic.
std::vector<std::vector<Dim>> shapes() {
  return {{2, 3}, {"batch", 8}, {Dim("batch") * 2, Dim("seq") + 1, floordiv(Dim("n"), 4)}, {}};
}

const char* const kFloatUnary[] = {"acos", "atanh", "cos",  "erf",     "exp", "log", "log1p",
                                   "rsqrt", "sigmoid", "silu", "sin", "sqrt", "tanh", "gelu"};
const char* const kNumericUnary[] = {"abs", "negate", "relu", "floor", "round", "trunc"};

TEST(UnaryOps, KeepTheInputType) {
  for (const auto& dims : shapes()) {
    for (D dtype : {D::kFloat32, D::kBFloat16, D::kFloat64}) {
      TensorType x = tensor(dtype, dims, DeviceRef::gpu(1));
      for (const char* op : kFloatUnary) EXPECT_EQ(infer1(op, {x}), x) << op;
      for (const char* op : kNumericUnary) EXPECT_EQ(infer1(op, {x}), x) << op;
    }
    TensorType i = tensor(D::kInt32, dims);
    for (const char* op : kNumericUnary) EXPECT_EQ(infer1(op, {i}), i) << op;
  }
}

TEST(UnaryOps, FloatOnlyOpsRejectIntegers) {
  for (const char* op : kFloatUnary) {
    expect_error([&] { infer1(op, {tensor(D::kInt32, {2})}); }, Code::kInvalidArgument,
                 {std::string("op '") + op + "'", "input 0 'x' must have a float dtype, got int32"});
  }
  expect_error([] { infer1("abs", {tensor(D::kBool, {2})}); }, Code::kInvalidArgument,
               {"op 'abs'", "input 0 'x'", "numeric", "got bool"});
}

TEST(UnaryOps, GeluApproximation) {
  TensorType x = tensor(D::kFloat16, {"b"});
  for (const char* mode : {"none", "tanh", "quick"})
    EXPECT_EQ(infer1("gelu", {x}, Attrs{{"approximate", std::string(mode)}}), x);
  expect_error([&] { infer1("gelu", {x}, Attrs{{"approximate", std::string("fast")}}); }, Code::kInvalidArgument,
               {"op 'gelu'", "attribute 'approximate' is \"fast\"", "\"none\", \"tanh\" or \"quick\""});
}

TEST(BinaryOps, BroadcastAndPromote) {
  for (const char* op : {"add", "sub", "mul", "mod", "pow", "max", "min"}) {
    for (const auto& dims : shapes()) {
      TensorType a = tensor(D::kFloat32, dims);
      EXPECT_EQ(infer1(op, {a, a}), a) << op;
    }
    EXPECT_EQ(infer1(op, {tensor(D::kInt8, {"b", 1}), tensor(D::kUInt8, {4})}), tensor(D::kInt16, {"b", 4})) << op;
    EXPECT_EQ(infer1(op, {tensor(D::kInt64, {}), tensor(D::kFloat16, {Dim("s") * 2})}),
              tensor(D::kFloat16, {Dim("s") * 2}))
        << op;
  }
}

TEST(BinaryOps, DivIsTrueDivision) {
  EXPECT_EQ(infer1("div", {tensor(D::kInt32, {3}), tensor(D::kInt32, {3})}).dtype, D::kFloat32);
  EXPECT_EQ(infer1("div", {tensor(D::kUInt8, {3}), tensor(D::kInt64, {3})}).dtype, D::kFloat32);
  EXPECT_EQ(infer1("div", {tensor(D::kInt32, {3}), tensor(D::kFloat64, {3})}).dtype, D::kFloat64);
  EXPECT_EQ(infer1("div", {tensor(D::kBFloat16, {"b", 3}), tensor(D::kBFloat16, {3})}),
            tensor(D::kBFloat16, {"b", 3}));
}

TEST(BinaryOps, Errors) {
  expect_error([] { infer1("add", {tensor(D::kBool, {3}), tensor(D::kInt32, {3})}); }, Code::kInvalidArgument,
               {"op 'add'", "input 0 'lhs'", "got bool"});
  expect_error([] { infer1("mul", {tensor(D::kFloat32, {3}), tensor(D::kFloat32, {3}, DeviceRef::gpu())}); },
               Code::kInvalidArgument, {"op 'mul'", "input 1 'rhs' is on gpu:0", "input 0 'lhs' is on cpu:0"});
  expect_error([] { infer1("sub", {tensor(D::kFloat32, {"a"}), tensor(D::kFloat32, {"b"})}); },
               Code::kInvalidArgument, {"op 'sub'", "input 0 'lhs' [a]", "input 1 'rhs' [b]", "a vs b"});
}

TEST(BinaryOps, MaxMinWithOneInputReduce) {
  Attrs axis0{{"axis", int64_t{0}}};
  EXPECT_EQ(infer1("max", {tensor(D::kFloat32, {"b", 5})}), tensor(D::kFloat32, {"b", 1}));  // axis -1
  EXPECT_EQ(infer1("min", {tensor(D::kInt32, {"b", 5})}, axis0), tensor(D::kInt32, {1, 5}));
  expect_error([] { infer1("max", {tensor(D::kFloat32, {2, 5})}, Attrs{{"axis", int64_t{2}}}); },
               Code::kInvalidArgument, {"op 'max'", "attribute 'axis' is 2", "rank 2", "-2 to 1"});
  expect_error([] { infer1("max", {tensor(D::kFloat32, {})}); }, Code::kInvalidArgument,
               {"op 'max'", "rank 0"});
}

TEST(ComparisonOps, GiveBool) {
  for (const char* op : {"equal", "not_equal", "greater", "greater_equal", "less", "less_equal"}) {
    for (const auto& dims : shapes()) {
      EXPECT_EQ(infer1(op, {tensor(D::kFloat32, dims), tensor(D::kFloat32, dims)}), tensor(D::kBool, dims)) << op;
    }
    EXPECT_EQ(infer1(op, {tensor(D::kInt8, {"b", 1}), tensor(D::kFloat16, {3})}), tensor(D::kBool, {"b", 3})) << op;
    EXPECT_EQ(infer1(op, {tensor(D::kBool, {2}), tensor(D::kBool, {2})}), tensor(D::kBool, {2})) << op;
    expect_error([&] { infer1(op, {tensor(D::kUInt64, {2}), tensor(D::kInt64, {2})}); }, Code::kInvalidArgument,
                 {std::string("op '") + op + "'", "no common dtype"});
  }
}

TEST(LogicalOps, TakeBool) {
  for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
    EXPECT_EQ(infer1(op, {tensor(D::kBool, {"b", 1}), tensor(D::kBool, {Dim("s") + 1})}),
              tensor(D::kBool, {"b", Dim("s") + 1}));
    expect_error([&] { infer1(op, {tensor(D::kBool, {2}), tensor(D::kInt32, {2})}); }, Code::kInvalidArgument,
                 {std::string("op '") + op + "'", "input 1 'rhs' must have a bool dtype, got int32"});
  }
  EXPECT_EQ(infer1("logical_not", {tensor(D::kBool, {"b"})}), tensor(D::kBool, {"b"}));
  expect_error([] { infer1("logical_not", {tensor(D::kFloat32, {2})}); }, Code::kInvalidArgument,
               {"op 'logical_not'", "input 0 'x' must have a bool dtype"});
}

TEST(LogicalOps, FloatPredicates) {
  for (const char* op : {"is_inf", "is_nan"}) {
    EXPECT_EQ(infer1(op, {tensor(D::kFloat16, {"b", 2}, DeviceRef::gpu())}), tensor(D::kBool, {"b", 2}, DeviceRef::gpu()));
    expect_error([&] { infer1(op, {tensor(D::kInt32, {2})}); }, Code::kInvalidArgument,
                 {std::string("op '") + op + "'", "input 0 'x' must have a float dtype"});
  }
}

TEST(Where, BroadcastsThreeWaysAndPromotesXY) {
  EXPECT_EQ(infer1("where", {tensor(D::kBool, {"b", 1, 1}), tensor(D::kFloat32, {4, 1}), tensor(D::kFloat16, {5})}),
            tensor(D::kFloat32, {"b", 4, 5}));
  EXPECT_EQ(infer1("where", {tensor(D::kBool, {}), tensor(D::kInt8, {}), tensor(D::kUInt8, {})}), tensor(D::kInt16, {}));
  expect_error([] { infer1("where", {tensor(D::kInt32, {2}), tensor(D::kFloat32, {2}), tensor(D::kFloat32, {2})}); },
               Code::kInvalidArgument, {"op 'where'", "input 0 'condition' must have a bool dtype, got int32"});
  expect_error(
      [] { infer1("where", {tensor(D::kBool, {2}), tensor(D::kFloat32, {2}), tensor(D::kFloat32, {2}, DeviceRef::gpu())}); },
      Code::kInvalidArgument, {"op 'where'", "input 2 'y' is on gpu:0"});
}

TEST(Cast, ChangesOnlyTheDtype) {
  for (const auto& dims : shapes()) {
    EXPECT_EQ(infer1("cast", {tensor(D::kFloat32, dims)}, Attrs{{"dtype", D::kInt8}}), tensor(D::kInt8, dims));
  }
  expect_error([] { infer1("cast", {tensor(D::kFloat32, {2})}, Attrs{{"dtype", static_cast<D>(3)}}); },
               Code::kInvalidArgument, {"op 'cast'", "attribute 'dtype'", "unknown dtype code 3"});
}

TEST(Clamp, BoundsAreOptional) {
  TensorType x = tensor(D::kInt32, {"b", Dim("b") + 1});
  EXPECT_EQ(infer1("clamp", {x}), x);
  EXPECT_EQ(infer1("clamp", {x}, Attrs{{"min", 0.0}}), x);
  EXPECT_EQ(infer1("clamp", {x}, Attrs{{"min", -1.0}, {"max", 6.0}}), x);
  expect_error([&] { infer1("clamp", {x}, Attrs{{"min", 2.0}, {"max", 1.0}}); }, Code::kInvalidArgument,
               {"op 'clamp'", "attribute 'min' (2) is greater than attribute 'max' (1)"});
  expect_error([&] { infer1("clamp", {x}, Attrs{{"max", std::nan("")}}); }, Code::kInvalidArgument,
               {"op 'clamp'", "attribute 'max' is NaN"});
  expect_error([] { infer1("clamp", {tensor(D::kBool, {2})}); }, Code::kInvalidArgument,
               {"op 'clamp'", "input 0 'x'"});
}

}  // namespace
}  // namespace maxc

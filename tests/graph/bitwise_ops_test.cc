// Type inference of the bitwise extras: bitwise_and/or/xor/not and bitcast, and their errors.
#include <gtest/gtest.h>

#include "graph/test_util.h"

namespace maxc {
namespace {

using testing::expect_error;
using testing::infer1;
using testing::tensor;
using D = DType;

const char* const kBinary[] = {"bitwise_and", "bitwise_or", "bitwise_xor"};

TEST(BitwiseOps, BroadcastIntegersAndBools) {
  for (const char* op : kBinary) {
    for (D dtype : {D::kInt8, D::kUInt8, D::kInt16, D::kInt32, D::kUInt32, D::kInt64, D::kUInt64, D::kBool}) {
      EXPECT_EQ(infer1(op, {tensor(dtype, {"b", 1}), tensor(dtype, {Dim("s") + 1})}),
                tensor(dtype, {"b", Dim("s") + 1}))
          << op;
      EXPECT_EQ(infer1(op, {tensor(dtype, {}, DeviceRef::gpu()), tensor(dtype, {3}, DeviceRef::gpu())}),
                tensor(dtype, {3}, DeviceRef::gpu()))
          << op;
    }
  }
}

TEST(BitwiseOps, BinaryErrors) {
  for (const char* op : kBinary) {
    const std::string name = std::string("op '") + op + "'";
    // No promotion: widening a signed operand would change which bits the other one meets.
    expect_error([&] { infer1(op, {tensor(D::kInt32, {2}), tensor(D::kInt64, {2})}); }, Code::kInvalidArgument,
                 {name, "input 1 'rhs' has dtype int64 but input 0 'lhs' has int32"});
    expect_error([&] { infer1(op, {tensor(D::kFloat32, {2}), tensor(D::kFloat32, {2})}); }, Code::kInvalidArgument,
                 {name, "input 0 'lhs' must have an integer or bool dtype, got float32"});
    expect_error([&] { infer1(op, {tensor(D::kInt8, {2}), tensor(D::kInt8, {3})}); }, Code::kInvalidArgument, {name});
    expect_error([&] { infer1(op, {tensor(D::kInt8, {2}), tensor(D::kInt8, {2}, DeviceRef::gpu())}); },
                 Code::kInvalidArgument, {name, "input 1 'rhs' is on gpu:0"});
  }
}

TEST(BitwiseOps, NotTakesIntegersOnly) {
  for (D dtype : {D::kInt8, D::kUInt16, D::kInt64, D::kUInt64})
    EXPECT_EQ(infer1("bitwise_not", {tensor(dtype, {"b", 3})}), tensor(dtype, {"b", 3}));
  expect_error([] { infer1("bitwise_not", {tensor(D::kBool, {2})}); }, Code::kInvalidArgument,
               {"op 'bitwise_not'", "input 0 'x' is bool", "logical_not"});
  expect_error([] { infer1("bitwise_not", {tensor(D::kFloat16, {2})}); }, Code::kInvalidArgument,
               {"op 'bitwise_not'", "must have an integer dtype, got float16"});
}

TEST(Bitcast, ChangesTheDtypeAmongEqualWidths) {
  const std::pair<D, D> same_width[] = {{D::kFloat32, D::kInt32}, {D::kInt32, D::kFloat32}, {D::kFloat64, D::kInt64},
                                        {D::kBool, D::kUInt8},    {D::kInt8, D::kUInt8},    {D::kBFloat16, D::kFloat16},
                                        {D::kFloat8E4M3Fn, D::kInt8}, {D::kUInt64, D::kUInt64}};
  for (auto [from, to] : same_width) {
    const TensorType x = tensor(from, {"b", Dim("s") * 2}, DeviceRef::gpu());
    EXPECT_EQ(infer1("bitcast", {x}, Attrs{{"dtype", to}}), tensor(to, {"b", Dim("s") * 2}, DeviceRef::gpu()))
        << dtype_name(from) << " -> " << dtype_name(to);
  }
}

TEST(Bitcast, Errors) {
  expect_error([] { infer1("bitcast", {tensor(D::kFloat32, {2})}, Attrs{{"dtype", D::kInt64}}); },
               Code::kInvalidArgument, {"op 'bitcast'", "float32 (4 bytes)", "int64 (8 bytes)", "widths must match"});
  expect_error([] { infer1("bitcast", {tensor(D::kBool, {2})}, Attrs{{"dtype", D::kInt16}}); },
               Code::kInvalidArgument, {"op 'bitcast'", "bool", "int16"});
  expect_error([] { infer1("bitcast", {tensor(D::kUInt8, {2})}, Attrs{{"dtype", D::kFloat4E2M1Fn}}); },
               Code::kInvalidArgument, {"op 'bitcast'", "uint8 to float4_e2m1fn", "smaller than a byte"});
  expect_error([] { infer1("bitcast", {tensor(D::kFloat4E2M1Fn, {2})}, Attrs{{"dtype", D::kFloat4E2M1Fn}}); },
               Code::kInvalidArgument, {"op 'bitcast'", "smaller than a byte"});
  expect_error([] { infer1("bitcast", {tensor(D::kInt8, {2})}); }, Code::kInvalidArgument, {"op 'bitcast'", "dtype"});
}

}  // namespace
}  // namespace maxc

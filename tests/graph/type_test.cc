#include "graph/type.h"

#include <gtest/gtest.h>

#include "graph/constant.h"
#include "graph/test_util.h"

namespace maxc {
namespace {

using testing::expect_error;
using testing::tensor;

TEST(DeviceRef, Prints) {
  EXPECT_EQ(DeviceRef::cpu().to_string(), "cpu:0");
  EXPECT_EQ(DeviceRef::gpu(1).to_string(), "gpu:1");
  EXPECT_NE(DeviceRef::cpu(), DeviceRef::gpu());
}

TEST(TensorType, PrintsLikeMax) {
  EXPECT_EQ(tensor(DType::kFloat32, {"batch", 10}).to_string(), "tensor<[batch, 10], float32, cpu:0>");
  EXPECT_EQ(tensor(DType::kInt64, {}, DeviceRef::gpu(0)).to_string(), "tensor<[], int64, gpu:0>");
  TensorType buffer = tensor(DType::kBool, {2});
  buffer.is_buffer = true;
  EXPECT_EQ(buffer.to_string(), "buffer<[2], bool, cpu:0>");
}

TEST(TensorType, Queries) {
  TensorType t = tensor(DType::kFloat16, {"b", 3, 4});
  EXPECT_EQ(t.rank(), 3);
  EXPECT_FALSE(t.is_static());
  EXPECT_EQ(t.num_elements(), Dim("b") * 12);
  EXPECT_TRUE(tensor(DType::kFloat16, {2, 3}).is_static());
  EXPECT_EQ(tensor(DType::kFloat16, {}).num_elements(), Dim(1));
  EXPECT_EQ(t, tensor(DType::kFloat16, {"b", 3, 4}));
  EXPECT_NE(t, tensor(DType::kFloat16, {"b", 3, 4}, DeviceRef::gpu()));
}

TEST(TensorType, ValidateNamesWhatIsWrong) {
  EXPECT_NO_THROW(tensor(DType::kFloat32, {0, "b"}).validate("input 'x'"));
  expect_error([] { tensor(static_cast<DType>(2), {1}).validate("input 'x'"); }, Code::kInvalidArgument,
               {"input 'x'", "unknown dtype code 2"});
  expect_error([] { tensor(DType::kFloat32, {3, -1}).validate("input 'x'"); }, Code::kInvalidArgument,
               {"input 'x'", "dim 1 of [3, -1] is negative"});
  expect_error([] { tensor(DType::kFloat32, {1}, DeviceRef::gpu(-1)).validate("input 'x'"); },
               Code::kInvalidArgument, {"device id -1"});
}

TEST(Constant, ValidatesSize) {
  std::vector<uint8_t> bytes(24);
  EXPECT_NO_THROW(Constant::copy_of(tensor(DType::kFloat32, {2, 3}), bytes).validate("c"));
  expect_error([&] { Constant::copy_of(tensor(DType::kFloat32, {2, 2}), bytes).validate("constant 0"); },
               Code::kInvalidArgument, {"constant 0", "takes 16 bytes, got 24"});
  expect_error([&] { Constant::copy_of(tensor(DType::kFloat32, {"n"}), bytes).validate("c"); },
               Code::kInvalidArgument, {"static shape", "[n]"});
}

// An initializer of [2^59 + 1] float32 is 2^64 + 32 bits, which wrapped to 4 bytes: four
// bytes of data passed the check and execute wrote past a 64-byte buffer.
TEST(Constant, SizesThatWrapAreRefused) {
  std::vector<uint8_t> bytes(4);
  expect_error([&] { Constant::copy_of(tensor(DType::kFloat32, {(int64_t{1} << 59) + 1}), bytes).validate("c"); },
               Code::kInvalidArgument, {"c", "multiply to more than"});
  expect_error([&] { Constant::copy_of(tensor(DType::kFloat64, {(int64_t{1} << 58) + 1}), bytes).validate("c"); },
               Code::kInvalidArgument, {"c", "multiply to more than"});
}

TEST(Constant, ReadsScalars) {
  int32_t i = -5;
  double f = 2.5;
  Constant ci = Constant::copy_of(tensor(DType::kInt32, {}), {reinterpret_cast<uint8_t*>(&i), 4});
  Constant cf = Constant::copy_of(tensor(DType::kFloat64, {1}), {reinterpret_cast<uint8_t*>(&f), 8});
  EXPECT_EQ(ci.scalar_int(), -5);
  EXPECT_EQ(cf.scalar_float(), 2.5);
  EXPECT_FALSE(ci.scalar_float().has_value());
  EXPECT_FALSE(cf.scalar_int().has_value());
}

}  // namespace
}  // namespace maxc

// The importer's sizes (onnx/size_limits.h over base/checked_math.h): an initializer's byte
// size that would pass int64 is refused rather than wrapped, and a known value never writes
// more (or fewer) elements than its shape holds.
#include <gtest/gtest.h>

#include <climits>

#include "base/error.h"
#include "onnx/known_value.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

TEST(OnnxSizeLimits, CheckedByteSizeRefusesWhatWrapped) {
  // [2^59 + 1] float32 is 2^61 + 4 bytes: counted in bits it wrapped to 4 bytes.
  EXPECT_EQ(checked_byte_size(DType::kFloat32, (int64_t{1} << 59) + 1), std::nullopt);
  EXPECT_EQ(checked_byte_size(DType::kFloat64, int64_t{1} << 58), std::nullopt);
  EXPECT_EQ(checked_byte_size(DType::kFloat32, 3), 12u);
  EXPECT_EQ(checked_byte_size(DType::kInt4, 3), 2u);  // packed, the last byte half used
  EXPECT_EQ(checked_byte_size(DType::kBool, 0), 0u);
}

TEST(OnnxSizeLimits, KnownValueRefusesValuesItsShapeDoesNotHold) {
  // Three values into a one-element tensor would write past it.
  EXPECT_THROW(KnownValue::from_doubles(DType::kInt64, {1}, {1, 2, 3}), Error);
  EXPECT_THROW(KnownValue::from_dims(DType::kInt64, {1}, {Dim(1), Dim(2), Dim(3)}), Error);
  EXPECT_THROW(KnownValue::from_doubles(DType::kFloat32, {4}, {1}), Error);
  EXPECT_EQ(KnownValue::from_doubles(DType::kFloat32, {2, 2}, {1, 2, 3, 4}).num_elements(), 4);
}

}  // namespace
}  // namespace maxc::onnx

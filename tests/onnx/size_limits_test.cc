// The importer's overflow-checked sizes (onnx/size_limits.h): products and byte sizes that
// would pass int64 are refused rather than wrapped, and a known value never writes more (or
// fewer) elements than its shape holds.
#include <gtest/gtest.h>

#include <climits>

#include "base/error.h"
#include "onnx/known_value.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

TEST(OnnxSizeLimits, CheckedProductRefusesOverflowAndNegativeFactors) {
  EXPECT_EQ(checked_product({}), 1);
  EXPECT_EQ(checked_product({3, 4, 5}), 60);
  EXPECT_EQ(checked_product({int64_t{1} << 32, int64_t{1} << 32}), std::nullopt);  // 2^64 wraps to 0
  EXPECT_EQ(checked_product({int64_t{1} << 62, 2}), std::nullopt);
  EXPECT_EQ(checked_product({INT64_MAX, 1}), INT64_MAX);
  EXPECT_EQ(checked_product({INT64_MAX, INT64_MAX, 0}), 0);  // empty, however large the rest
  EXPECT_EQ(checked_product({2, -1}), std::nullopt);
}

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

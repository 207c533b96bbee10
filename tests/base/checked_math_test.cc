// The checked multiply behind element counts, byte sizes and shape products.
#include "base/checked_math.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace maxc {
namespace {

using V = std::vector<int64_t>;

TEST(CheckedMath, MulAndAddReportOverflow) {
  EXPECT_EQ(checked_mul<int64_t>(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_FALSE(checked_mul<int64_t>(int64_t{1} << 32, int64_t{1} << 31));
  EXPECT_FALSE(checked_mul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32));
  EXPECT_EQ(checked_add<int64_t>(INT64_MAX - 1, 1), INT64_MAX);
  EXPECT_FALSE(checked_add<int64_t>(INT64_MAX, 1));
}

TEST(CheckedMath, ElementLimitLeavesRoomForTheBitsOfTheWidestDType) {
  EXPECT_EQ(kMaxElements, (int64_t{1} << 57) - 1);
  EXPECT_TRUE(checked_mul<int64_t>(kMaxElements, 64));
  EXPECT_EQ(checked_byte_size(DType::kFloat64, static_cast<uint64_t>(kMaxElements)),
            static_cast<uint64_t>(kMaxElements) * 8);
}

TEST(CheckedMath, ProductWithinTheLimit) {
  EXPECT_EQ(checked_product(V{}), 1);
  EXPECT_EQ(checked_product(V{2, 3, 4}), 24);
  EXPECT_EQ(checked_product(V{kMaxElements}), kMaxElements);
  EXPECT_FALSE(checked_product(V{kMaxElements, 2}));
  EXPECT_FALSE(checked_product(V{2, -3}));
  // (2^32 + 1)^2 = 2^64 + 2^33 + 1 wraps to 2^33 + 1 in unchecked arithmetic.
  EXPECT_FALSE(checked_product(V{(int64_t{1} << 32) + 1, (int64_t{1} << 32) + 1}));
  EXPECT_EQ(checked_product(V{6, 7}, 42), 42);
  EXPECT_FALSE(checked_product(V{6, 7}, 41));
}

TEST(CheckedMath, ZeroDimStillBindsTheOthers) {
  EXPECT_EQ(checked_product(V{5, 0, 7}), 0);
  EXPECT_FALSE(checked_product(V{int64_t{1} << 40, 0, int64_t{1} << 40}));
}

TEST(CheckedMath, ByteSize) {
  EXPECT_EQ(checked_byte_size(DType::kFloat32, 3), 12u);
  EXPECT_EQ(checked_byte_size(DType::kInt4, 3), 2u);
  EXPECT_EQ(checked_byte_size(DType::kInt2, 5), 2u);
  EXPECT_FALSE(checked_byte_size(DType::kFloat64, (uint64_t{1} << 58) + 1));
  EXPECT_FALSE(checked_byte_size(DType::kFloat32, (uint64_t{1} << 59) + 1));
  EXPECT_FALSE(checked_byte_size(DType::kInvalid, 1));
}

}  // namespace
}  // namespace maxc

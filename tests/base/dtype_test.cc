#include "base/dtype.h"

#include <gtest/gtest.h>

namespace maxc {
namespace {

TEST(DType, CodesFollowMaxEncoding) {
  // Integer codes: bit 7 set, bit 0 signed, bits 1-3 log2(bits) - 3... checked on the table.
  for (DType d : {DType::kUInt8, DType::kInt8, DType::kUInt16, DType::kInt16, DType::kUInt32,
                  DType::kInt32, DType::kUInt64, DType::kInt64}) {
    int32_t v = static_cast<int32_t>(d);
    EXPECT_TRUE(v & 0x80) << dtype_name(d);
    EXPECT_EQ((v & 1) != 0, dtype_is_signed_integral(d)) << dtype_name(d);
    EXPECT_EQ(1 << ((v & 0x0E) >> 1), dtype_size_in_bits(d)) << dtype_name(d);
  }
}

TEST(DType, Traits) {
  EXPECT_EQ(dtype_size_in_bytes(DType::kFloat64), 8);
  EXPECT_EQ(dtype_size_in_bits(DType::kFloat4E2M1Fn), 4);
  EXPECT_EQ(dtype_bytes_for(DType::kFloat4E2M1Fn, 3), 2u);
  EXPECT_TRUE(dtype_is_integral(DType::kInt64));
  EXPECT_FALSE(dtype_is_integral(DType::kBool));
  EXPECT_TRUE(dtype_is_float(DType::kFloat32));
  EXPECT_TRUE(dtype_is_half(DType::kBFloat16));
  EXPECT_TRUE(dtype_is_float8(DType::kFloat8E5M2));
  EXPECT_TRUE(dtype_is_unsigned_integral(DType::kUInt32));
  EXPECT_FALSE(dtype_is_valid(static_cast<DType>(2)));
  EXPECT_EQ(dtype_size_in_bits(static_cast<DType>(2)), 0);
  EXPECT_EQ(dtype_from_name("bfloat16"), DType::kBFloat16);
  EXPECT_FALSE(dtype_from_name("float128").has_value());
}

}  // namespace
}  // namespace maxc

#include "base/dtype.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "base/packed_int.h"

namespace maxc {
namespace {

TEST(DType, CodesFollowMaxEncoding) {
  // Integer codes: bit 7 set, bit 0 signed, bits 1-3 log2(bits) - 3... checked on the table.
  for (DType d : {DType::kUInt2, DType::kInt2, DType::kUInt4, DType::kInt4, DType::kUInt8, DType::kInt8,
                  DType::kUInt16, DType::kInt16, DType::kUInt32, DType::kInt32, DType::kUInt64, DType::kInt64}) {
    int32_t v = static_cast<int32_t>(d);
    EXPECT_TRUE(v & 0x80) << dtype_name(d);
    EXPECT_EQ((v & 1) != 0, dtype_is_signed_integral(d)) << dtype_name(d);
    EXPECT_EQ(1 << ((v & 0x0E) >> 1), dtype_size_in_bits(d)) << dtype_name(d);
  }
}

// A byte size that does not fit saturates: FLOAT64 [2^58 + 1] once came out as 8 bytes
// (2^64 + 64 bits wrapped), and a buffer that small was then written as if it held them all.
TEST(DType, BytesForNeverWraps) {
  EXPECT_EQ(dtype_bytes_for(DType::kFloat64, (uint64_t{1} << 58) + 1), UINT64_MAX);
  EXPECT_EQ(dtype_bytes_for(DType::kFloat32, (uint64_t{1} << 59) + 1), UINT64_MAX);
  EXPECT_EQ(dtype_bytes_for(DType::kInt4, UINT64_MAX), UINT64_MAX);
  EXPECT_EQ(dtype_bytes_for(DType::kFloat64, uint64_t{1} << 56), uint64_t{1} << 59);
  EXPECT_EQ(dtype_bytes_for(DType::kInt4, 3), 2u);
  EXPECT_EQ(dtype_bytes_for(DType::kInvalid, 3), 0u);
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

// MAX's float8_e8m0fnu = 73 (0x49, a float code): a whole byte, a float8 for DType.is_float8,
// no integer and no sign.
TEST(DType, Float8E8M0Fnu) {
  const DType d = DType::kFloat8E8M0Fnu;
  EXPECT_EQ(static_cast<int32_t>(d), 73);
  EXPECT_TRUE(static_cast<int32_t>(d) & 0x40);
  EXPECT_STREQ(dtype_name(d), "float8_e8m0fnu");
  EXPECT_EQ(dtype_from_name("float8_e8m0fnu"), d);
  EXPECT_EQ(dtype_size_in_bits(d), 8);
  EXPECT_EQ(dtype_size_in_bytes(d), 1);
  EXPECT_EQ(dtype_align(d), 1);
  EXPECT_TRUE(dtype_is_float(d));
  EXPECT_TRUE(dtype_is_float8(d));
  EXPECT_FALSE(dtype_is_half(d));
  EXPECT_FALSE(dtype_is_integral(d));
  EXPECT_FALSE(dtype_is_signed_integral(d));
  EXPECT_FALSE(dtype_is_unsigned_integral(d));
  EXPECT_FALSE(dtype_is_sub_byte(d));
  EXPECT_FALSE(dtype_info(d)->is_signed);
  EXPECT_FALSE(dtype_is_valid(static_cast<DType>(72)));
  EXPECT_FALSE(dtype_is_valid(static_cast<DType>(74)));
}

// MAX's integer scheme extended below a byte: uint2 = 0x82 ... int4 = 0x85.
TEST(DType, SubByteIntegers) {
  const struct {
    DType dtype;
    int32_t code, bits;
    const char* name;
    bool is_signed;
  } cases[] = {{DType::kUInt2, 130, 2, "uint2", false},
               {DType::kInt2, 131, 2, "int2", true},
               {DType::kUInt4, 132, 4, "uint4", false},
               {DType::kInt4, 133, 4, "int4", true}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(static_cast<int32_t>(c.dtype), c.code);
    EXPECT_STREQ(dtype_name(c.dtype), c.name);
    EXPECT_EQ(dtype_from_name(c.name), c.dtype);
    EXPECT_EQ(dtype_size_in_bits(c.dtype), c.bits);
    EXPECT_EQ(dtype_size_in_bytes(c.dtype), 1);
    EXPECT_EQ(dtype_align(c.dtype), 1);
    EXPECT_TRUE(dtype_is_integral(c.dtype));
    EXPECT_FALSE(dtype_is_float(c.dtype));
    EXPECT_EQ(dtype_is_signed_integral(c.dtype), c.is_signed);
    EXPECT_EQ(dtype_is_unsigned_integral(c.dtype), !c.is_signed);
    EXPECT_TRUE(dtype_is_sub_byte(c.dtype));
    EXPECT_TRUE(dtype_is_packed_int(c.dtype));
  }
  EXPECT_EQ(dtype_bytes_for(DType::kInt4, 3), 2u);
  EXPECT_EQ(dtype_bytes_for(DType::kUInt2, 5), 2u);
  EXPECT_EQ(dtype_bytes_for(DType::kInt2, 8), 2u);
  EXPECT_TRUE(dtype_is_sub_byte(DType::kFloat4E2M1Fn));
  EXPECT_FALSE(dtype_is_packed_int(DType::kFloat4E2M1Fn));
  EXPECT_FALSE(dtype_is_sub_byte(DType::kUInt8));
  EXPECT_FALSE(dtype_is_sub_byte(DType::kBool));
  EXPECT_FALSE(dtype_is_sub_byte(static_cast<DType>(2)));
}

TEST(PackedInt, WrapKeepsTheLowBitsAndSignExtends) {
  EXPECT_EQ(packed_int_wrap(7, 4, true), 7);
  EXPECT_EQ(packed_int_wrap(8, 4, true), -8);
  EXPECT_EQ(packed_int_wrap(-9, 4, true), 7);
  EXPECT_EQ(packed_int_wrap(-1, 4, false), 15);
  EXPECT_EQ(packed_int_wrap(300, 4, true), -4);
  EXPECT_EQ(packed_int_wrap(2, 2, true), -2);
  EXPECT_EQ(packed_int_wrap(-3, 2, false), 1);
  EXPECT_EQ(packed_int_wrap(INT64_MIN, 2, true), 0);
}

// Element 0 in the lowest bits, as ONNX and DLPack pack them.
TEST(PackedInt, LowBitsFirst) {
  std::vector<uint8_t> b = {0x00, 0x00};
  packed_int_set(DType::kInt4, b.data(), 0, -1);
  packed_int_set(DType::kInt4, b.data(), 1, 2);
  packed_int_set(DType::kInt4, b.data(), 2, 9);  // wraps to -7
  EXPECT_EQ(b[0], 0x2F);
  EXPECT_EQ(b[1], 0x09);
  EXPECT_EQ(packed_int_get(DType::kInt4, b.data(), 0), -1);
  EXPECT_EQ(packed_int_get(DType::kInt4, b.data(), 1), 2);
  EXPECT_EQ(packed_int_get(DType::kInt4, b.data(), 2), -7);
  EXPECT_EQ(packed_int_get(DType::kUInt4, b.data(), 0), 15);

  std::vector<uint8_t> q = {0xFF};
  packed_int_set(DType::kUInt2, q.data(), 2, 0);  // bits 4-5 only
  EXPECT_EQ(q[0], 0xCF);
  EXPECT_EQ(packed_int_get(DType::kUInt2, q.data(), 3), 3);
  EXPECT_EQ(packed_int_get(DType::kInt2, q.data(), 3), -1);
  EXPECT_EQ(packed_int_get(DType::kInt2, q.data(), 2), 0);
}

}  // namespace
}  // namespace maxc

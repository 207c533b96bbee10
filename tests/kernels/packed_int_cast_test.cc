// Unit tests of the casts to and from the sub-byte integers (kernels/cpu/cast_packed_int.h)
// and of their lowering. The reference is written from what a cast means (an integer keeps its
// low bits; a float rounds half to even first, NaN -> 0, as ONNX's int4.md says) with plain
// arithmetic on the values, not with the bit tricks of base/packed_int.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "engine/lowering.h"
#include "kernel_test_util.h"
#include "kernels/cpu/cast_packed_int.h"
#include "kernels/cpu/half.h"

namespace maxc {
namespace {

struct Format {
  DType dtype;
  int bits;
  bool is_signed;
};

const Format kFormats[] = {{DType::kUInt2, 2, false}, {DType::kInt2, 2, true}, {DType::kUInt4, 4, false},
                           {DType::kInt4, 4, true}};

// v modulo 2^bits, into [lo, lo + 2^bits).
int64_t ref_wrap(const Format& f, int64_t v) {
  const int64_t span = int64_t{1} << f.bits, lo = f.is_signed ? -span / 2 : 0;
  int64_t r = (v - lo) % span;
  if (r < 0) r += span;
  return r + lo;
}

// A float cast: rounded half to even, NaN -> 0; every value here lies well inside int64.
int64_t ref_from_float(const Format& f, float x) {
  if (std::isnan(x)) return 0;
  const double lower = std::floor(static_cast<double>(x)), frac = static_cast<double>(x) - lower;
  const bool up = frac > 0.5 || (frac == 0.5 && std::fmod(lower, 2.0) != 0.0);
  return ref_wrap(f, static_cast<int64_t>(up ? lower + 1 : lower));
}

// Element i of a packed buffer as the value it encodes, by arithmetic on the byte.
int64_t ref_element(const Format& f, const std::vector<uint8_t>& packed, int64_t i) {
  const int per_byte = 8 / f.bits;
  const int64_t code = (packed[static_cast<size_t>(i / per_byte)] >> (f.bits * (i % per_byte))) % (1 << f.bits);
  return f.is_signed && code >= (1 << (f.bits - 1)) ? code - (1 << f.bits) : code;
}

int64_t packed_bytes(const Format& f, int64_t n) { return (n * f.bits + 7) / 8; }

std::vector<float> sample_floats(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(-40.0f, 40.0f);
  for (float& x : v) x = u(gen);
  if (n > 6) v[0] = NAN, v[1] = -0.5f, v[2] = 7.99f, v[3] = -8.0f, v[4] = 2.5f, v[5] = -1.5f;
  return v;
}

// float32 -> each dtype at sizes that cover a lone element, partial last bytes and several
// parallel chunks; a guard byte past the end stays, a last byte's unused bits are 0.
TEST(CastPackedInt, FromFloatTruncatesAndWraps) {
  for (const Format& f : kFormats) {
    for (int64_t n : {1, 3, 4, 5, 1023, 1025, 4099, 70001}) {
      const std::vector<float> x = sample_floats(n);
      const int64_t bytes = packed_bytes(f, n);
      std::vector<uint8_t> packed(static_cast<size_t>(bytes) + 1, 0xAB);
      cpu::cast_packed_int(DType::kFloat32, f.dtype, x.data(), packed.data(), n, true);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(ref_element(f, packed, i), ref_from_float(f, x[static_cast<size_t>(i)]))
            << dtype_name(f.dtype) << " n=" << n << " i=" << i << " x=" << x[static_cast<size_t>(i)];
      const int64_t used_bits = (n * f.bits) % 8;
      if (used_bits != 0) EXPECT_EQ(packed[static_cast<size_t>(bytes - 1)] >> used_bits, 0) << "padding bits";
      EXPECT_EQ(packed[static_cast<size_t>(bytes)], 0xAB) << dtype_name(f.dtype) << " wrote past the end, n=" << n;
    }
  }
}

// Every code of each dtype read back as int64, float32, float16 and bool.
TEST(CastPackedInt, EveryCodeReadsAsItsValue) {
  for (const Format& f : kFormats) {
    const int64_t codes = int64_t{1} << f.bits, n = 3 * codes + 1;  // every code in every slot of a byte
    std::vector<uint8_t> packed(static_cast<size_t>(packed_bytes(f, n)), 0);
    for (int64_t i = 0; i < n; ++i)
      packed[static_cast<size_t>(i * f.bits / 8)] |= static_cast<uint8_t>((i % codes) << (i * f.bits % 8));
    std::vector<int64_t> i64(static_cast<size_t>(n));
    std::vector<float> f32(static_cast<size_t>(n));
    std::vector<uint16_t> f16(static_cast<size_t>(n));
    std::vector<uint8_t> b(static_cast<size_t>(n));
    cpu::cast_packed_int(f.dtype, DType::kInt64, packed.data(), i64.data(), n, true);
    cpu::cast_packed_int(f.dtype, DType::kFloat32, packed.data(), f32.data(), n, true);
    cpu::cast_packed_int(f.dtype, DType::kFloat16, packed.data(), f16.data(), n, true);
    cpu::cast_packed_int(f.dtype, DType::kBool, packed.data(), b.data(), n, true);
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      const int64_t want = ref_element(f, packed, i);
      EXPECT_EQ(i64[k], want) << dtype_name(f.dtype) << " i=" << i;
      EXPECT_EQ(f32[k], static_cast<float>(want)) << dtype_name(f.dtype) << " i=" << i;
      EXPECT_EQ(cpu::f16_to_float(f16[k]), static_cast<float>(want)) << dtype_name(f.dtype) << " i=" << i;
      EXPECT_EQ(b[k], want != 0 ? 1 : 0) << dtype_name(f.dtype) << " i=" << i;
    }
  }
}

// Integers keep their low bits, whatever their width, as int32 -> int8 does.
TEST(CastPackedInt, IntegersKeepTheirLowBits) {
  const std::vector<int64_t> big = {300, -300, INT64_MAX, INT64_MIN, 7, -8, 8, 15, 16, -1};
  std::vector<uint8_t> i4(5);
  cpu::cast_packed_int(DType::kInt64, DType::kInt4, big.data(), i4.data(), 10, true);
  std::vector<int64_t> back(10);
  cpu::cast_packed_int(DType::kInt4, DType::kInt64, i4.data(), back.data(), 10, true);
  EXPECT_EQ(back, (std::vector<int64_t>{-4, 4, -1, 0, 7, -8, -8, -1, 0, -1}));

  const std::vector<uint64_t> u = {UINT64_MAX, 5, 6};
  std::vector<uint8_t> u2(1);
  cpu::cast_packed_int(DType::kUInt64, DType::kUInt2, u.data(), u2.data(), 3, true);
  EXPECT_EQ(u2[0], 0x3 | (0x1 << 2) | (0x2 << 4));

  std::vector<uint8_t> u8(4);
  const std::vector<uint8_t> neg = {0xEF, 0x08};  // int4 -1, -2, -8, 0
  cpu::cast_packed_int(DType::kInt4, DType::kUInt8, neg.data(), u8.data(), 4, true);
  EXPECT_EQ(u8, (std::vector<uint8_t>{255, 254, 248, 0}));
  std::vector<int16_t> i16(4);
  cpu::cast_packed_int(DType::kUInt4, DType::kInt16, neg.data(), i16.data(), 4, true);
  EXPECT_EQ(i16, (std::vector<int16_t>{15, 14, 8, 0}));
}

// The expected outputs of ONNX's test_cast_FLOAT_to_INT4 / UINT4 / INT2 / UINT2.
TEST(CastPackedInt, OnnxBackendCases) {
  std::vector<float> x;
  for (int v = -9; v <= 15; ++v) x.push_back(static_cast<float>(v));
  std::vector<uint8_t> i4(13);
  cpu::cast_packed_int(DType::kFloat32, DType::kInt4, x.data(), i4.data(), 25, true);
  std::vector<int8_t> got(25);
  cpu::cast_packed_int(DType::kInt4, DType::kInt8, i4.data(), got.data(), 25, true);
  EXPECT_EQ(got, (std::vector<int8_t>{7, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4,
                                      -3, -2, -1}));

  const std::vector<float> small = {-3, -2, -1, 0, 1, 2, 3};
  std::vector<uint8_t> p2(2);
  std::vector<int8_t> i2(7);
  std::vector<uint8_t> u2(7);
  cpu::cast_packed_int(DType::kFloat32, DType::kInt2, small.data(), p2.data(), 7, true);
  cpu::cast_packed_int(DType::kInt2, DType::kInt8, p2.data(), i2.data(), 7, true);
  EXPECT_EQ(i2, (std::vector<int8_t>{1, -2, -1, 0, 1, -2, -1}));
  cpu::cast_packed_int(DType::kFloat32, DType::kUInt2, small.data(), p2.data(), 7, true);
  cpu::cast_packed_int(DType::kUInt2, DType::kUInt8, p2.data(), u2.data(), 7, true);
  EXPECT_EQ(u2, (std::vector<uint8_t>{1, 2, 3, 0, 1, 2, 3}));
}

// Between two packed dtypes, and between a packed dtype and float8/float4, through int64 and
// float: int4 7 is float4's 6 (float4 saturates), float8 -2.5 rounds to int4 -2 (half to even).
TEST(CastPackedInt, PackedAndMinifloatSides) {
  const std::vector<uint8_t> i4 = {0x7F, 0x28};  // -1, 7, -8, 2
  std::vector<uint8_t> u2(1);
  cpu::cast_packed_int(DType::kInt4, DType::kUInt2, i4.data(), u2.data(), 4, true);
  EXPECT_EQ(u2[0], 0x3 | (0x3 << 2) | (0x0 << 4) | (0x2 << 6));

  std::vector<uint8_t> f4(2);
  cpu::cast_packed_int(DType::kInt4, DType::kFloat4E2M1Fn, i4.data(), f4.data(), 4, true);
  EXPECT_EQ(f4, (std::vector<uint8_t>{0x7A, 0x4F}));  // -1, 6 | -6, 2

  const std::vector<uint8_t> e4m3 = {0xC2, 0x54, 0x7E};  // -2.5, 12, 448
  std::vector<uint8_t> back(2);
  cpu::cast_packed_int(DType::kFloat8E4M3Fn, DType::kInt4, e4m3.data(), back.data(), 3, true);
  std::vector<int64_t> v(3);
  cpu::cast_packed_int(DType::kInt4, DType::kInt64, back.data(), v.data(), 3, true);
  EXPECT_EQ(v, (std::vector<int64_t>{-2, -4, 0}));  // 12 and 448 wrap
}

TEST(CastPackedInt, SupportsExactlyCastsWithAPackedSide) {
  EXPECT_TRUE(cpu::cast_packed_int_supports(DType::kFloat64, DType::kInt4));
  EXPECT_TRUE(cpu::cast_packed_int_supports(DType::kUInt2, DType::kBool));
  EXPECT_TRUE(cpu::cast_packed_int_supports(DType::kInt2, DType::kUInt4));
  EXPECT_TRUE(cpu::cast_packed_int_supports(DType::kFloat4E2M1Fn, DType::kUInt4));
  EXPECT_FALSE(cpu::cast_packed_int_supports(DType::kFloat32, DType::kFloat16));
  EXPECT_FALSE(cpu::cast_packed_int_supports(DType::kInt4, DType::kInvalid));
  float x = 1, y = 0;
  EXPECT_THROW(cpu::cast_packed_int(DType::kFloat32, DType::kFloat32, &x, &y, 1, true), Error);
}

// ---- lowerings ---------------------------------------------------------------------------------

using kernel_test::lower_node;

TEST(CastPackedIntLowering, CastRunsTheKernel) {
  const Lowered l = lower_node("cast", {{"dtype", DType::kFloat32}}, {Shape{DType::kInt4, {5}}},
                               {Shape{DType::kFloat32, {5}}});
  ASSERT_FALSE(l.alias);
  const std::vector<uint8_t> x = {0x21, 0x8F, 0x07};  // 1, 2, -1, -8, 7
  std::vector<float> y(5, -99.0f);
  const void* in[] = {x.data()};
  void* out[] = {y.data()};
  l.run(KernelArgs{in, out, nullptr});
  EXPECT_EQ(y, (std::vector<float>{1, 2, -1, -8, 7}));
  EXPECT_TRUE(lower_node("cast", {{"dtype", DType::kUInt2}}, {Shape{DType::kUInt2, {5}}},
                         {Shape{DType::kUInt2, {5}}})
                  .alias);
}

// No other kernel computes on them: UNIMPLEMENTED naming the dtype, never wrong bytes.
TEST(CastPackedIntLowering, OtherOpsAreUnimplementedNamingTheDtype) {
  try {
    lower_node("add", {}, {Shape{DType::kInt4, {4}}, Shape{DType::kInt4, {4}}}, {Shape{DType::kInt4, {4}}});
    FAIL() << "add of int4 lowered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("int4"), std::string::npos) << e.what();
  }
  try {
    lower_node("transpose", {{"axis_1", int64_t{0}}, {"axis_2", int64_t{1}}}, {Shape{DType::kUInt2, {2, 4}}},
               {Shape{DType::kUInt2, {4, 2}}});
    FAIL() << "transpose of uint2 lowered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("uint2"), std::string::npos) << e.what();
  }
}

// Ops that take any integer dtype for a count or a value still refuse the packed ones.
TEST(CastPackedIntLowering, RangeAndRepeatCountsAreUnimplemented) {
  const Shape i4{DType::kInt4, {}};
  try {
    lower_node("range", {}, {i4, i4, i4}, {Shape{DType::kInt4, {4}}});
    FAIL() << "range of int4 lowered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("dtype int4"), std::string::npos) << e.what();
  }
  try {
    lower_node("repeat_interleave", {{"axis", int64_t{0}}}, {Shape{DType::kFloat32, {2}}, Shape{DType::kUInt4, {2}}},
               {Shape{DType::kFloat32, {5}}});
    FAIL() << "repeat_interleave with uint4 counts lowered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("repeats of dtype uint4"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maxc

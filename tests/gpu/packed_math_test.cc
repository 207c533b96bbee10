// The packed-integer side of kernels/cuda/common/packed.cuh, compiled for the host and
// compared with src/base/packed_int.h, which the CPU's casts read and write with: every code
// of uint2, int2, uint4 and int4 read, int64 values written (their low bits), elements found
// in their bytes, and whole bytes packed with a partial last one. float4's codes are in
// float8_math_test.cc with the other minifloat conversions.
#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/dtype.h"
#include "base/packed_int.h"
#include "kernels/cuda/common/packed.cuh"

namespace maxc::testing {
namespace {

namespace g = maxc::gpu;

// A GPU packed-integer type and the dtype the CPU knows it by.
template <class S, DType D>
struct PackedIntPair {
  using Gpu = S;
  static constexpr DType kDType = D;
};

template <class P>
class PackedIntMath : public ::testing::Test {};
using PackedInts = ::testing::Types<PackedIntPair<g::packed_uint2, DType::kUInt2>,
                                    PackedIntPair<g::packed_int2, DType::kInt2>,
                                    PackedIntPair<g::packed_uint4, DType::kUInt4>,
                                    PackedIntPair<g::packed_int4, DType::kInt4>>;
TYPED_TEST_SUITE(PackedIntMath, PackedInts);

TYPED_TEST(PackedIntMath, EveryCodeReadsAsOnTheCpu) {
  using S = typename TypeParam::Gpu;
  using P = g::PackedFormat<S>;
  const bool is_signed = dtype_is_signed_integral(TypeParam::kDType);
  ASSERT_EQ(P::bits, dtype_size_in_bits(TypeParam::kDType));
  for (uint32_t c = 0; c <= P::mask; ++c) {
    ASSERT_EQ((g::unpack_code<g::i64, S>(c)), packed_int_wrap(c, P::bits, is_signed)) << "code " << c;
    ASSERT_EQ((g::unpack_code<double, S>(c)), static_cast<double>(packed_int_wrap(c, P::bits, is_signed)));
  }
}

// An int64 keeps its low bits; a float is rounded half to even and saturated to int64 first.
TYPED_TEST(PackedIntMath, ValuesWriteTheirLowBits) {
  using S = typename TypeParam::Gpu;
  using P = g::PackedFormat<S>;
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{2}, int64_t{-2}, int64_t{3}, int64_t{7}, int64_t{8},
                    int64_t{-8}, int64_t{-9}, int64_t{300}, int64_t{-300}, INT64_MAX, INT64_MIN}) {
    const uint32_t want = static_cast<uint32_t>(static_cast<uint64_t>(v) & P::mask);
    ASSERT_EQ(g::pack_code<S>(static_cast<g::i64>(v), true), want) << v;
  }
  EXPECT_EQ(g::pack_code<S>(-1.4f, true), static_cast<uint32_t>(P::mask));  // -1
  EXPECT_EQ(g::pack_code<S>(-0.6f, true), static_cast<uint32_t>(P::mask));  // -1
  EXPECT_EQ(g::pack_code<S>(0.5f, true), 0u);                              // ties to even
  EXPECT_EQ(g::pack_code<S>(1.5, true), 2u & P::mask);                     // ties to even
  EXPECT_EQ(g::pack_code<S>(2.5f, true), 2u & P::mask);
  EXPECT_EQ(g::pack_code<S>(1e30, true), static_cast<uint32_t>(P::mask));   // INT64_MAX
  EXPECT_EQ(g::pack_code<S>(-1e30, true), 0u);                              // INT64_MIN
}

// Element i of a buffer, read in its byte, is the element packed_int_get reads; bytes
// packed from those elements are the bytes packed_int_set writes, with a last partial byte's
// unused bits 0.
TYPED_TEST(PackedIntMath, ElementsSitInTheirBytesAsOnTheCpu) {
  using S = typename TypeParam::Gpu;
  const DType d = TypeParam::kDType;
  std::vector<uint8_t> bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<uint8_t>(b * 37 + 11));
  const auto* x = reinterpret_cast<const S*>(bytes.data());
  const int64_t n = 256 * g::PackedFormat<S>::per_byte - 1;
  std::vector<uint8_t> want(bytes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(g::load_element<g::i64>(x, i), packed_int_get(d, bytes.data(), i)) << "element " << i;
    packed_int_set(d, want.data(), i, packed_int_get(d, bytes.data(), i));
  }
  for (int64_t b = 0; b < g::packed_bytes<S>(n); ++b)
    ASSERT_EQ((+g::pack_byte<g::i64, S>(x, b, n, true).bits), +want[static_cast<size_t>(b)]) << "byte " << b;
}

// What a cast computes in: int64 with a packed integer on either side, except a float source
// cast to a packed integer (pack_code rounds it), else the source's type.
static_assert(std::is_same_v<g::PackedCastCompute<float, g::packed_int4>::type, float>);
static_assert(std::is_same_v<g::PackedCastCompute<g::half, g::packed_uint4>::type, float>);
static_assert(std::is_same_v<g::PackedCastCompute<g::packed_uint2, double>::type, g::i64>);
static_assert(std::is_same_v<g::PackedCastCompute<g::float4_e2m1fn, g::packed_int2>::type, float>);
static_assert(std::is_same_v<g::PackedCastCompute<g::float4_e2m1fn, g::half>::type, float>);
static_assert(std::is_same_v<g::PackedCastCompute<double, g::float4_e2m1fn>::type, double>);
static_assert(std::is_same_v<g::PackedCastCompute<g::i32, g::float4_e2m1fn>::type, g::i64>);

}  // namespace
}  // namespace maxc::testing

// The float8 and float4 conversions of the GPU kernels (kernels/cuda/common/minifloat.cuh,
// reached through cast.cuh and, for float4, packed.cuh), compiled for the host and compared
// with the CPU's (kernels/cpu/minifloat.h), as kernel_math_test.cc does for the other dtypes:
// every code decoded, and float and double patterns encoded with and without saturation,
// must give the same bits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/cast.h"
#include "kernels/cpu/minifloat.h"
#include "kernels/cuda/common/cast.cuh"
#include "kernels/cuda/common/packed.cuh"

namespace maxc::testing {
namespace {

namespace g = maxc::gpu;

template <class A, class B>
bool same_bits(A a, B b) {
  static_assert(sizeof(A) == sizeof(B));
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// A GPU stored float8 type and the CPU's format of the same dtype.
template <class S, cpu::MiniFormat F>
struct Float8Pair {
  using Gpu = S;
  static constexpr cpu::MiniFormat kCpu = F;
};
using E4M3Fn = Float8Pair<g::float8_e4m3fn, cpu::kE4M3Fn>;
using E4M3Fnuz = Float8Pair<g::float8_e4m3fnuz, cpu::kE4M3Fnuz>;
using E5M2 = Float8Pair<g::float8_e5m2, cpu::kE5M2>;
using E5M2Fnuz = Float8Pair<g::float8_e5m2fnuz, cpu::kE5M2Fnuz>;

template <class P>
class Float8Math : public ::testing::Test {};
using Float8Formats = ::testing::Types<E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz>;
TYPED_TEST_SUITE(Float8Math, Float8Formats);

// Every code read as float, double and int64, NaN included (same NaN bits as the CPU's).
TYPED_TEST(Float8Math, EveryCodeDecodesAsOnTheCpu) {
  using S = typename TypeParam::Gpu;
  for (uint32_t c = 0; c < 256; ++c) {
    const float want = cpu::minifloat_to_float<TypeParam::kCpu>(c);
    const S s{static_cast<g::u8>(c)};
    ASSERT_TRUE(same_bits(g::load_as<float>(s), want)) << std::hex << "code 0x" << c;
    ASSERT_TRUE(same_bits(g::load_as<double>(s), static_cast<double>(want))) << std::hex << "code 0x" << c;
    ASSERT_EQ(g::load_as<g::i64>(s), cpu::load_as<int64_t>(want)) << std::hex << "code 0x" << c;
  }
}

// Float patterns around every value of F: itself, the midpoints to its neighbour (the
// ties) and one float ulp either side of each, both signs; and the specials.
template <cpu::MiniFormat F>
std::vector<uint32_t> patterns_near_codes() {
  std::vector<uint32_t> p;
  for (uint32_t c = 0; c + 1 < (1u << F.bits()); ++c) {
    const float lo = cpu::minifloat_to_float<F>(c), hi = cpu::minifloat_to_float<F>(c + 1);
    for (float v : {lo, (lo + hi) / 2}) {
      if (std::isnan(v)) continue;
      const uint32_t b = std::bit_cast<uint32_t>(v);
      for (uint32_t d : {b - 1, b, b + 1}) p.insert(p.end(), {d, d ^ 0x80000000u});
    }
  }
  for (uint32_t edge : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7f7fffffu, 0x00000001u})
    p.push_back(edge);
  return p;
}

// A stride through all 2^32 float patterns (every exponent, both signs), then the above.
template <cpu::MiniFormat F>
std::vector<uint32_t> float_patterns() {
  std::vector<uint32_t> p;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 251) p.push_back(static_cast<uint32_t>(u));
  const std::vector<uint32_t> near = patterns_near_codes<F>();
  p.insert(p.end(), near.begin(), near.end());
  return p;
}

TYPED_TEST(Float8Math, FloatsEncodeAsOnTheCpu) {
  using S = typename TypeParam::Gpu;
  constexpr cpu::MiniFormat F = TypeParam::kCpu;
  for (uint32_t u : float_patterns<F>()) {
    const float f = std::bit_cast<float>(u);
    ASSERT_EQ(g::store_as<S>(f).bits, cpu::minifloat_from<F>(f, true)) << std::hex << "float 0x" << u;
    ASSERT_EQ(g::store_cast<S>(f, true).bits, cpu::minifloat_from<F>(f, true)) << std::hex << "float 0x" << u;
    ASSERT_EQ(g::store_cast<S>(f, false).bits, cpu::minifloat_from<F>(f, false))
        << std::hex << "float 0x" << u << " unsaturated";
  }
}

// Doubles round once, straight to float8: random patterns, and the patterns near the codes
// nudged by 2^-40 of themselves either way, which moves a tie off its midpoint only in double.
TYPED_TEST(Float8Math, DoublesEncodeAsOnTheCpu) {
  using S = typename TypeParam::Gpu;
  constexpr cpu::MiniFormat F = TypeParam::kCpu;
  std::vector<double> values;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) values.push_back(std::bit_cast<double>(static_cast<uint64_t>(rng())));
  for (uint32_t u : patterns_near_codes<F>()) {
    const double d = std::bit_cast<float>(u);
    values.insert(values.end(), {d, d * (1 + 0x1p-40), d * (1 - 0x1p-40)});
  }
  for (double d : values) {
    const uint64_t bits = std::bit_cast<uint64_t>(d);
    ASSERT_EQ(g::store_cast<S>(d, true).bits, cpu::minifloat_from<F>(d, true)) << std::hex << "double 0x" << bits;
    ASSERT_EQ(g::store_cast<S>(d, false).bits, cpu::minifloat_from<F>(d, false))
        << std::hex << "double 0x" << bits << " unsaturated";
  }
}

// Integers go through float, as the CPU's cast loads them before encoding.
TYPED_TEST(Float8Math, IntegersEncodeThroughFloat) {
  using S = typename TypeParam::Gpu;
  constexpr cpu::MiniFormat F = TypeParam::kCpu;
  for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{-3}, int64_t{17}, int64_t{449}, int64_t{-465}, int64_t{57344},
                    int64_t{61440}, int64_t{1} << 40, INT64_MAX, INT64_MIN}) {
    for (bool saturate : {true, false}) {
      ASSERT_EQ(g::store_cast<S>(static_cast<g::i64>(i), saturate).bits,
                cpu::minifloat_from<F>(static_cast<float>(i), saturate))
          << i;
      const auto u = static_cast<uint64_t>(i);
      ASSERT_EQ(g::store_cast<S>(static_cast<g::u64>(u), saturate).bits,
                cpu::minifloat_from<F>(static_cast<float>(u), saturate))
          << u;
    }
  }
}

// Every code that is not a NaN reads as a value that writes back as that code, even
// without saturation (e5m2's infinities included).
TYPED_TEST(Float8Math, EveryFiniteCodeRoundTrips) {
  using S = typename TypeParam::Gpu;
  for (uint32_t c = 0; c < 256; ++c) {
    const float f = g::load_as<float>(S{static_cast<g::u8>(c)});
    if (std::isnan(f)) continue;
    ASSERT_EQ(g::store_cast<S>(f, false).bits, c) << std::hex << "code 0x" << c;
  }
}

// ---- float4_e2m1fn ----------------------------------------------------------------------------

// packed.cuh's unpack_code and pack_code, what cast_packed.cu calls for each element.
TEST(Float4Math, EveryCodeDecodesAsOnTheCpu) {
  for (uint32_t c = 0; c < 16; ++c) {
    const float want = cpu::minifloat_to_float<cpu::kE2M1Fn>(c);
    ASSERT_TRUE(same_bits(g::unpack_code<float, g::float4_e2m1fn>(c), want)) << "code " << c;
    ASSERT_TRUE(same_bits(g::unpack_code<double, g::float4_e2m1fn>(c), static_cast<double>(want))) << "code " << c;
    ASSERT_EQ((g::unpack_code<g::i64, g::float4_e2m1fn>(c)), cpu::load_as<int64_t>(want)) << "code " << c;
  }
}

// float4 saturates whatever the flag says, and writes NaN as +0.
TEST(Float4Math, FloatsEncodeAsOnTheCpu) {
  for (uint32_t u : float_patterns<cpu::kE2M1Fn>()) {
    const float f = std::bit_cast<float>(u);
    for (bool saturate : {true, false})
      ASSERT_EQ(g::pack_code<g::float4_e2m1fn>(f, saturate), cpu::minifloat_from<cpu::kE2M1Fn>(f, saturate))
          << std::hex << "float 0x" << u << (saturate ? "" : " unsaturated");
  }
}

// Doubles round once, straight to float4 (a float64 cast's path on the CPU); integers go
// through float.
TEST(Float4Math, DoublesAndIntegersEncodeAsOnTheCpu) {
  std::vector<double> values;
  std::mt19937_64 rng(13);
  for (int i = 0; i < 200000; ++i) values.push_back(std::bit_cast<double>(static_cast<uint64_t>(rng())));
  for (uint32_t u : patterns_near_codes<cpu::kE2M1Fn>()) {
    const double d = std::bit_cast<float>(u);
    values.insert(values.end(), {d, d * (1 + 0x1p-40), d * (1 - 0x1p-40)});
  }
  for (double d : values)
    ASSERT_EQ(g::pack_code<g::float4_e2m1fn>(d, true), cpu::minifloat_from<cpu::kE2M1Fn>(d, true))
        << std::hex << "double 0x" << std::bit_cast<uint64_t>(d);
  for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{-3}, int64_t{5}, int64_t{7}, int64_t{-100}, INT64_MAX, INT64_MIN})
    ASSERT_EQ(g::pack_code<g::float4_e2m1fn>(static_cast<g::i64>(i), true),
              cpu::minifloat_from<cpu::kE2M1Fn>(static_cast<float>(i), true))
        << i;
}

// ---- float8_e8m0fnu ----------------------------------------------------------------------------

TEST(Float8E8M0Math, EveryCodeDecodesAsOnTheCpu) {
  for (uint32_t c = 0; c < 256; ++c) {
    const float want = cpu::kE8M0Table[c];
    const g::float8_e8m0fnu s{static_cast<g::u8>(c)};
    ASSERT_TRUE(same_bits(g::load_as<float>(s), want)) << "code " << c;
    ASSERT_TRUE(same_bits(g::load_as<double>(s), static_cast<double>(want))) << "code " << c;
    ASSERT_EQ(g::load_as<g::i64>(s), cpu::load_as<int64_t>(want)) << "code " << c;
  }
}

// A stride through all float patterns, and every power of two with its float neighbours.
TEST(Float8E8M0Math, FloatsEncodeAsOnTheCpu) {
  std::vector<uint32_t> patterns;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 251) patterns.push_back(static_cast<uint32_t>(u));
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t b : {e << 23, (e << 23) + 1, (e << 23) - 1}) patterns.insert(patterns.end(), {b, b ^ 0x80000000u});
  for (uint32_t u : patterns) {
    const float f = std::bit_cast<float>(u);
    ASSERT_EQ(g::store_as<g::float8_e8m0fnu>(f).bits, cpu::e8m0_from(f, true)) << std::hex << "float 0x" << u;
    ASSERT_EQ(g::store_cast<g::float8_e8m0fnu>(f, true).bits, cpu::e8m0_from(f, true)) << std::hex << "float 0x" << u;
    ASSERT_EQ(g::store_cast<g::float8_e8m0fnu>(f, false).bits, cpu::e8m0_from(f, false))
        << std::hex << "float 0x" << u << " unsaturated";
  }
}

// Doubles and integers round to float first, as the CPU's cast loads them.
TEST(Float8E8M0Math, DoublesAndIntegersEncodeThroughFloat) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    const double d = std::bit_cast<double>(static_cast<uint64_t>(rng()));
    for (bool saturate : {true, false})
      ASSERT_EQ(g::store_cast<g::float8_e8m0fnu>(d, saturate).bits, cpu::e8m0_from(static_cast<float>(d), saturate))
          << std::hexfloat << d;
  }
  for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{-3}, int64_t{1000}, int64_t{1} << 40, INT64_MAX, INT64_MIN})
    ASSERT_EQ(g::store_cast<g::float8_e8m0fnu>(static_cast<g::i64>(i), true).bits,
              cpu::e8m0_from(static_cast<float>(i), true))
        << i;
}

}  // namespace
}  // namespace maxc::testing

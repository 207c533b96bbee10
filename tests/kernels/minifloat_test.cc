// Unit tests of the float8 / float4 conversions (kernels/cpu/minifloat.h) and of the cast
// kernel over them (kernels/cpu/cast_minifloat.h). The reference here is written from the
// formats' definitions (OCP 8-bit floats, the fnuz variants, OCP MX's E2M1) and ONNX Cast's
// rounding and saturation table, independently of the code under test: decoding by ldexp,
// encoding by searching the codes for the nearest value.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <iterator>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/cast_minifloat.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/minifloat.h"

namespace maxc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One format as its specification states it.
struct Def {
  const char* name;
  DType dtype;
  int bits, e, m, bias;
  enum Kind { kIeee, kFn, kFnuz, kNoSpecials } kind;
  double max, min_subnormal;  // stated facts, checked against the decoding
};

const Def kDefs[] = {
    {"e4m3fn", DType::kFloat8E4M3Fn, 8, 4, 3, 7, Def::kFn, 448.0, 0x1p-9},
    {"e4m3fnuz", DType::kFloat8E4M3Fnuz, 8, 4, 3, 8, Def::kFnuz, 240.0, 0x1p-10},
    {"e5m2", DType::kFloat8E5M2, 8, 5, 2, 15, Def::kIeee, 57344.0, 0x1p-16},
    {"e5m2fnuz", DType::kFloat8E5M2Fnuz, 8, 5, 2, 16, Def::kFnuz, 57344.0, 0x1p-17},
    {"e2m1fn", DType::kFloat4E2M1Fn, 4, 2, 1, 1, Def::kNoSpecials, 6.0, 0.5},
};

uint32_t sign_bit(const Def& d) { return 1u << (d.bits - 1); }
uint32_t num_codes(const Def& d) { return 1u << d.bits; }

double ref_decode(const Def& d, uint32_t code) {
  const bool neg = (code & sign_bit(d)) != 0;
  const uint32_t mag = code & (sign_bit(d) - 1);
  const int exp = static_cast<int>(mag >> d.m), man = static_cast<int>(mag & ((1u << d.m) - 1));
  const int top = (1 << d.e) - 1;
  if (d.kind == Def::kIeee && exp == top) return man == 0 ? (neg ? -kInf : kInf) : kNaN;
  if (d.kind == Def::kFn && exp == top && man == (1 << d.m) - 1) return kNaN;
  if (d.kind == Def::kFnuz && code == sign_bit(d)) return kNaN;
  const double v = exp == 0 ? std::ldexp(man, 1 - d.bias - d.m) : std::ldexp((1 << d.m) + man, exp - d.bias - d.m);
  return neg ? -v : v;
}

// The largest finite magnitude's code.
uint32_t ref_max_code(const Def& d) {
  uint32_t best = 0;
  for (uint32_t c = 0; c < sign_bit(d); ++c) {
    const double v = ref_decode(d, c);
    if (std::isfinite(v) && v > ref_decode(d, best)) best = c;
  }
  return best;
}

// The finite magnitudes in code order (they increase with the code), per format.
const std::vector<double>& magnitudes(const Def& d) {
  static std::vector<double> cache[std::size(kDefs)];
  std::vector<double>& m = cache[&d - kDefs];
  if (m.empty())
    for (uint32_t c = 0; c <= ref_max_code(d); ++c) m.push_back(ref_decode(d, c));
  return m;
}

// ONNX Cast: round to nearest even as if the exponent were unbounded (so the value past the
// max is max + one ulp, code max + 1), then the saturation table.
uint32_t ref_encode(const Def& d, double x, bool saturate) {
  const uint32_t s = std::signbit(x) ? sign_bit(d) : 0u;
  const std::vector<double>& mags = magnitudes(d);
  const uint32_t max_code = static_cast<uint32_t>(mags.size() - 1);
  if (std::isnan(x)) {
    switch (d.kind) {
      case Def::kIeee: return s | (sign_bit(d) - 2);  // S.11111.10, the quiet NaN
      case Def::kFn: return s | (sign_bit(d) - 1);
      case Def::kFnuz: return sign_bit(d);
      case Def::kNoSpecials: return 0;                  // no NaN: +0 (our choice)
    }
  }
  const double a = std::fabs(x), max = mags.back();
  const double past_max = max + std::ldexp(1.0, std::ilogb(max) - d.m);
  // The largest code whose magnitude is <= a, then the nearer of it and the next one.
  uint32_t code = static_cast<uint32_t>(std::upper_bound(mags.begin(), mags.end(), a) - mags.begin()) - 1;
  const double lo = mags[code], hi = code < max_code ? mags[code + 1] : past_max;
  if (a >= hi) {
    code = max_code + 1;  // a whole ulp past the max, or infinite
  } else if (a - lo > hi - a || (a - lo == hi - a && code % 2 == 1)) {
    ++code;
  }
  if (code > max_code) {
    if (saturate || d.kind == Def::kNoSpecials) return s | max_code;
    if (d.kind == Def::kIeee) return s | (max_code + 1);  // infinity
    if (d.kind == Def::kFn) return s | (sign_bit(d) - 1);
    return sign_bit(d);
  }
  if (d.kind == Def::kFnuz && code == 0) return 0;  // no negative zero
  return s | code;
}

// The code under test, for a Def.
template <typename Fn>
void with_format(const Def& d, Fn&& fn) {
  ASSERT_TRUE(cpu::visit_minifloat(d.dtype, fn)) << d.name;
}

bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(Minifloat, FormatsHaveTheirStatedRange) {
  for (const Def& d : kDefs) {
    EXPECT_EQ(ref_decode(d, ref_max_code(d)), d.max) << d.name;
    EXPECT_EQ(ref_decode(d, 1), d.min_subnormal) << d.name;
  }
}

TEST(Minifloat, EveryCodeDecodesAsTheFormatDefines) {
  for (const Def& d : kDefs) {
    with_format(d, [&](auto f) {
      constexpr cpu::MiniFormat F = decltype(f)::value;
      ASSERT_EQ(cpu::kMiniTable<F>.size(), num_codes(d)) << d.name;
      for (uint32_t c = 0; c < num_codes(d); ++c) {
        const double want = ref_decode(d, c);
        EXPECT_TRUE(same(cpu::minifloat_to_float<F>(c), want)) << d.name << " code " << c << " want " << want;
        EXPECT_TRUE(same(cpu::kMiniTable<F>[c], want)) << d.name << " code " << c;
      }
    });
  }
}

TEST(Minifloat, EveryValueRoundTrips) {
  for (const Def& d : kDefs) {
    with_format(d, [&](auto f) {
      constexpr cpu::MiniFormat F = decltype(f)::value;
      for (uint32_t c = 0; c < num_codes(d); ++c) {
        const double v = ref_decode(d, c);
        if (std::isnan(v)) continue;
        for (bool sat : {false, true}) {
          const uint32_t want = std::isinf(v) && sat ? ref_encode(d, v, true) : c;
          EXPECT_EQ(cpu::minifloat_from<F>(static_cast<float>(v), sat), want) << d.name << " code " << c;
          EXPECT_EQ(cpu::minifloat_from<F>(v, sat), want) << d.name << " code " << c << " from double";
        }
      }
    });
  }
}

// Midpoints between neighbours go to the even code; a hair either side goes to the nearer.
TEST(Minifloat, TiesRoundToEven) {
  for (const Def& d : kDefs) {
    with_format(d, [&](auto f) {
      constexpr cpu::MiniFormat F = decltype(f)::value;
      const uint32_t max_code = ref_max_code(d);
      for (uint32_t c = 0; c < max_code; ++c) {
        const double lo = ref_decode(d, c), hi = ref_decode(d, c + 1), mid = (lo + hi) / 2;
        const uint32_t even = c % 2 == 0 ? c : c + 1;
        EXPECT_EQ(cpu::minifloat_from<F>(static_cast<float>(mid), true), even) << d.name << " mid " << mid;
        EXPECT_EQ(cpu::minifloat_from<F>(std::nextafter(static_cast<float>(mid), 0.0f), true), c) << d.name;
        EXPECT_EQ(cpu::minifloat_from<F>(std::nextafter(static_cast<float>(mid), 1e9f), true), c + 1) << d.name;
        const uint32_t neg = cpu::minifloat_from<F>(-static_cast<float>(mid), true);
        EXPECT_EQ(neg, (d.kind == Def::kFnuz && even == 0) ? 0u : (even | sign_bit(d))) << d.name;
      }
    });
  }
}

// ONNX Cast's two tables, written out per format (codes are sign | magnitude).
TEST(Minifloat, SaturationAndSpecialsFollowOnnx) {
  struct Row {
    DType dtype;
    double x;
    uint32_t saturated, not_saturated;
  };
  const Row rows[] = {
      // e4m3fn: max 448 = 0x7E, NaN 0x7F with the sign
      {DType::kFloat8E4M3Fn, kInf, 0x7E, 0x7F},   {DType::kFloat8E4M3Fn, -kInf, 0xFE, 0xFF},
      {DType::kFloat8E4M3Fn, 1e6, 0x7E, 0x7F},    {DType::kFloat8E4M3Fn, -1e6, 0xFE, 0xFF},
      {DType::kFloat8E4M3Fn, 464, 0x7E, 0x7E},    {DType::kFloat8E4M3Fn, 465, 0x7E, 0x7F},
      {DType::kFloat8E4M3Fn, kNaN, 0x7F, 0x7F},   {DType::kFloat8E4M3Fn, -kNaN, 0xFF, 0xFF},
      {DType::kFloat8E4M3Fn, -0.0, 0x80, 0x80},   {DType::kFloat8E4M3Fn, 1e-7, 0x00, 0x00},
      // e4m3fnuz: max 240 = 0x7F, the one NaN 0x80, no -0
      {DType::kFloat8E4M3Fnuz, kInf, 0x7F, 0x80}, {DType::kFloat8E4M3Fnuz, -kInf, 0xFF, 0x80},
      {DType::kFloat8E4M3Fnuz, 248, 0x7F, 0x80},  {DType::kFloat8E4M3Fnuz, 247, 0x7F, 0x7F},
      {DType::kFloat8E4M3Fnuz, kNaN, 0x80, 0x80}, {DType::kFloat8E4M3Fnuz, -kNaN, 0x80, 0x80},
      {DType::kFloat8E4M3Fnuz, -0.0, 0x00, 0x00}, {DType::kFloat8E4M3Fnuz, -1e-7, 0x00, 0x00},
      // e5m2: max 57344 = 0x7B, inf 0x7C, NaN 0x7E with the sign
      {DType::kFloat8E5M2, kInf, 0x7B, 0x7C},     {DType::kFloat8E5M2, -kInf, 0xFB, 0xFC},
      {DType::kFloat8E5M2, 61440, 0x7B, 0x7C},    {DType::kFloat8E5M2, 61439, 0x7B, 0x7B},
      {DType::kFloat8E5M2, -1e6, 0xFB, 0xFC},     {DType::kFloat8E5M2, kNaN, 0x7E, 0x7E},
      {DType::kFloat8E5M2, -0.0, 0x80, 0x80},
      // e5m2fnuz: max 57344 = 0x7F, the one NaN 0x80
      {DType::kFloat8E5M2Fnuz, kInf, 0x7F, 0x80}, {DType::kFloat8E5M2Fnuz, -1e6, 0xFF, 0x80},
      {DType::kFloat8E5M2Fnuz, kNaN, 0x80, 0x80}, {DType::kFloat8E5M2Fnuz, -0.0, 0x00, 0x00},
      // e2m1fn: max 6 = 0x7, no inf or NaN: always saturates, NaN is +0
      {DType::kFloat4E2M1Fn, kInf, 0x7, 0x7},     {DType::kFloat4E2M1Fn, -kInf, 0xF, 0xF},
      {DType::kFloat4E2M1Fn, 7, 0x7, 0x7},        {DType::kFloat4E2M1Fn, -100, 0xF, 0xF},
      {DType::kFloat4E2M1Fn, 5, 0x6, 0x6},        {DType::kFloat4E2M1Fn, 0.25, 0x0, 0x0},
      {DType::kFloat4E2M1Fn, 0.75, 0x2, 0x2},     {DType::kFloat4E2M1Fn, kNaN, 0x0, 0x0},
      {DType::kFloat4E2M1Fn, -0.0, 0x8, 0x8},
  };
  for (const Row& r : rows) {
    cpu::visit_minifloat(r.dtype, [&](auto f) {
      constexpr cpu::MiniFormat F = decltype(f)::value;
      const std::string what = std::string(dtype_name(r.dtype)) + " x=" + std::to_string(r.x);
      EXPECT_EQ(cpu::minifloat_from<F>(static_cast<float>(r.x), true), r.saturated) << what;
      EXPECT_EQ(cpu::minifloat_from<F>(static_cast<float>(r.x), false), r.not_saturated) << what;
      EXPECT_EQ(cpu::minifloat_from<F>(r.x, true), r.saturated) << what << " from double";
      EXPECT_EQ(cpu::minifloat_from<F>(r.x, false), r.not_saturated) << what << " from double";
    });
  }
}

// Every float16, and random floats both across all exponents and within the format's range,
// against the search reference.
TEST(Minifloat, EncodingMatchesTheReferenceEverywhere) {
  std::mt19937 gen(7);
  for (const Def& d : kDefs) {
    std::vector<float> xs;
    for (uint32_t h = 0; h < 65536; ++h) xs.push_back(cpu::f16_to_float(static_cast<uint16_t>(h)));
    std::uniform_real_distribution<float> near(static_cast<float>(-2 * d.max), static_cast<float>(2 * d.max));
    for (int i = 0; i < 100000; ++i) {
      xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(gen())));
      xs.push_back(near(gen));
      xs.push_back(near(gen) * static_cast<float>(d.min_subnormal / d.max));
    }
    with_format(d, [&](auto f) {
      constexpr cpu::MiniFormat F = decltype(f)::value;
      int bad = 0;
      for (float x : xs)
        for (bool sat : {false, true}) {
          const uint32_t want = ref_encode(d, x, sat), got = cpu::minifloat_from<F>(x, sat);
          if (got != want && ++bad <= 5) ADD_FAILURE() << d.name << " x=" << x << " sat=" << sat << ": " << got << " != " << want;
        }
    });
  }
}

// A double just past a tie that float32 would round onto the tie: one rounding, not two.
TEST(Minifloat, DoubleSourcesRoundOnce) {
  const double x = 1.0625 + 0x1p-40;  // e4m3fn: between 1.0 (0x38) and 1.125 (0x39)
  EXPECT_EQ(cpu::minifloat_from<cpu::kE4M3Fn>(x, true), 0x39);
  EXPECT_EQ(cpu::minifloat_from<cpu::kE4M3Fn>(static_cast<float>(x), true), 0x38);
  uint8_t out = 0;
  cpu::cast_minifloat(DType::kFloat64, DType::kFloat8E4M3Fn, &x, &out, 1, true);
  EXPECT_EQ(out, 0x39);
}

// ---- the cast kernel ---------------------------------------------------------------------

std::vector<float> sample_values(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> u(-600.0f, 600.0f);
  for (auto& x : v) x = u(gen) * (gen() % 3 == 0 ? 1e-3f : 1.0f);
  if (n > 3) v[0] = std::numeric_limits<float>::infinity(), v[1] = NAN, v[2] = -0.0f;
  return v;
}

// float32 -> each format -> float32 through the kernel, at sizes that cover a lone element,
// an odd float4 tail and several parallel chunks.
TEST(CastMinifloat, KernelMatchesTheScalarConversions) {
  for (const Def& d : kDefs) {
    for (int64_t n : {1, 2, 7, 1023, 1025, 5001, 70001}) {
      const std::vector<float> x = sample_values(n);
      std::vector<uint8_t> packed(static_cast<size_t>(n) + 1, 0xAB);
      for (bool sat : {false, true}) {
        cpu::cast_minifloat(DType::kFloat32, d.dtype, x.data(), packed.data(), n, sat);
        std::vector<float> back(static_cast<size_t>(n));
        cpu::cast_minifloat(d.dtype, DType::kFloat32, packed.data(), back.data(), n, sat);
        for (int64_t i = 0; i < n; ++i) {
          const uint32_t code = d.bits == 8 ? packed[static_cast<size_t>(i)]
                                            : (packed[static_cast<size_t>(i / 2)] >> (4 * (i % 2))) & 0xFu;
          const uint32_t want = ref_encode(d, x[static_cast<size_t>(i)], sat);
          ASSERT_EQ(code, want) << d.name << " n=" << n << " i=" << i;
          ASSERT_TRUE(same(back[static_cast<size_t>(i)], ref_decode(d, want))) << d.name << " i=" << i;
        }
        const size_t used = d.bits == 8 ? static_cast<size_t>(n) : static_cast<size_t>((n + 1) / 2);
        if (d.bits == 4 && n % 2 == 1) EXPECT_EQ(packed[used - 1] >> 4, 0) << "padding nibble";
        EXPECT_EQ(packed[used], 0xAB) << d.name << " wrote past the end, n=" << n;
      }
    }
  }
}

// The side that is not float8/float4 converts like any other cast: integers saturate and
// truncate, bool is 0/1, float16 and float64 are exact for every float8 value.
TEST(CastMinifloat, OtherDtypesConvertThroughFloat) {
  const std::vector<uint8_t> codes = {0x00, 0x38, 0xB8, 0x7E, 0xFE, 0x01, 0x3C, 0x7F};  // e4m3fn
  const int64_t n = static_cast<int64_t>(codes.size());
  std::vector<int8_t> i8(codes.size());
  cpu::cast_minifloat(DType::kFloat8E4M3Fn, DType::kInt8, codes.data(), i8.data(), n, true);
  EXPECT_EQ(i8, (std::vector<int8_t>{0, 1, -1, -64, 64, 0, 1, 0}));  // +-448 wraps like any cast; NaN -> 0
  std::vector<double> f64(codes.size());
  cpu::cast_minifloat(DType::kFloat8E4M3Fn, DType::kFloat64, codes.data(), f64.data(), n, true);
  for (size_t i = 0; i < codes.size(); ++i) EXPECT_TRUE(same(f64[i], ref_decode(kDefs[0], codes[i]))) << i;
  std::vector<uint16_t> f16(codes.size());
  cpu::cast_minifloat(DType::kFloat8E4M3Fn, DType::kFloat16, codes.data(), f16.data(), n, true);
  for (size_t i = 0; i < codes.size(); ++i)
    EXPECT_TRUE(same(cpu::f16_to_float(f16[i]), ref_decode(kDefs[0], codes[i]))) << i;

  const std::vector<int32_t> ints = {0, 1, -3, 500, -100000, 17};
  std::vector<uint8_t> e5(ints.size());
  cpu::cast_minifloat(DType::kInt32, DType::kFloat8E5M2, ints.data(), e5.data(), 6, false);
  EXPECT_EQ(e5, (std::vector<uint8_t>{0x00, 0x3C, 0xC2, 0x60, 0xFC, 0x4C}));  // 500 -> 512, 17 -> 16
  const std::vector<uint8_t> bools = {0, 1, 2};
  std::vector<uint8_t> f4(2, 0xFF);
  cpu::cast_minifloat(DType::kBool, DType::kFloat4E2M1Fn, bools.data(), f4.data(), 3, true);
  EXPECT_EQ(f4, (std::vector<uint8_t>{0x20, 0x02}));  // 0, 1 | 1, padding
  std::vector<uint8_t> e4m3fnuz(3);
  cpu::cast_minifloat(DType::kFloat4E2M1Fn, DType::kFloat8E4M3Fnuz, f4.data(), e4m3fnuz.data(), 3, true);
  EXPECT_EQ(e4m3fnuz, (std::vector<uint8_t>{0x00, 0x40, 0x40}));  // fnuz 1.0 = exponent 8
}

TEST(CastMinifloat, RejectsCastsWithoutAMinifloat) {
  float x = 1, y = 0;
  EXPECT_FALSE(cpu::cast_minifloat_supports(DType::kFloat32, DType::kFloat16));
  EXPECT_TRUE(cpu::cast_minifloat_supports(DType::kFloat8E5M2, DType::kFloat4E2M1Fn));
  EXPECT_THROW(cpu::cast_minifloat(DType::kFloat32, DType::kFloat32, &x, &y, 1, true), Error);
}

}  // namespace
}  // namespace maxc

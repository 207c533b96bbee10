// Unit tests of float8_e8m0fnu's conversions (kernels/cpu/minifloat.h) and of the casts over
// it (kernels/cpu/cast_minifloat.h, cast_packed_int.h). The reference is ONNX's definition
// (onnx.numpy_helper.to_float8e8m0 with round_mode "up") restated with frexp and ldexp on the
// value, not with the bit tricks of the code under test.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"
#include "engine/lowering.h"
#include "kernel_test_util.h"
#include "kernels/cpu/cast_minifloat.h"
#include "kernels/cpu/cast_packed_int.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/minifloat.h"
#include "kernels/cpu/nonzero.h"

namespace maxc {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr uint32_t kNaNCode = 0xFF;

double ref_decode(uint32_t code) { return code == kNaNCode ? NAN : std::ldexp(1.0, static_cast<int>(code) - 127); }

// |x| = m * 2^k with m in [0.5, 1): float32's exponent field is k + 126 for a normal x and 0
// below 2^-126; a mantissa bit is set unless |x| is that power of two (or zero).
uint32_t ref_encode(float x, bool saturate) {
  if (std::isnan(x) || std::isinf(x)) return kNaNCode;
  const double a = std::fabs(static_cast<double>(x));
  if (a == 0) return 0;
  int k = 0;
  const double m = std::frexp(a, &k);
  const bool normal = a >= std::ldexp(1.0, -126);
  const uint32_t field = normal ? static_cast<uint32_t>(k + 126) : 0;
  const bool fraction = normal ? m != 0.5 : true;
  if (!fraction) return field;
  if (field == 0xFE) return saturate ? 0xFE : kNaNCode;
  return field + 1;
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

std::vector<float> probes() {
  std::vector<float> v = {0.0f, -0.0f, 0.124f, 0.25f, 0.5f, 1.1f, 2.0f, 4.0f, 8.0f, -3.0f, -0.25f,
                          0x1p-126f, 0x1p-127f, 0x1p-149f, 0x1.000002p-126f, 0x1p127f, 0x1.8p127f,
                          std::numeric_limits<float>::max(), kInf, -kInf, NAN, -NAN};
  std::mt19937 gen(73);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 5000; ++i) v.push_back(std::bit_cast<float>(bits(gen)));
  return v;
}

TEST(E8M0, EveryCodeIsAPowerOfTwoButNaN) {
  for (uint32_t c = 0; c < 256; ++c) {
    const float got = cpu::e8m0_to_float(static_cast<uint8_t>(c));
    EXPECT_TRUE(same(got, ref_decode(c))) << "code " << c << " -> " << got;
    EXPECT_TRUE(same(cpu::kE8M0Table[c], ref_decode(c))) << "table, code " << c;
  }
  EXPECT_EQ(cpu::e8m0_to_float(0), 0x1p-127f);
  EXPECT_EQ(cpu::e8m0_to_float(127), 1.0f);
  EXPECT_EQ(cpu::e8m0_to_float(254), 0x1p127f);
}

// The backend case test_cast_e8m0_FLOAT_to_FLOAT8E8M0's input and expected codes.
TEST(E8M0, OnnxBackendCaseRoundsUp) {
  const float x[] = {0.0f, 0.124f, 0.25f, 0.5f, 1.1f, 2.0f, 4.0f, 8.0f};
  const uint8_t want[] = {0, 124, 125, 126, 128, 128, 129, 130};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(cpu::e8m0_from(x[i], true), want[i]) << x[i];
}

TEST(E8M0, SaturationSignAndSpecialsFollowOnnx) {
  EXPECT_EQ(cpu::e8m0_from(-4.0f, true), 129);           // the sign is dropped
  EXPECT_EQ(cpu::e8m0_from(0x1.8p127f, true), 0xFE);     // rounds past 2^127: stays
  EXPECT_EQ(cpu::e8m0_from(0x1.8p127f, false), 0xFF);    // or NaN
  EXPECT_EQ(cpu::e8m0_from(0x1p127f, false), 0xFE);      // exact: no rounding
  EXPECT_EQ(cpu::e8m0_from(kInf, true), 0xFF);           // no infinity, saturated or not
  EXPECT_EQ(cpu::e8m0_from(NAN, true), 0xFF);
  EXPECT_EQ(cpu::e8m0_from(0x1p-149f, true), 1);         // a float subnormal rounds up to 2^-126
  EXPECT_EQ(cpu::e8m0_from(-0.0f, true), 0);             // zero is 2^-127
}

TEST(E8M0, EncodingMatchesTheReferenceEverywhere) {
  for (float x : probes())
    for (bool sat : {true, false})
      ASSERT_EQ(cpu::e8m0_from(x, sat), ref_encode(x, sat)) << std::hexfloat << x << " saturate=" << sat;
}

// float32 -> e8m0 -> float32 through the kernel, at sizes that cover a lone element and
// several parallel chunks; a guard byte past the end stays.
TEST(CastE8M0, KernelMatchesTheReference) {
  const std::vector<float> all = probes();
  for (int64_t n : {int64_t{1}, int64_t{8}, int64_t{1025}, static_cast<int64_t>(all.size())}) {
    for (bool sat : {true, false}) {
      std::vector<uint8_t> codes(static_cast<size_t>(n) + 1, 0xAB);
      cpu::cast_minifloat(DType::kFloat32, DType::kFloat8E8M0Fnu, all.data(), codes.data(), n, sat);
      std::vector<float> back(static_cast<size_t>(n));
      cpu::cast_minifloat(DType::kFloat8E8M0Fnu, DType::kFloat32, codes.data(), back.data(), n, sat);
      for (int64_t i = 0; i < n; ++i) {
        const size_t k = static_cast<size_t>(i);
        ASSERT_EQ(codes[k], ref_encode(all[k], sat)) << "n=" << n << " i=" << i;
        ASSERT_TRUE(same(back[k], ref_decode(codes[k]))) << "n=" << n << " i=" << i;
      }
      EXPECT_EQ(codes[static_cast<size_t>(n)], 0xAB) << "wrote past the end, n=" << n;
    }
  }
}

// The other side converts like any cast: float16 and float64 through float32 (ONNX rounds a
// double to float32 before taking its exponent), integers truncate, bool is 0/1.
TEST(CastE8M0, OtherDtypesConvertThroughFloat) {
  const std::vector<uint16_t> halves = {cpu::float_to_f16(0.124f), cpu::float_to_f16(3.0f), cpu::float_to_f16(-0.5f)};
  std::vector<uint8_t> e(3);
  cpu::cast_minifloat(DType::kFloat16, DType::kFloat8E8M0Fnu, halves.data(), e.data(), 3, true);
  EXPECT_EQ(e, (std::vector<uint8_t>{124, 129, 126}));  // 3 = 1.5 * 2: up to 4

  // 2^127 * (2 - 2^-40) is a double whose float32 rounding is 2^128: infinity, hence NaN.
  const std::vector<double> doubles = {0x1.fffffffffp127, 0x1.0000000001p0, 6.0};
  cpu::cast_minifloat(DType::kFloat64, DType::kFloat8E8M0Fnu, doubles.data(), e.data(), 3, true);
  EXPECT_EQ(e, (std::vector<uint8_t>{0xFF, 127, 130}));  // 1 + 2^-40 rounds to 1.0f first

  const std::vector<uint8_t> codes = {0, 126, 127, 130, 0xFE, 0xFF};
  std::vector<uint16_t> f16(codes.size());
  cpu::cast_minifloat(DType::kFloat8E8M0Fnu, DType::kFloat16, codes.data(), f16.data(), 6, true);
  EXPECT_EQ(cpu::f16_to_float(f16[0]), 0.0f);  // 2^-127 is below float16's range
  EXPECT_EQ(cpu::f16_to_float(f16[1]), 0.5f);
  EXPECT_EQ(cpu::f16_to_float(f16[3]), 8.0f);
  EXPECT_TRUE(std::isinf(cpu::f16_to_float(f16[4])));
  EXPECT_TRUE(std::isnan(cpu::f16_to_float(f16[5])));
  std::vector<int32_t> i32(codes.size());
  cpu::cast_minifloat(DType::kFloat8E8M0Fnu, DType::kInt32, codes.data(), i32.data(), 6, true);
  EXPECT_EQ(i32, (std::vector<int32_t>{0, 0, 1, 8, static_cast<int32_t>(INT64_MAX), 0}));  // saturate, wrap; NaN -> 0
  std::vector<uint8_t> b(codes.size());
  cpu::cast_minifloat(DType::kFloat8E8M0Fnu, DType::kBool, codes.data(), b.data(), 6, true);
  EXPECT_EQ(b, (std::vector<uint8_t>{1, 1, 1, 1, 1, 1}));  // no code is zero

  const std::vector<int64_t> ints = {0, 1, 3, -8, 1000};
  e.resize(ints.size());
  cpu::cast_minifloat(DType::kInt64, DType::kFloat8E8M0Fnu, ints.data(), e.data(), 5, true);
  EXPECT_EQ(e, (std::vector<uint8_t>{0, 127, 129, 130, 137}));
}

TEST(CastE8M0, OtherMinifloatsAndPackedIntegers) {
  const std::vector<uint8_t> e4m3 = {0x38, 0x44, 0xC4, 0x7E};  // 1, 3, -3, 448
  std::vector<uint8_t> e(4);
  cpu::cast_minifloat(DType::kFloat8E4M3Fn, DType::kFloat8E8M0Fnu, e4m3.data(), e.data(), 4, true);
  EXPECT_EQ(e, (std::vector<uint8_t>{127, 129, 129, 136}));  // 448 -> 512
  std::vector<uint8_t> f4(2);
  const std::vector<uint8_t> codes = {126, 127, 129};  // 0.5, 1, 4
  cpu::cast_minifloat(DType::kFloat8E8M0Fnu, DType::kFloat4E2M1Fn, codes.data(), f4.data(), 3, true);
  EXPECT_EQ(f4, (std::vector<uint8_t>{0x21, 0x06}));  // 0.5 | 1, 4

  EXPECT_TRUE(cpu::cast_packed_int_supports(DType::kInt4, DType::kFloat8E8M0Fnu));
  const std::vector<uint8_t> i4 = {0x3F, 0x07};  // -1, 3, 7
  cpu::cast_packed_int(DType::kInt4, DType::kFloat8E8M0Fnu, i4.data(), e.data(), 3, true);
  EXPECT_EQ(std::vector<uint8_t>(e.begin(), e.begin() + 3), (std::vector<uint8_t>{127, 129, 130}));
  std::vector<uint8_t> u4(2, 0xFF);
  cpu::cast_packed_int(DType::kFloat8E8M0Fnu, DType::kUInt4, codes.data(), u4.data(), 3, true);
  EXPECT_EQ(u4, (std::vector<uint8_t>{0x10, 0x04}));  // 0, 1 | 4, padding 0
}

TEST(CastE8M0, IsACastMinifloat) {
  EXPECT_TRUE(cpu::is_cast_minifloat(DType::kFloat8E8M0Fnu));
  EXPECT_FALSE(cpu::is_minifloat(DType::kFloat8E8M0Fnu));  // no MiniFormat describes it
  EXPECT_TRUE(cpu::cast_minifloat_supports(DType::kFloat8E8M0Fnu, DType::kBFloat16));
  EXPECT_TRUE(cpu::cast_minifloat_supports(DType::kFloat64, DType::kFloat8E8M0Fnu));
  EXPECT_FALSE(cpu::cast_minifloat_supports(DType::kFloat8E8M0Fnu, DType::kInvalid));
}

// A bit mask cannot say "every element": nonzero's kernels refuse the dtype rather than call
// 2^-127 (code 0) zero.
TEST(E8M0, NonzeroHasNoZeroTest) {
  EXPECT_FALSE(cpu::zero_test_of(DType::kFloat8E8M0Fnu).has_value());
  EXPECT_TRUE(cpu::zero_test_of(DType::kFloat8E4M3Fn).has_value());
}

// ---- lowerings ---------------------------------------------------------------------------------

using kernel_test::lower_node;

std::vector<uint8_t> run_cast_to_e8m0(const std::vector<float>& x, Attrs attrs) {
  const int64_t n = static_cast<int64_t>(x.size());
  const Lowered l = lower_node("cast", std::move(attrs), {Shape{DType::kFloat32, {n}}},
                               {Shape{DType::kFloat8E8M0Fnu, {n}}});
  EXPECT_FALSE(l.alias);
  std::vector<uint8_t> y(x.size(), 0xAB);
  const void* in[] = {x.data()};
  void* out[] = {y.data()};
  l.run(KernelArgs{in, out, nullptr});
  return y;
}

// The cast op runs the kernel with its saturate attribute (true when absent).
TEST(CastE8M0Lowering, CastRunsTheKernelWithItsSaturation) {
  const std::vector<float> x = {1.1f, -0.25f, 0x1.8p127f};
  EXPECT_EQ(run_cast_to_e8m0(x, {{"dtype", DType::kFloat8E8M0Fnu}}), (std::vector<uint8_t>{128, 125, 0xFE}));
  EXPECT_EQ(run_cast_to_e8m0(x, {{"dtype", DType::kFloat8E8M0Fnu}, {"saturate", false}}),
            (std::vector<uint8_t>{128, 125, 0xFF}));
  EXPECT_TRUE(lower_node("cast", {{"dtype", DType::kFloat8E8M0Fnu}}, {Shape{DType::kFloat8E8M0Fnu, {2}}},
                         {Shape{DType::kFloat8E8M0Fnu, {2}}})
                  .alias);
}

// No kernel but the cast computes on it: UNIMPLEMENTED naming the dtype, never wrong bytes.
TEST(CastE8M0Lowering, OtherOpsAreUnimplementedNamingTheDtype) {
  const Shape s{DType::kFloat8E8M0Fnu, {4}};
  try {
    lower_node("mul", {}, {s, s}, {s});
    FAIL() << "mul of float8_e8m0fnu lowered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("float8_e8m0fnu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maxc

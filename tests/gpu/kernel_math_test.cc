// The arithmetic of the GPU kernels, checked on the host: kernels/cuda/common/*.cuh compile
// as plain C++ too, so the conversions, op functors, reduction policies and index math the
// kernels run are compared here with the CPU kernels' (kernels/cpu), which define what every
// op means. A GPU result that differs from the CPU's starts as a failure here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/cast.h"
#include "kernels/cpu/elementwise_ops.h"
#include "kernels/cuda/common/cast.cuh"
#include "kernels/cuda/common/elementwise_ops.cuh"
#include "kernels/cuda/common/indexing.cuh"
#include "kernels/cuda/common/reduce_ops.cuh"

namespace maxc::testing {
namespace {

namespace g = maxc::gpu;
using cpu::ElemOp;

template <class A, class B>
bool same_bits(A a, B b) {
  static_assert(sizeof(A) == sizeof(B));
  return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(KernelMath, HalfToFloatMatchesTheCpuForEveryValue) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    ASSERT_TRUE(same_bits(g::half_bits_to_float(bits), cpu::half_bits_to_float(bits))) << std::hex << h;
    ASSERT_TRUE(same_bits(g::bf16_bits_to_float(bits), cpu::bf16_bits_to_float(bits))) << std::hex << h;
  }
}

TEST(KernelMath, FloatToHalfMatchesTheCpu) {
  // A stride through all 2^32 float patterns (every exponent, many mantissas), then the edges.
  std::vector<uint32_t> patterns;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 997) patterns.push_back(static_cast<uint32_t>(u));
  for (uint32_t edge : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0x477fefffu,
                        0x477ff000u, 0x38800000u, 0x387fffffu, 0x33000000u, 0x33000001u, 0x3f800000u, 0x3f801000u})
    patterns.push_back(edge);
  for (uint32_t u : patterns) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    ASSERT_EQ(g::float_to_half_bits(f), cpu::float_to_half_bits(f)) << std::hex << u;
    ASSERT_EQ(g::float_to_bf16_bits(f), cpu::float_to_bf16_bits(f)) << std::hex << u;
  }
}

const std::vector<double> kSamples = {0.0,   -0.0,   0.25,  -0.5,  1.0,   -1.0,  1.5,   -2.5,   3.75,  100.0,
                                      -300.7, 65504, 65520, 1e10,  -1e10, 3e38,  1e300, -1e300, 9.3e18, -9.3e18,
                                      1.9e19, 255.5, -129,  4e9,   2.5,   -3.5,  1e-8,  -1e-40, std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(), std::nan("")};

// Every compute type written as storage type S, against the CPU's store_as.
template <class GS, class CS>
void expect_same_stores(const char* what) {
  for (double v : kSamples) {
    // Beyond float's range the conversion is undefined in C++: take the infinity it rounds to.
    const float f = std::isfinite(v) && std::abs(v) > std::numeric_limits<float>::max()
                        ? std::copysign(std::numeric_limits<float>::infinity(), static_cast<float>(v > 0 ? 1 : -1))
                        : static_cast<float>(v);
    const int64_t i = cpu::convert_number<int64_t>(v);
    const uint64_t u = cpu::convert_number<uint64_t>(v);
    EXPECT_TRUE(same_bits(g::store_as<GS>(f), cpu::store_as<CS>(f))) << what << " from float " << f;
    EXPECT_TRUE(same_bits(g::store_as<GS>(v), cpu::store_as<CS>(v))) << what << " from double " << v;
    EXPECT_TRUE(same_bits(g::store_as<GS>(static_cast<g::i64>(i)), cpu::store_as<CS>(i))) << what << " from i64 " << i;
    EXPECT_TRUE(same_bits(g::store_as<GS>(static_cast<g::u64>(u)), cpu::store_as<CS>(u))) << what << " from u64 " << u;
  }
}

// Random stored bytes of S read as every compute type, against the CPU's load_as.
template <class GS, class CS>
void expect_same_loads(const char* what) {
  std::mt19937_64 rng(42);
  for (int n = 0; n < 2000; ++n) {
    const uint64_t raw = rng();
    GS gs;
    CS cs;
    std::memcpy(&gs, &raw, sizeof gs);
    std::memcpy(&cs, &raw, sizeof cs);
    const float gf = g::load_as<float>(gs), cf = cpu::load_as<float>(cs);
    const double gd = g::load_as<double>(gs), cd = cpu::load_as<double>(cs);
    ASSERT_TRUE(same_bits(gf, cf) || (gf != gf && cf != cf)) << what << " raw " << std::hex << raw;
    ASSERT_TRUE(same_bits(gd, cd) || (gd != gd && cd != cd)) << what << " raw " << std::hex << raw;
    ASSERT_TRUE(same_bits(g::load_as<g::i64>(gs), cpu::load_as<int64_t>(cs))) << what << " raw " << std::hex << raw;
    ASSERT_TRUE(same_bits(g::load_as<g::u64>(gs), cpu::load_as<uint64_t>(cs))) << what << " raw " << std::hex << raw;
  }
}

TEST(KernelMath, StoresMatchTheCpuCasts) {
  expect_same_stores<g::bool8, cpu::Bool8>("bool");
  expect_same_stores<g::i8, int8_t>("int8");
  expect_same_stores<g::u8, uint8_t>("uint8");
  expect_same_stores<g::i16, int16_t>("int16");
  expect_same_stores<g::u16, uint16_t>("uint16");
  expect_same_stores<g::i32, int32_t>("int32");
  expect_same_stores<g::u32, uint32_t>("uint32");
  expect_same_stores<g::i64, int64_t>("int64");
  expect_same_stores<g::u64, uint64_t>("uint64");
  expect_same_stores<g::half, cpu::Half>("float16");
  expect_same_stores<g::bfloat16, cpu::BFloat16>("bfloat16");
  expect_same_stores<float, float>("float32");
  expect_same_stores<double, double>("float64");
}

TEST(KernelMath, LoadsMatchTheCpuCasts) {
  expect_same_loads<g::bool8, cpu::Bool8>("bool");
  expect_same_loads<g::i8, int8_t>("int8");
  expect_same_loads<g::u16, uint16_t>("uint16");
  expect_same_loads<g::i32, int32_t>("int32");
  expect_same_loads<g::u32, uint32_t>("uint32");
  expect_same_loads<g::i64, int64_t>("int64");
  expect_same_loads<g::u64, uint64_t>("uint64");
  expect_same_loads<g::half, cpu::Half>("float16");
  expect_same_loads<g::bfloat16, cpu::BFloat16>("bfloat16");
  expect_same_loads<float, float>("float32");
  expect_same_loads<double, double>("float64");
}

// ---- op functors against the CPU's scalar bodies ----------------------------------------

// Float results may differ in the last bits (libm here, the CPU's own float32 approximations
// there); everything else is exact, NaN matching NaN.
template <class T>
bool close(T gpu, T cpu_value, bool exact) {
  if (gpu != gpu || cpu_value != cpu_value) return gpu != gpu && cpu_value != cpu_value;
  if (exact || !std::is_floating_point_v<T> || std::isinf(static_cast<double>(cpu_value))) return gpu == cpu_value;
  return std::abs(static_cast<double>(gpu) - static_cast<double>(cpu_value)) <=
         2e-6 * std::max(1.0, std::abs(static_cast<double>(cpu_value)));
}

std::vector<double> unary_samples() {
  std::vector<double> s = {0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.0, -1.0, 2.5, -3.5, 7.25, -20.0, 88.0, -100.0, 1e6,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::nan("")};
  for (int i = -30; i <= 30; ++i) s.push_back(i * 0.37);
  return s;
}

const std::vector<int64_t> kIntSamples = {0, 1, -1, 2, -2, 7, -7, 255, -256, 1 << 20, INT64_MAX, INT64_MIN, 12345678901LL};

// gelu (erf) at -inf: the CPU's float32 kernel gives the limit -0 and its float64 one NaN
// (-inf * 0); the GPU gives -0 for both, so float64 is not compared there.
bool cpu_float64_gives_nan_at_minus_inf(ElemOp op) { return op == ElemOp::kGeluErf; }

template <ElemOp Op, class F, class T>
void check_unary(const char* name, bool exact) {
  for (double v : unary_samples()) {
    const T x = static_cast<T>(v);
    if (std::is_same_v<T, double> && v == -std::numeric_limits<double>::infinity() &&
        cpu_float64_gives_nan_at_minus_inf(Op)) {
      EXPECT_EQ(F()(x), 0.0) << name << "(-inf)";
      continue;
    }
    const T expected = cpu::elem::apply1<Op, T>(x, cpu::elem::Params<T>{});
    ASSERT_TRUE(close<T>(F()(x), expected, exact)) << name << "(" << x << "): " << F()(x) << " vs CPU " << expected;
  }
}

template <ElemOp Op, class F>
void check_unary_int(const char* name) {
  for (int64_t v : kIntSamples) {
    EXPECT_EQ(F()(static_cast<g::i64>(v)), (cpu::elem::apply1<Op, int64_t>(v, {}))) << name << "(" << v << ")";
    const auto u = static_cast<uint64_t>(v);
    EXPECT_EQ(F()(static_cast<g::u64>(u)), (cpu::elem::apply1<Op, uint64_t>(u, {}))) << name << "(" << u << "u)";
  }
}

#define MAXC_CHECK_FLOAT_UNARY(Op, Functor)                                                      \
  check_unary<ElemOp::Op, g::op::Functor, float>(#Functor, false);                               \
  check_unary<ElemOp::Op, g::op::Functor, double>(#Functor, true)
#define MAXC_CHECK_NUMERIC_UNARY(Op, Functor) \
  MAXC_CHECK_FLOAT_UNARY(Op, Functor);        \
  check_unary_int<ElemOp::Op, g::op::Functor>(#Functor)

TEST(KernelMath, UnaryFunctorsMeanWhatTheCpuOpsMean) {
  MAXC_CHECK_NUMERIC_UNARY(kCopy, Copy);
  MAXC_CHECK_NUMERIC_UNARY(kAbs, Abs);
  MAXC_CHECK_NUMERIC_UNARY(kNegate, Negate);
  MAXC_CHECK_NUMERIC_UNARY(kRelu, Relu);
  MAXC_CHECK_NUMERIC_UNARY(kFloor, Floor);
  MAXC_CHECK_NUMERIC_UNARY(kTrunc, Trunc);
  MAXC_CHECK_NUMERIC_UNARY(kRound, Round);
  MAXC_CHECK_NUMERIC_UNARY(kLogicalNot, LogicalNot);
  MAXC_CHECK_NUMERIC_UNARY(kIsNan, IsNan);
  MAXC_CHECK_NUMERIC_UNARY(kIsInf, IsInf);
  MAXC_CHECK_NUMERIC_UNARY(kSquare, Square);
  MAXC_CHECK_NUMERIC_UNARY(kCube, Cube);
  MAXC_CHECK_NUMERIC_UNARY(kReciprocal, Reciprocal);
  MAXC_CHECK_NUMERIC_UNARY(kOne, One);
  check_unary_int<ElemOp::kBitwiseNot, g::op::BitwiseNot>("BitwiseNot");  // integers only
  MAXC_CHECK_FLOAT_UNARY(kExp, Exp);
  MAXC_CHECK_FLOAT_UNARY(kLog, Log);
  MAXC_CHECK_FLOAT_UNARY(kLog1p, Log1p);
  MAXC_CHECK_FLOAT_UNARY(kTanh, Tanh);
  MAXC_CHECK_FLOAT_UNARY(kErf, Erf);
  MAXC_CHECK_FLOAT_UNARY(kAtanh, Atanh);
  MAXC_CHECK_FLOAT_UNARY(kSigmoid, Sigmoid);
  MAXC_CHECK_FLOAT_UNARY(kSilu, Silu);
  MAXC_CHECK_FLOAT_UNARY(kGeluErf, GeluErf);
  MAXC_CHECK_FLOAT_UNARY(kGeluTanh, GeluTanh);
  MAXC_CHECK_FLOAT_UNARY(kGeluQuick, GeluQuick);
}

TEST(KernelMath, AcosClampsItsInputLikeMax) {
  EXPECT_DOUBLE_EQ(g::op::Acos()(1.5), 0.0);
  EXPECT_DOUBLE_EQ(g::op::Acos()(-7.0), std::acos(-1.0));
  EXPECT_DOUBLE_EQ(g::op::Acos()(0.25), std::acos(0.25));
  EXPECT_TRUE(std::isnan(g::op::Acos()(std::nan(""))));
}

TEST(KernelMath, ClampKeepsNanAndUsesItsBounds) {
  const g::op::Clamp<float> c{-1.0f, 2.0f};
  EXPECT_EQ(c(5.0f), 2.0f);
  EXPECT_EQ(c(-5.0f), -1.0f);
  EXPECT_EQ(c(0.5f), 0.5f);
  EXPECT_TRUE(std::isnan(c(std::nanf(""))));
  const g::op::Clamp<g::i64> ci{-2, 3};
  EXPECT_EQ(ci(g::i64{-9}), -2);
  EXPECT_EQ(ci(g::i64{9}), 3);
}

template <ElemOp Op, class F, class T>
void check_binary(const char* name, const std::vector<T>& values, bool exact) {
  for (T a : values)
    for (T b : values) {
      const T expected = cpu::elem::apply2<Op, T>(a, b);
      ASSERT_TRUE(close<T>(F()(a, b), expected, exact))
          << name << "(" << a << ", " << b << "): " << F()(a, b) << " vs CPU " << expected;
    }
}

template <ElemOp Op, class F>
void check_binary_all(const char* name) {
  std::vector<float> f;
  std::vector<double> d;
  for (double v : unary_samples()) {
    f.push_back(static_cast<float>(v));
    d.push_back(v);
  }
  check_binary<Op, F, float>(name, f, Op != ElemOp::kPow);
  check_binary<Op, F, double>(name, d, true);
  std::vector<g::i64> i;
  std::vector<g::u64> u;
  for (int64_t v : kIntSamples) {
    i.push_back(v);
    u.push_back(static_cast<uint64_t>(v));
  }
  for (g::i64 a : i)
    for (g::i64 b : i) ASSERT_EQ(F()(a, b), (cpu::elem::apply2<Op, int64_t>(a, b))) << name << "(" << a << ", " << b << ")";
  for (g::u64 a : u)
    for (g::u64 b : u) ASSERT_EQ(F()(a, b), (cpu::elem::apply2<Op, uint64_t>(a, b))) << name << "(" << a << ", " << b << ")";
}

TEST(KernelMath, BinaryFunctorsMeanWhatTheCpuOpsMean) {
  check_binary_all<ElemOp::kAdd, g::op::Add>("add");
  check_binary_all<ElemOp::kSub, g::op::Sub>("sub");
  check_binary_all<ElemOp::kMul, g::op::Mul>("mul");
  check_binary_all<ElemOp::kDiv, g::op::Div>("div");
  check_binary_all<ElemOp::kMod, g::op::Mod>("mod");
  check_binary_all<ElemOp::kPow, g::op::Pow>("pow");
  check_binary_all<ElemOp::kMax, g::op::Max>("max");
  check_binary_all<ElemOp::kMin, g::op::Min>("min");
  check_binary_all<ElemOp::kEqual, g::op::Equal>("equal");
  check_binary_all<ElemOp::kNotEqual, g::op::NotEqual>("not_equal");
  check_binary_all<ElemOp::kGreater, g::op::Greater>("greater");
  check_binary_all<ElemOp::kGreaterEqual, g::op::GreaterEqual>("greater_equal");
  check_binary_all<ElemOp::kLess, g::op::Less>("less");
  check_binary_all<ElemOp::kLessEqual, g::op::LessEqual>("less_equal");
  check_binary_all<ElemOp::kLogicalAnd, g::op::LogicalAnd>("logical_and");
  check_binary_all<ElemOp::kLogicalOr, g::op::LogicalOr>("logical_or");
  check_binary_all<ElemOp::kLogicalXor, g::op::LogicalXor>("logical_xor");
  check_binary_all<ElemOp::kBitwiseAnd, g::op::BitwiseAnd>("bitwise_and");
  check_binary_all<ElemOp::kBitwiseOr, g::op::BitwiseOr>("bitwise_or");
  check_binary_all<ElemOp::kBitwiseXor, g::op::BitwiseXor>("bitwise_xor");
}

TEST(KernelMath, DivisionLikeTheCpu) {
  std::vector<double> d;
  for (double v : unary_samples()) d.push_back(v);
  check_binary<ElemOp::kDiv, g::op::Div, double>("div", d, true);
  // Integers: truncation, x / 0 = 0, INT64_MIN / -1 wraps.
  EXPECT_EQ(g::op::Div()(g::i64{-7}, g::i64{2}), -3);
  EXPECT_EQ(g::op::Div()(g::i64{7}, g::i64{0}), 0);
  EXPECT_EQ(g::op::Div()(g::i64{INT64_MIN}, g::i64{-1}), INT64_MIN);
  EXPECT_EQ(g::op::Div()(g::u64{7}, g::u64{0}), 0u);
}

// ---- reductions ------------------------------------------------------------------------

template <class S, template <class> class Policy>
S reduce(const std::vector<S>& xs) {
  using R = Policy<S>;
  typename R::A acc = R::identity();
  for (const S& x : xs) acc = R::combine(acc, R::load(x));
  return R::finish(acc, static_cast<g::i64>(xs.size()));
}

TEST(KernelMath, ReductionPolicies) {
  const std::vector<float> f = {1.5f, -2.0f, 4.0f};
  EXPECT_EQ((reduce<float, g::Sum>(f)), 3.5f);
  EXPECT_FLOAT_EQ((reduce<float, g::Mean>(f)), 3.5f / 3);
  EXPECT_EQ((reduce<float, g::Max>(f)), 4.0f);
  EXPECT_EQ((reduce<float, g::Min>(f)), -2.0f);
  EXPECT_TRUE(std::isnan(reduce<float, g::Max>({1.0f, std::nanf(""), 9.0f})));
  EXPECT_TRUE(std::isnan(reduce<float, g::Min>({std::nanf(""), -9.0f})));
  EXPECT_TRUE(std::isnan(reduce<float, g::Mean>({})));  // 0/0, like numpy
  EXPECT_EQ((reduce<float, g::Max>({})), -std::numeric_limits<float>::infinity());
  // Integers: sums wrap, means average in double and truncate toward zero.
  EXPECT_EQ((reduce<g::i32, g::Sum>({INT32_MAX, 1})), INT32_MIN);
  EXPECT_EQ((reduce<g::i32, g::Mean>({-7, 0})), -3);
  EXPECT_EQ((reduce<g::i32, g::Mean>({})), 0);
  EXPECT_EQ((reduce<g::i64, g::Max>({-5, INT64_MIN})), -5);
  EXPECT_EQ((reduce<g::u64, g::Min>({5, 3, UINT64_MAX})), 3u);
  // Half floats accumulate in float and round once at the end.
  std::vector<g::half> h(1000, g::half{g::float_to_half_bits(0.1f)});
  const g::half total = reduce<g::half, g::Sum>(h);
  EXPECT_NEAR(g::half_bits_to_float(total.bits), 100.0f, 0.1f);
}

// ---- index math ------------------------------------------------------------------------

TEST(KernelMath, StridedOffsetWalksRowMajorIndices) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % g::kMaxRank);
    g::Shape shape{};
    g::Layout layout{};
    shape.rank = rank;
    shape.numel = 1;
    for (int d = 0; d < rank; ++d) {
      shape.dims[d] = 1 + rng() % 4;
      shape.numel *= shape.dims[d];
      layout.strides[d] = static_cast<g::i64>(rng() % 50) - 10;
    }
    for (g::i64 i = 0; i < shape.numel; ++i) {
      g::i64 rest = i, expected = 0;
      for (int d = rank - 1; d >= 0; --d) {
        expected += (rest % shape.dims[d]) * layout.strides[d];
        rest /= shape.dims[d];
      }
      ASSERT_EQ(g::offset_of(i, shape, layout), expected) << "trial " << trial << " i " << i;
    }
    layout.dense = 1;
    ASSERT_EQ(g::offset_of(shape.numel - 1, shape, layout), shape.numel - 1);
  }
}

TEST(KernelMath, StridedOffsetPast32Bits) {
  g::Shape shape{};
  shape.rank = 3;
  shape.dims[0] = 3;
  shape.dims[1] = 100000;
  shape.dims[2] = 100000;
  shape.numel = 3LL * 100000 * 100000;
  g::Layout layout{};
  layout.strides[0] = 1;  // a transposed view
  layout.strides[1] = 3;
  layout.strides[2] = 300000;
  const g::i64 i = 2LL * 100000 * 100000 + 12345LL * 100000 + 678;
  EXPECT_EQ(g::offset_of(i, shape, layout), 2 + 12345LL * 3 + 678LL * 300000);
}

}  // namespace
}  // namespace maxc::testing

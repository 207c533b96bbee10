// Unit tests of the elementwise engine (kernels/cpu/elementwise*, vector_math.h, cast.h):
// the float32 approximations against double-precision libm in ulps, programs against naive
// reference loops (broadcasts, dtypes, fused chains, register reuse, in-place, threads), and
// the conversions a cast makes.
#include <gtest/gtest.h>


#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <limits>
#include <random>
#include <vector>

#include "base/error.h"
#include "compiler/passes.h"
#include "engine/lowering.h"
#include "graph/graph.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/vector_math.h"

namespace maxc {
namespace {

using cpu::ElemCompute;
using cpu::ElemOp;
using cpu::ElemProgram;
using cpu::ElemProgramSpec;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// ---- float32 approximations ------------------------------------------------------------------

// |got - want| in units of float's spacing at `want` (float's smallest subnormal below it).
double ulps(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : 1e9;
  if (std::isinf(want)) return got == static_cast<float>(want) ? 0.0 : 1e9;
  const float w = static_cast<float>(want);
  const float next = std::nextafter(std::fabs(w), kInf);
  const double spacing = std::max<double>(next - std::fabs(w), std::numeric_limits<float>::denorm_min());
  return std::fabs(static_cast<double>(got) - want) / spacing;
}

std::vector<float> sweep(float lo, float hi, int n) {
  std::vector<float> v;
  for (int i = 0; i <= n; ++i) v.push_back(lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n));
  return v;
}

// Every float whose exponent lies in [lo_exp, hi_exp], sampled, both signs.
std::vector<float> log_sweep(int lo_exp, int hi_exp, int per_octave) {
  std::vector<float> v;
  for (int e = lo_exp; e <= hi_exp; ++e)
    for (int i = 0; i < per_octave; ++i) {
      const float x = std::ldexp(1.0f + static_cast<float>(i) / static_cast<float>(per_octave), e);
      v.push_back(x);
      v.push_back(-x);
    }
  return v;
}

void expect_within_ulps(const char* name, const std::function<float(float)>& f,
                        const std::function<double(double)>& ref, const std::vector<float>& xs, double max_ulps) {
  double worst = 0.0;
  float worst_x = 0.0f;
  for (float x : xs) {
    const double e = ulps(f(x), ref(static_cast<double>(x)));
    if (e > worst) worst = e, worst_x = x;
  }
  EXPECT_LE(worst, max_ulps) << name << ": worst at x = " << worst_x << " (" << f(worst_x) << " vs "
                             << ref(static_cast<double>(worst_x)) << ")";
}

TEST(VectorMath, ExpLogWithinTwoUlps) {
  auto exp_xs = sweep(-104.0f, 89.0f, 200000);
  expect_within_ulps("exp", cpu::vm::exp_f, [](double x) { return std::exp(x); }, exp_xs, 2.0);
  auto log_xs = log_sweep(-149, 127, 512);
  for (float& x : log_xs) x = std::fabs(x);
  expect_within_ulps("log", cpu::vm::log_f, [](double x) { return std::log(x); }, log_xs, 2.0);
  auto l1p = log_sweep(-30, 60, 512);
  l1p.erase(std::remove_if(l1p.begin(), l1p.end(), [](float x) { return x <= -1.0f; }), l1p.end());
  expect_within_ulps("log1p", cpu::vm::log1p_f, [](double x) { return std::log1p(x); }, l1p, 2.0);
}

TEST(VectorMath, ActivationsWithinFewUlps) {
  auto xs = sweep(-20.0f, 20.0f, 200000);
  auto small = log_sweep(-40, 3, 256);
  xs.insert(xs.end(), small.begin(), small.end());
  expect_within_ulps("tanh", cpu::vm::tanh_f, [](double x) { return std::tanh(x); }, xs, 2.0);
  expect_within_ulps("sigmoid", cpu::vm::sigmoid_f, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, xs, 3.0);
  expect_within_ulps("erf", cpu::vm::erf_f, [](double x) { return std::erf(x); }, xs, 4.0);
  // gelu's negative tail is x/2 erfc(|x|/sqrt2): a 10-term polynomial in float, times exp.
  expect_within_ulps(
      "gelu", cpu::vm::gelu_erf_f, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }, xs, 12.0);
  // The tanh form's argument z = 0.798(x + 0.0447x^3) is itself rounded in float, and the
  // negative tail x sigmoid(2z) ~ x e^(2z) amplifies that 2|z| times (as in any float32
  // implementation); the bound allows for it.
  expect_within_ulps(
      "gelu_tanh", cpu::vm::gelu_tanh_f,
      [](double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); },
      sweep(-5.0f, 20.0f, 100000), 48.0);
}

TEST(VectorMath, TrigWithinThreeUlpsInTheirRange) {
  auto xs = sweep(-cpu::vm::kTrigMaxArg, cpu::vm::kTrigMaxArg, 400000);
  auto small = log_sweep(-40, 2, 256);
  xs.insert(xs.end(), small.begin(), small.end());
  // Relative error is meaningless where sin crosses zero at a multiple of pi that float
  // cannot hold; compare those in absolute terms instead.
  double worst_sin = 0, worst_cos = 0;
  for (float x : xs) {
    const cpu::vm::SinCos sc = cpu::vm::sincos_reduced_f(x);
    const double s = std::sin(static_cast<double>(x)), c = std::cos(static_cast<double>(x));
    worst_sin = std::max(worst_sin, std::fabs(s) > 1e-3 ? ulps(sc.sin, s) : std::fabs(sc.sin - s) / 6e-8 / 1e-3);
    worst_cos = std::max(worst_cos, std::fabs(c) > 1e-3 ? ulps(sc.cos, c) : std::fabs(sc.cos - c) / 6e-8 / 1e-3);
  }
  // Measured 2.3 ulps at worst, where |x| is large and the reduced r small.
  EXPECT_LE(worst_sin, 2.5);
  EXPECT_LE(worst_cos, 2.5);
}

TEST(VectorMath, InverseFunctions) {
  auto xs = sweep(-1.0f, 1.0f, 200000);
  expect_within_ulps(
      "acos",
      [](float x) {
        const float s = std::sqrt((1.0f - std::fabs(x)) * 0.5f);
        return cpu::vm::acos_given_half_sqrt_f(x, s);
      },
      [](double x) { return std::acos(x); }, xs, 2.0);
  auto open = sweep(-0.9999f, 0.9999f, 200000);
  auto small = log_sweep(-40, -1, 256);
  open.insert(open.end(), small.begin(), small.end());
  expect_within_ulps("atanh", cpu::vm::atanh_f, [](double x) { return std::atanh(x); }, open, 3.0);
}

TEST(VectorMath, SpecialValues) {
  using namespace cpu::vm;
  EXPECT_EQ(exp_f(kInf), kInf);
  EXPECT_EQ(exp_f(-kInf), 0.0f);
  EXPECT_EQ(exp_f(100.0f), kInf);
  EXPECT_TRUE(std::isnan(exp_f(kNaN)));
  EXPECT_EQ(log_f(0.0f), -kInf);
  EXPECT_EQ(log_f(kInf), kInf);
  EXPECT_TRUE(std::isnan(log_f(-1.0f)));
  EXPECT_TRUE(std::isnan(log_f(kNaN)));
  EXPECT_EQ(log1p_f(-1.0f), -kInf);
  EXPECT_EQ(log1p_f(kInf), kInf);
  EXPECT_TRUE(std::isnan(log1p_f(-2.0f)));
  EXPECT_EQ(tanh_f(kInf), 1.0f);
  EXPECT_EQ(tanh_f(-kInf), -1.0f);
  EXPECT_TRUE(std::isnan(tanh_f(kNaN)));
  EXPECT_EQ(sigmoid_f(-kInf), 0.0f);
  EXPECT_EQ(sigmoid_f(kInf), 1.0f);
  EXPECT_EQ(erf_f(kInf), 1.0f);
  EXPECT_EQ(erf_f(-kInf), -1.0f);
  EXPECT_TRUE(std::isnan(erf_f(kNaN)));
  EXPECT_EQ(gelu_erf_f(kInf), kInf);
  EXPECT_EQ(gelu_erf_f(-kInf), 0.0f);
  EXPECT_EQ(atanh_f(1.0f), kInf);
  EXPECT_EQ(atanh_f(-1.0f), -kInf);
  EXPECT_TRUE(std::isnan(atanh_f(1.5f)));
}

// ---- conversions -----------------------------------------------------------------------------

TEST(Cast, HalfConversionsMatchTheScalarReference) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float a = cpu::half_bits_to_float(static_cast<uint16_t>(h)), b = cpu::f16_to_float(static_cast<uint16_t>(h));
    ASSERT_EQ(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(b)) << h;
  }
  std::mt19937 gen(3);
  for (int i = 0; i < 2000000; ++i) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(gen()));
    ASSERT_EQ(cpu::float_to_half_bits(f), cpu::float_to_f16(f)) << f;
    ASSERT_EQ(cpu::float_to_bf16_bits(f), cpu::float_to_bf16(f)) << f;
  }
}

TEST(Cast, FloatToIntegerSaturatesAndWraps) {
  EXPECT_EQ(cpu::store_as<int8_t>(200.0f), int8_t{-56});
  EXPECT_EQ(cpu::store_as<uint8_t>(-1.0f), uint8_t{255});
  EXPECT_EQ(cpu::store_as<int32_t>(-3.9f), -3);
  EXPECT_EQ(cpu::store_as<int32_t>(kNaN), 0);
  EXPECT_EQ(cpu::store_as<int64_t>(1e20f), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(cpu::store_as<int64_t>(-1e20), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(cpu::store_as<uint64_t>(1.5e19), uint64_t{15000000000000000000u});
  EXPECT_EQ(cpu::store_as<uint64_t>(1e30), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(cpu::store_as<uint64_t>(-2.0), std::numeric_limits<uint64_t>::max() - 1);
  EXPECT_EQ(cpu::store_as<cpu::Bool8>(0.5f).v, 1);
  EXPECT_EQ(cpu::store_as<cpu::Bool8>(kNaN).v, 1);
  EXPECT_EQ(cpu::store_as<cpu::Bool8>(int64_t{0}).v, 0);
  EXPECT_EQ(cpu::load_as<float>(cpu::Bool8{7}), 1.0f);
  EXPECT_EQ(cpu::store_as<int8_t>(int64_t{300}), int8_t{44});
  EXPECT_EQ(cpu::store_as<uint16_t>(int64_t{-1}), uint16_t{65535});
  EXPECT_EQ(cpu::store_as<cpu::Half>(65520.0f).bits, 0x7c00);
}

// ---- programs ----------------------------------------------------------------------------------

// Host tensors of any dtype for the tests, as raw bytes.
struct Buf {
  DType dtype;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;

  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  template <typename S>
  S* as() {
    return reinterpret_cast<S*>(bytes.data());
  }
};

// A buffer of `dtype` holding `values` (given as doubles, converted like a cast would).
Buf make(DType dtype, std::vector<int64_t> dims, const std::vector<double>& values) {
  Buf b{dtype, std::move(dims), {}};
  b.bytes.resize(static_cast<size_t>(b.size()) * static_cast<size_t>(dtype_size_in_bytes(dtype)) + 1);
  EXPECT_EQ(static_cast<int64_t>(values.size()), b.size());
  cpu::visit_storage(dtype, [&](auto tag) {
    using S = decltype(tag);
    for (size_t i = 0; i < values.size(); ++i) b.as<S>()[i] = cpu::store_as<S>(values[i]);
  });
  return b;
}

std::vector<double> read(const Buf& b) {
  std::vector<double> out(static_cast<size_t>(b.size()));
  cpu::visit_storage(b.dtype, [&](auto tag) {
    using S = decltype(tag);
    const S* p = reinterpret_cast<const S*>(b.bytes.data());
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<S, uint64_t> || std::is_same_v<S, int64_t>) {
        out[i] = static_cast<double>(p[i]);
      } else {
        out[i] = cpu::load_as<double>(p[i]);
      }
    }
  });
  return out;
}

std::vector<Buf> run(const ElemProgramSpec& spec, std::vector<Buf>& ins) {
  ElemProgram program(spec);
  std::vector<Buf> outs;
  for (const cpu::ElemOutput& o : spec.outputs) outs.push_back(make(o.dtype, spec.dims, std::vector<double>(
      [&] { int64_t n = 1; for (int64_t d : spec.dims) n *= d; return static_cast<size_t>(n); }(), -7.0)));
  std::vector<const void*> in_ptrs;
  for (Buf& b : ins) in_ptrs.push_back(b.bytes.data());
  std::vector<void*> out_ptrs;
  for (Buf& b : outs) out_ptrs.push_back(b.bytes.data());
  program.run(in_ptrs.data(), out_ptrs.data());
  return outs;
}

ElemProgramSpec one_op(ElemCompute c, ElemOp op, std::vector<Buf>& ins, std::vector<int64_t> out_dims, DType out) {
  ElemProgramSpec s;
  s.compute = c;
  s.dims = std::move(out_dims);
  for (const Buf& b : ins) s.leaves.push_back({b.dtype, b.dims});
  s.steps.push_back({op, {0, 1, 2}});
  s.outputs.push_back({static_cast<int32_t>(ins.size()), out});
  return s;
}

// The flat index into a leaf of dims `ld` for output multi-index `idx` (numpy broadcasting).
int64_t broadcast_index(const std::vector<int64_t>& ld, const std::vector<int64_t>& od, int64_t flat) {
  std::vector<int64_t> idx(od.size());
  for (size_t k = od.size(); k-- > 0;) {
    idx[k] = flat % od[k];
    flat /= od[k];
  }
  int64_t off = 0;
  for (size_t k = 0; k < ld.size(); ++k) {
    const size_t o = k + od.size() - ld.size();
    off = off * ld[k] + (ld[k] == 1 ? 0 : idx[o]);
  }
  return off;
}

std::vector<double> random_values(int64_t n, uint32_t seed, double lo = -4.0, double hi = 4.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(gen);
  return v;
}

int64_t count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

TEST(ElemProgram, BroadcastShapesMatchReference) {
  struct Case {
    std::vector<int64_t> a, b, out;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {2, 3}, {2, 3}},          {{2, 3}, {3}, {2, 3}},          {{2, 1}, {1, 3}, {2, 3}},
      {{}, {4, 5}, {4, 5}},              {{1}, {1}, {1}},                {{0, 3}, {3}, {0, 3}},
      {{7, 1, 33}, {1, 17, 1}, {7, 17, 33}}, {{128, 768}, {768}, {128, 768}}, {{3, 1, 5, 1}, {4, 1, 6}, {3, 4, 5, 6}},
      {{1, 1, 1}, {2000}, {1, 1, 2000}}, {{5, 1}, {5, 1}, {5, 1}},       {{2, 3, 4}, {1, 3, 1}, {2, 3, 4}},
  };
  for (const Case& c : cases) {
    for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kInt32}) {
      std::vector<Buf> ins = {make(dt, c.a, random_values(count(c.a), 1)), make(dt, c.b, random_values(count(c.b), 2))};
      const ElemCompute comp = dt == DType::kInt32 ? ElemCompute::kInt64 : ElemCompute::kFloat32;
      auto outs = run(one_op(comp, ElemOp::kSub, ins, c.out, dt), ins);
      const std::vector<double> a = read(ins[0]), b = read(ins[1]), y = read(outs[0]);
      for (int64_t i = 0; i < count(c.out); ++i) {
        const double want = a[static_cast<size_t>(broadcast_index(c.a, c.out, i))] -
                            b[static_cast<size_t>(broadcast_index(c.b, c.out, i))];
        const double stored = read(make(dt, {1}, {want}))[0];
        ASSERT_EQ(y[static_cast<size_t>(i)], stored) << dtype_name(dt) << " case out rank " << c.out.size() << " i " << i;
      }
    }
  }
}

TEST(ElemProgram, UnaryOpsOnEveryComputeType) {
  std::vector<double> xs = {-2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.7, -3.7};
  {
    std::vector<Buf> ins = {make(DType::kFloat32, {9}, xs)};
    auto y = read(run(one_op(ElemCompute::kFloat32, ElemOp::kRound, ins, {9}, DType::kFloat32), ins)[0]);
    EXPECT_EQ(y, (std::vector<double>{-2, -2, -0.0, 0, 0, 2, 2, 4, -4}));
  }
  {
    std::vector<Buf> ins = {make(DType::kFloat64, {9}, xs)};
    auto y = read(run(one_op(ElemCompute::kFloat64, ElemOp::kFloor, ins, {9}, DType::kFloat64), ins)[0]);
    EXPECT_EQ(y, (std::vector<double>{-3, -2, -1, 0, 0, 1, 2, 3, -4}));
  }
  {
    std::vector<Buf> ins = {make(DType::kInt8, {4}, {-128, -5, 0, 7})};
    auto y = read(run(one_op(ElemCompute::kInt64, ElemOp::kAbs, ins, {4}, DType::kInt8), ins)[0]);
    EXPECT_EQ(y, (std::vector<double>{-128, 5, 0, 7}));  // abs(-128) wraps, as numpy
    y = read(run(one_op(ElemCompute::kInt64, ElemOp::kNegate, ins, {4}, DType::kInt8), ins)[0]);
    EXPECT_EQ(y, (std::vector<double>{-128, 5, 0, -7}));
    y = read(run(one_op(ElemCompute::kInt64, ElemOp::kRelu, ins, {4}, DType::kInt8), ins)[0]);
    EXPECT_EQ(y, (std::vector<double>{0, 0, 0, 7}));
  }
  {
    std::vector<Buf> ins = {make(DType::kFloat32, {4}, {kNaN, -kInf, 2.0, -0.0})};
    auto y = read(run(one_op(ElemCompute::kFloat32, ElemOp::kRelu, ins, {4}, DType::kFloat32), ins)[0]);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[1], 0.0);
    EXPECT_EQ(y[2], 2.0);
    y = read(run(one_op(ElemCompute::kFloat32, ElemOp::kIsNan, ins, {4}, DType::kBool), ins)[0]);
    EXPECT_EQ(y, (std::vector<double>{1, 0, 0, 0}));
    y = read(run(one_op(ElemCompute::kFloat32, ElemOp::kIsInf, ins, {4}, DType::kBool), ins)[0]);
    EXPECT_EQ(y, (std::vector<double>{0, 1, 0, 0}));
  }
}

TEST(ElemProgram, SqrtRsqrtAcosSinCosOverBlocks) {
  const int64_t n = 5000;
  std::vector<double> xs = random_values(n, 9, -1.2, 1.2);
  xs[17] = 1e6;  // one block takes libm's path for sin/cos
  std::vector<Buf> ins = {make(DType::kFloat32, {n}, xs)};
  const std::vector<std::pair<ElemOp, double (*)(double)>> ops = {
      {ElemOp::kSin, [](double x) { return std::sin(static_cast<double>(static_cast<float>(x))); }},
      {ElemOp::kCos, [](double x) { return std::cos(static_cast<double>(static_cast<float>(x))); }},
      {ElemOp::kAcos, [](double x) { return std::acos(std::clamp(static_cast<double>(static_cast<float>(x)), -1.0, 1.0)); }},
      {ElemOp::kSqrt, [](double x) { return std::sqrt(static_cast<double>(static_cast<float>(x))); }},
      {ElemOp::kRsqrt, [](double x) { return 1.0 / std::sqrt(static_cast<double>(static_cast<float>(x))); }},
  };
  for (const auto& [op, ref] : ops) {
    auto y = read(run(one_op(ElemCompute::kFloat32, op, ins, {n}, DType::kFloat32), ins)[0]);
    for (int64_t i = 0; i < n; ++i) {
      const double want = ref(xs[static_cast<size_t>(i)]);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(y[static_cast<size_t>(i)])) << cpu::elem_op_name(op) << " " << i;
      } else {
        ASSERT_NEAR(y[static_cast<size_t>(i)], want, 3e-7 * std::max(1.0, std::fabs(want))) << cpu::elem_op_name(op) << " " << i;
      }
    }
  }
}

TEST(ElemProgram, ModFollowsTheDivisorsSign) {
  std::vector<Buf> f = {make(DType::kFloat32, {6}, {5, -5, 5, -5, 3, 1}), make(DType::kFloat32, {6}, {3, 3, -3, -3, 0, -1})};
  auto y = read(run(one_op(ElemCompute::kFloat32, ElemOp::kMod, f, {6}, DType::kFloat32), f)[0]);
  EXPECT_EQ(y[0], 2);
  EXPECT_EQ(y[1], 1);
  EXPECT_EQ(y[2], -1);
  EXPECT_EQ(y[3], -2);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_TRUE(std::signbit(y[5]));  // numpy: -0.0
  std::vector<Buf> i = {make(DType::kInt32, {6}, {5, -5, 5, -5, 3, -7}), make(DType::kInt32, {6}, {3, 3, -3, -3, 0, -1})};
  y = read(run(one_op(ElemCompute::kInt64, ElemOp::kMod, i, {6}, DType::kInt32), i)[0]);
  EXPECT_EQ(y, (std::vector<double>{2, 1, -1, -2, 0, 0}));
}

TEST(ElemProgram, IntegerPowWrapsAndHandlesNegativeExponents) {
  std::vector<Buf> ins = {make(DType::kInt32, {6}, {2, 3, -1, -1, 2, 1}), make(DType::kInt32, {6}, {10, 21, 3, -3, -1, -5})};
  auto y = read(run(one_op(ElemCompute::kInt64, ElemOp::kPow, ins, {6}, DType::kInt32), ins)[0]);
  const int32_t three21 = static_cast<int32_t>(static_cast<uint32_t>(10460353203ull & 0xffffffffull));
  EXPECT_EQ(y, (std::vector<double>{1024, static_cast<double>(three21), -1, -1, 0, 1}));
}

// A buffer holding `values` bit for bit (make() goes through double, which drops the low bits
// of large 64-bit integers).
template <typename S>
Buf make_exact(DType dtype, std::vector<int64_t> dims, const std::vector<S>& values) {
  Buf b{dtype, std::move(dims), std::vector<uint8_t>(values.size() * sizeof(S))};
  std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  return b;
}

template <typename S>
std::vector<S> full_range_values(int64_t n, uint32_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<S> v(static_cast<size_t>(n));
  for (S& x : v) x = static_cast<S>(gen());
  v[0] = std::numeric_limits<S>::min();
  v[1] = std::numeric_limits<S>::max();
  v[2] = S(0);
  return v;
}

// a OP b over [4, 9] by [9] and ~a, for one integer storage type, against the same operators
// on the stored type itself: computing on the wide value and narrowing must give the same bits.
template <typename S>
void check_bitwise_of(DType dtype) {
  const ElemCompute compute = *cpu::elem_compute_of(dtype);
  const auto a = full_range_values<S>(36, 1), b = full_range_values<S>(9, 2);
  std::vector<Buf> ins = {make_exact(dtype, {4, 9}, a), make_exact(dtype, {9}, b)};
  const std::pair<ElemOp, S (*)(S, S)> binary[] = {
      {ElemOp::kBitwiseAnd, [](S x, S y) { return static_cast<S>(x & y); }},
      {ElemOp::kBitwiseOr, [](S x, S y) { return static_cast<S>(x | y); }},
      {ElemOp::kBitwiseXor, [](S x, S y) { return static_cast<S>(x ^ y); }},
  };
  for (const auto& [op, ref] : binary) {
    Buf y = run(one_op(compute, op, ins, {4, 9}, dtype), ins)[0];
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(y.as<S>()[i], ref(a[i], b[i % 9])) << cpu::elem_op_name(op) << " " << dtype_name(dtype) << " " << i;
  }
  std::vector<Buf> x = {ins[0]};
  Buf y = run(one_op(compute, ElemOp::kBitwiseNot, x, {4, 9}, dtype), x)[0];
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(y.as<S>()[i], static_cast<S>(~a[i])) << "bitwise_not " << dtype_name(dtype) << " " << i;
}

TEST(ElemProgram, BitwiseOpsOnEveryIntegerWidth) {
  check_bitwise_of<int8_t>(DType::kInt8);
  check_bitwise_of<uint8_t>(DType::kUInt8);
  check_bitwise_of<int16_t>(DType::kInt16);
  check_bitwise_of<uint16_t>(DType::kUInt16);
  check_bitwise_of<int32_t>(DType::kInt32);
  check_bitwise_of<uint32_t>(DType::kUInt32);
  check_bitwise_of<int64_t>(DType::kInt64);
  check_bitwise_of<uint64_t>(DType::kUInt64);
}

// Bools are 0/1 in whatever the program computes in, a float type too (a program of bool ops
// only computes in float32): and/or/xor are then the logical ops. bitwise_not has no float
// form (the graph gives bools to logical_not).
TEST(ElemProgram, BitwiseOpsOnBoolsInAnyComputeType) {
  std::vector<Buf> ins = {make(DType::kBool, {4}, {0, 0, 1, 1}), make(DType::kBool, {4}, {0, 1, 0, 1})};
  for (ElemCompute c : {ElemCompute::kFloat32, ElemCompute::kFloat64, ElemCompute::kInt64, ElemCompute::kUInt64}) {
    EXPECT_EQ(read(run(one_op(c, ElemOp::kBitwiseAnd, ins, {4}, DType::kBool), ins)[0]), (std::vector<double>{0, 0, 0, 1}));
    EXPECT_EQ(read(run(one_op(c, ElemOp::kBitwiseOr, ins, {4}, DType::kBool), ins)[0]), (std::vector<double>{0, 1, 1, 1}));
    EXPECT_EQ(read(run(one_op(c, ElemOp::kBitwiseXor, ins, {4}, DType::kBool), ins)[0]), (std::vector<double>{0, 1, 1, 0}));
  }
  std::vector<Buf> x = {make(DType::kInt32, {2}, {1, 2})};
  try {
    ElemProgram p(one_op(ElemCompute::kFloat32, ElemOp::kBitwiseNot, x, {2}, DType::kInt32));
    ADD_FAILURE() << "bitwise_not in float32 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("bitwise_not"), std::string::npos) << e.what();
  }
}

TEST(ElemProgram, NarrowIntegersWrapLikeTheirDtype) {
  std::vector<Buf> ins = {make(DType::kInt8, {3}, {127, -128, 100}), make(DType::kInt8, {3}, {1, -1, 100})};
  auto y = read(run(one_op(ElemCompute::kInt64, ElemOp::kAdd, ins, {3}, DType::kInt8), ins)[0]);
  EXPECT_EQ(y, (std::vector<double>{-128, 127, -56}));
  std::vector<Buf> u = {make(DType::kUInt64, {2}, {0, 5}), make(DType::kUInt64, {2}, {1, 3})};
  y = read(run(one_op(ElemCompute::kUInt64, ElemOp::kSub, u, {2}, DType::kUInt64), u)[0]);
  EXPECT_EQ(y, (std::vector<double>{18446744073709551615.0, 2}));
}

TEST(ElemProgram, MixedDtypesConvertAtTheLoads) {
  // int32 / int32 is float32 (true division); int32 + float32 computes in float32.
  std::vector<Buf> ins = {make(DType::kInt32, {3}, {1, 7, -9}), make(DType::kInt32, {3}, {2, 2, 4})};
  auto y = read(run(one_op(ElemCompute::kFloat32, ElemOp::kDiv, ins, {3}, DType::kFloat32), ins)[0]);
  EXPECT_EQ(y, (std::vector<double>{0.5, 3.5, -2.25}));
  std::vector<Buf> mixed = {make(DType::kInt32, {2, 2}, {1, 2, 3, 4}), make(DType::kBFloat16, {2}, {0.5, 0.25})};
  y = read(run(one_op(ElemCompute::kFloat32, ElemOp::kMul, mixed, {2, 2}, DType::kFloat32), mixed)[0]);
  EXPECT_EQ(y, (std::vector<double>{0.5, 0.5, 1.5, 1.0}));
}

TEST(ElemProgram, WhereAndComparisonsAndClamp) {
  std::vector<Buf> ins = {make(DType::kBool, {2, 1}, {1, 0}), make(DType::kFloat32, {3}, {1, 2, 3}),
                          make(DType::kFloat32, {2, 3}, {-1, -2, -3, -4, -5, -6})};
  auto y = read(run(one_op(ElemCompute::kFloat32, ElemOp::kWhere, ins, {2, 3}, DType::kFloat32), ins)[0]);
  EXPECT_EQ(y, (std::vector<double>{1, 2, 3, -4, -5, -6}));

  std::vector<Buf> cmp = {make(DType::kUInt64, {2}, {1e19, 3}), make(DType::kUInt64, {2}, {5, 3})};
  y = read(run(one_op(ElemCompute::kUInt64, ElemOp::kGreater, cmp, {2}, DType::kBool), cmp)[0]);
  EXPECT_EQ(y, (std::vector<double>{1, 0}));  // compared unsigned, not as int64

  std::vector<Buf> c = {make(DType::kInt32, {5}, {-3, 1, 2, 3, 9})};
  ElemProgramSpec s = one_op(ElemCompute::kInt64, ElemOp::kClamp, c, {5}, DType::kInt32);
  s.steps[0].p0 = 1.5;
  s.steps[0].p1 = 3.5;
  y = read(run(s, c)[0]);
  EXPECT_EQ(y, (std::vector<double>{2, 2, 2, 3, 3}));
}

TEST(ElemProgram, CastProgramsHaveNoSteps) {
  std::vector<Buf> ins = {make(DType::kFloat32, {5}, {1.5, -1.0, 200.0, kNaN, 70000.0})};
  for (DType to : {DType::kInt8, DType::kUInt8, DType::kFloat16, DType::kBool, DType::kFloat64}) {
    ElemProgramSpec s;
    s.compute = ElemCompute::kFloat32;
    s.dims = {5};
    s.leaves.push_back({DType::kFloat32, {5}});
    s.outputs.push_back({0, to});
    auto y = read(run(s, ins)[0]);
    for (size_t i = 0; i < 5; ++i) {
      const double want = read(make(to, {1}, {read(ins[0])[i]}))[0];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i]));
      } else {
        EXPECT_EQ(y[i], want) << dtype_name(to) << " " << i;
      }
    }
  }
}

// y = gelu(x * w + b) in float16: the fused program narrows every intermediate to float16,
// so it gives exactly what three separate ops give.
TEST(ElemProgram, FusedChainEqualsTheUnfusedOps) {
  const std::vector<int64_t> dims = {37, 65};
  std::vector<Buf> ins = {make(DType::kFloat16, dims, random_values(count(dims), 4)),
                          make(DType::kFloat16, {65}, random_values(65, 5)), make(DType::kFloat16, {65}, random_values(65, 6))};
  ElemProgramSpec fused;
  fused.compute = ElemCompute::kFloat32;
  fused.dims = dims;
  for (const Buf& b : ins) fused.leaves.push_back({b.dtype, b.dims});
  fused.steps = {{ElemOp::kMul, {0, 1}, 0, 0, DType::kFloat16},
                 {ElemOp::kAdd, {3, 2}, 0, 0, DType::kFloat16},
                 {ElemOp::kGeluErf, {4}}};
  fused.outputs = {{5, DType::kFloat16}, {4, DType::kFloat16}};
  auto y = run(fused, ins);

  std::vector<Buf> mul_in = {ins[0], ins[1]};
  auto t = run(one_op(ElemCompute::kFloat32, ElemOp::kMul, mul_in, dims, DType::kFloat16), mul_in);
  std::vector<Buf> add_in = {t[0], ins[2]};
  auto u = run(one_op(ElemCompute::kFloat32, ElemOp::kAdd, add_in, dims, DType::kFloat16), add_in);
  std::vector<Buf> gelu_in = {u[0]};
  auto v = run(one_op(ElemCompute::kFloat32, ElemOp::kGeluErf, gelu_in, dims, DType::kFloat16), gelu_in);
  EXPECT_EQ(y[0].bytes, v[0].bytes);
  EXPECT_EQ(y[1].bytes, u[0].bytes);
}

// A long chain reuses a handful of registers; the result matches the step-by-step values.
TEST(ElemProgram, LongChainReusesRegisters) {
  const int64_t n = 3001;
  std::vector<Buf> ins = {make(DType::kFloat64, {n}, random_values(n, 8)), make(DType::kFloat64, {1}, {0.25})};
  ElemProgramSpec s;
  s.compute = ElemCompute::kFloat64;
  s.dims = {n};
  for (const Buf& b : ins) s.leaves.push_back({b.dtype, b.dims});
  int32_t last = 0;
  for (int k = 0; k < 200; ++k) {
    const ElemOp op = k % 3 == 0 ? ElemOp::kMul : k % 3 == 1 ? ElemOp::kAdd : ElemOp::kTanh;
    s.steps.push_back({op, {last, 1}});
    last = 2 + k;
  }
  s.outputs.push_back({last, DType::kFloat64});
  s.outputs.push_back({last - 100, DType::kFloat32});
  auto y = run(s, ins);
  const std::vector<double> x = read(ins[0]), got = read(y[0]), mid = read(y[1]);
  for (int64_t i = 0; i < n; ++i) {
    double v = x[static_cast<size_t>(i)], at_mid = 0;
    for (int k = 0; k < 200; ++k) {
      v = k % 3 == 0 ? v * 0.25 : k % 3 == 1 ? v + 0.25 : std::tanh(v);
      if (2 + k == last - 100) at_mid = v;
    }
    ASSERT_EQ(got[static_cast<size_t>(i)], v) << i;
    ASSERT_EQ(mid[static_cast<size_t>(i)], static_cast<double>(static_cast<float>(at_mid))) << i;
  }
}

TEST(ElemProgram, InPlaceWhereTheProgramAllowsIt) {
  const int64_t n = 4099;
  std::vector<double> xs = random_values(n, 10);
  // One step: the output may overwrite x, and running so gives the right answer.
  {
    std::vector<Buf> ins = {make(DType::kFloat32, {n}, xs), make(DType::kFloat32, {1}, {2.0})};
    ElemProgram p(one_op(ElemCompute::kFloat32, ElemOp::kMul, ins, {n}, DType::kFloat32));
    EXPECT_TRUE(p.output0_may_overwrite(0));
    EXPECT_FALSE(p.output0_may_overwrite(1));  // broadcast
    const void* in[] = {ins[0].bytes.data(), ins[1].bytes.data()};
    void* out[] = {ins[0].bytes.data()};
    p.run(in, out);
    const std::vector<double> y = read(ins[0]);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[static_cast<size_t>(i)], static_cast<double>(static_cast<float>(xs[static_cast<size_t>(i)])) * 2);
  }
  // out0 = exp(x) written in place, then out1 = out0 + x reads x again: not allowed.
  {
    ElemProgramSpec s;
    s.compute = ElemCompute::kFloat32;
    s.dims = {n};
    s.leaves.push_back({DType::kFloat32, {n}});
    s.steps = {{ElemOp::kExp, {0}}, {ElemOp::kAdd, {1, 0}}};
    s.outputs = {{1, DType::kFloat32}, {2, DType::kFloat32}};
    EXPECT_FALSE(ElemProgram(s).output0_may_overwrite(0));
    s.outputs = {{2, DType::kFloat32}, {1, DType::kFloat32}};
    EXPECT_TRUE(ElemProgram(s).output0_may_overwrite(0));
  }
}

TEST(ElemProgram, ThreadsGiveTheSameResult) {
  const std::vector<int64_t> dims = {513, 1031};
  std::vector<Buf> ins = {make(DType::kFloat32, dims, random_values(count(dims), 11)),
                          make(DType::kBFloat16, {1031}, random_values(1031, 12))};
  ElemProgramSpec s = one_op(ElemCompute::kFloat32, ElemOp::kAdd, ins, dims, DType::kFloat32);
  s.steps.push_back({ElemOp::kTanh, {2}});
  s.outputs[0].value = 3;
  auto one = run(s, ins);
  cpu::ThreadPool pool(4);
  cpu::PoolScope scope(&pool);
  auto four = run(s, ins);
  EXPECT_EQ(one[0].bytes, four[0].bytes);
}

TEST(ElemProgram, MalformedSpecsAreErrorsNotCrashes) {
  auto code_of = [](const ElemProgramSpec& s) {
    try {
      ElemProgram p(s);
    } catch (const Error& e) {
      return e.code();
    }
    return Code::kOk;
  };
  ElemProgramSpec s;
  s.compute = ElemCompute::kFloat32;
  s.dims = {4};
  s.leaves.push_back({DType::kFloat32, {3}});
  s.steps.push_back({ElemOp::kExp, {0}});
  s.outputs.push_back({1, DType::kFloat32});
  EXPECT_EQ(code_of(s), Code::kInvalidArgument);  // [3] does not broadcast to [4]
  s.leaves[0].dims = {4};
  EXPECT_EQ(code_of(s), Code::kOk);
  s.steps[0].args[0] = 1;  // reads itself
  EXPECT_EQ(code_of(s), Code::kInvalidArgument);
  s.steps[0].args[0] = 0;
  s.compute = ElemCompute::kInt64;  // exp of integers
  EXPECT_EQ(code_of(s), Code::kInvalidArgument);
  s.compute = ElemCompute::kFloat32;
  s.leaves[0].dtype = DType::kFloat8E4M3Fn;
  EXPECT_EQ(code_of(s), Code::kInvalidArgument);
}

// ---- the fusion pass and the lowerings --------------------------------------------------------

TensorType tensor(DType dtype, std::vector<Dim> dims) { return TensorType{dtype, std::move(dims), DeviceRef::cpu()}; }

ValueId scalar_constant(Graph& g, float v) {
  std::vector<uint8_t> bytes(sizeof(float));
  std::memcpy(bytes.data(), &v, sizeof(float));
  return g.add_constant(Constant::copy_of(tensor(DType::kFloat32, {}), bytes));
}

Shape shape_of(const Program& p, ValueId v) {
  Shape s{p.types[v].dtype, {}};
  for (const Dim& d : p.types[v].dims) s.dims.push_back(d.static_value());
  return s;
}

// Runs a program node by node through the kernel table on host buffers (by value id), as the
// executor would but without its planner: enough to compare fused and unfused programs.
std::map<ValueId, Buf> execute(const Program& p, std::map<ValueId, Buf> values) {
  std::map<ValueId, const Constant*> constants;
  for (const ProgramConstant& c : p.constants) {
    constants[c.value] = &c.data;
    Buf b{c.data.type.dtype, shape_of(p, c.value).dims, std::vector<uint8_t>(c.data.bytes().begin(), c.data.bytes().end())};
    values[c.value] = std::move(b);
  }
  for (const Node& n : p.nodes) {
    std::vector<Shape> ins, outs;
    std::vector<const Constant*> consts;
    for (ValueId v : n.inputs) {
      ins.push_back(shape_of(p, v));
      consts.push_back(constants.contains(v) ? constants[v] : nullptr);
    }
    for (ValueId v : n.outputs) outs.push_back(shape_of(p, v));
    LowerContext ctx{n, ins, outs, consts, [&](ValueId v) { return shape_of(p, v); }, 1};
    const LowerFn* fn = KernelTable::builtin().find(n.op);
    if (!fn) throw Error(Code::kNotFound, "no lowering for " + n.op);
    Lowered l = (*fn)(ctx);
    std::vector<const void*> in_ptrs;
    for (ValueId v : n.inputs) in_ptrs.push_back(values.at(v).bytes.data());
    std::vector<void*> out_ptrs;
    for (size_t j = 0; j < n.outputs.size(); ++j) {
      values[n.outputs[j]] = make(outs[j].dtype, outs[j].dims, std::vector<double>(static_cast<size_t>(count(outs[j].dims)), 0.0));
      out_ptrs.push_back(values[n.outputs[j]].bytes.data());
    }
    for (size_t j = 0; j < n.outputs.size(); ++j) out_ptrs[j] = values[n.outputs[j]].bytes.data();
    l.run(KernelArgs{in_ptrs.data(), out_ptrs.data(), nullptr});
  }
  return values;
}

struct Compiled {
  Program plain, fused;
};

Compiled both_ways(const Graph& g) {
  Compiled c{program_from_graph(g), program_from_graph(g)};
  fuse_elementwise(c.fused);
  eliminate_dead_code(c.fused);
  return c;
}

void expect_same_outputs(const Compiled& c, const std::map<ValueId, Buf>& inputs) {
  auto a = execute(c.plain, inputs), b = execute(c.fused, inputs);
  for (const NamedValue& out : c.plain.outputs)
    EXPECT_EQ(a.at(out.value).bytes, b.at(out.value).bytes) << "output " << out.name;
}

TEST(FuseElementwise, ChainBecomesOneNode) {
  Graph g;
  const ValueId x = g.add_input("x", tensor(DType::kFloat16, {6, 40}));
  const ValueId w = g.add_input("w", tensor(DType::kFloat16, {40}));
  const ValueId b = g.add_input("b", tensor(DType::kFloat16, {40}));
  const ValueId t = g.add_op("mul", {x, w})[0];
  const ValueId u = g.add_op("add", {t, b})[0];
  const ValueId y = g.add_op("gelu", {u}, Attrs{{"approximate", std::string("tanh")}})[0];
  g.set_outputs({{"y", y}, {"u", u}});
  Compiled c = both_ways(g);
  ASSERT_EQ(c.fused.nodes.size(), 1u) << c.fused.to_string();
  const Node& f = c.fused.nodes[0];
  EXPECT_EQ(f.op, "fused_elementwise");
  EXPECT_EQ(f.steps.size(), 3u);
  EXPECT_EQ(f.inputs, (std::vector<ValueId>{x, w, b}));
  EXPECT_EQ(f.outputs, (std::vector<ValueId>{u, y}));
  expect_same_outputs(c, {{x, make(DType::kFloat16, {6, 40}, random_values(240, 1))},
                          {w, make(DType::kFloat16, {40}, random_values(40, 2))},
                          {b, make(DType::kFloat16, {40}, random_values(40, 3))}});
}

// exp(x) feeds a reduction whose result feeds the next elementwise op: fusing that op into
// exp's group would make the group depend on itself through the reduction.
TEST(FuseElementwise, NeverFusesAcrossANodeThatDependsOnTheGroup) {
  Graph g;
  const ValueId x = g.add_input("x", tensor(DType::kFloat32, {5, 7}));
  const ValueId e = g.add_op("exp", {x})[0];
  const ValueId s = g.add_op("sum", {e}, Attrs{{"axis", int64_t{-1}}})[0];
  const ValueId y = g.add_op("div", {e, s})[0];
  const ValueId z = g.add_op("sqrt", {y})[0];
  g.set_outputs({{"z", z}});
  Compiled c = both_ways(g);
  ASSERT_EQ(c.fused.nodes.size(), 3u) << c.fused.to_string();
  EXPECT_EQ(c.fused.nodes[0].op, "exp");
  EXPECT_EQ(c.fused.nodes[1].op, "sum");
  EXPECT_EQ(c.fused.nodes[2].op, "fused_elementwise");
  expect_same_outputs(c, {{x, make(DType::kFloat32, {5, 7}, random_values(35, 4))}});
}

TEST(FuseElementwise, DomainsShapesAndCasts) {
  Graph g;
  const ValueId m = g.add_input("m", tensor(DType::kInt64, {2, 9}));
  const ValueId x = g.add_input("x", tensor(DType::kFloat32, {3, 2, 9}));
  const ValueId one = scalar_constant(g, 1.0f);
  const ValueId mf = g.add_op("cast", {m}, Attrs{{"dtype", DType::kFloat32}})[0];  // opens a float group
  const ValueId inv = g.add_op("sub", {one, mf})[0];
  const ValueId big = g.add_op("mul", {x, inv})[0];                                 // another shape
  const ValueId q = g.add_op("cast", {big}, Attrs{{"dtype", DType::kInt32}})[0];    // closes big's group
  const ValueId q2 = g.add_op("mul", {q, q})[0];                                    // int32: a new group
  g.set_outputs({{"inv", inv}, {"q2", q2}});
  Compiled c = both_ways(g);
  ASSERT_EQ(c.fused.nodes.size(), 3u) << c.fused.to_string();
  EXPECT_EQ(c.fused.nodes[0].steps.size(), 2u);  // cast, sub
  EXPECT_EQ(c.fused.nodes[1].steps.size(), 2u);  // mul, cast
  EXPECT_EQ(c.fused.nodes[2].op, "mul");
  expect_same_outputs(c, {{m, make(DType::kInt64, {2, 9}, random_values(18, 5, 0, 2))},
                          {x, make(DType::kFloat32, {3, 2, 9}, random_values(54, 6, -300, 300))}});
}

TEST(FuseElementwise, FusedResultsMatchUnfusedOnRandomChains) {
  const std::vector<std::string> unary = {"exp", "tanh", "negate", "abs", "sigmoid", "relu", "sin", "floor"};
  const std::vector<std::string> binary = {"add", "sub", "mul", "max", "min"};
  std::mt19937 gen(17);
  for (int trial = 0; trial < 20; ++trial) {
    for (DType dt : {DType::kFloat32, DType::kBFloat16, DType::kFloat64}) {
      Graph g;
      std::vector<ValueId> pool = {g.add_input("a", tensor(dt, {4, 33})), g.add_input("b", tensor(dt, {33})),
                                   g.add_input("c", tensor(dt, {4, 1}))};
      std::map<ValueId, Buf> inputs = {{pool[0], make(dt, {4, 33}, random_values(132, 10 + trial))},
                                       {pool[1], make(dt, {33}, random_values(33, 40 + trial))},
                                       {pool[2], make(dt, {4, 1}, random_values(4, 70 + trial))}};
      for (int k = 0; k < 12; ++k) {
        const ValueId a = pool[gen() % pool.size()];
        if (gen() % 2) {
          pool.push_back(g.add_op(unary[gen() % unary.size()], {a})[0]);
        } else {
          const ValueId b = pool[gen() % pool.size()];
          pool.push_back(g.add_op(binary[gen() % binary.size()], {a, b})[0]);
        }
      }
      g.set_outputs({{"y", pool.back()}, {"z", pool[pool.size() - 3]}});
      expect_same_outputs(both_ways(g), inputs);
    }
  }
}

TEST(LowerElementwise, UnsupportedDtypesAreUnimplemented) {
  Graph g;
  const ValueId x = g.add_input("x", tensor(DType::kFloat8E4M3Fn, {3}));
  g.set_outputs({{"y", g.add_op("exp", {x})[0]}});
  Program p = program_from_graph(g);
  try {
    execute(p, {{x, Buf{DType::kFloat8E4M3Fn, {3}, std::vector<uint8_t>(3)}}});
    FAIL() << "expected UNIMPLEMENTED";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented) << e.what();
    EXPECT_NE(std::string(e.what()).find("float8_e4m3fn"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maxc

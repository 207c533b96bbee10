// Unit tests of the reduction, scan and sort kernels (kernels/cpu/reduce*, scan*, sort*) and
// of their lowerings (engine/lower/reduction.cc), against naive reference loops in double.
#include <gtest/gtest.h>


#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "engine/lower/reduce_max_min.h"
#include "engine/lowering.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/scan.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/sort.h"

#include "kernel_test_util.h"

namespace maxc {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Split {
  int64_t outer, n, inner;
  int64_t size() const { return outer * n * inner; }
};

// Shapes that cover the row fast path (inner 1) around the 32-lane boundary, the strided
// path around the 256-column block, and empty and single-element extents.
const std::vector<Split> kSplits = {{1, 1, 1},   {3, 5, 1},  {2, 31, 1}, {2, 32, 1},  {4, 33, 1},  {1, 1000, 1},
                                    {2, 7, 3},   {1, 4, 300}, {3, 1, 5},  {0, 4, 2},   {2, 0, 1},   {5, 2, 257},
                                    {64, 64, 1}, {1, 65, 2}};

std::vector<float> random_floats(int64_t n, uint32_t seed) { return kernel_test::random_floats(n, seed, 4.f); }

double at(const std::vector<float>& x, const Split& s, int64_t o, int64_t a, int64_t i) {
  return x[static_cast<size_t>((o * s.n + a) * s.inner + i)];
}

TEST(Reduce, SumMeanMaxMinMatchReferenceOnEveryPath) {
  for (const Split& s : kSplits) {
    const std::vector<float> x = random_floats(s.size(), 7);
    for (auto op : {cpu::ReduceOp::kSum, cpu::ReduceOp::kMean, cpu::ReduceOp::kMax, cpu::ReduceOp::kMin}) {
      if (s.n == 0 && (op == cpu::ReduceOp::kMax || op == cpu::ReduceOp::kMin)) continue;
      std::vector<float> y(static_cast<size_t>(s.outer * s.inner), -99.0f);
      cpu::find_reduce_kernel(op, DType::kFloat32)(x.data(), y.data(), s.outer, s.n, s.inner);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          double want = op == cpu::ReduceOp::kMax ? -INFINITY : op == cpu::ReduceOp::kMin ? INFINITY : 0.0;
          for (int64_t a = 0; a < s.n; ++a) {
            const double v = at(x, s, o, a, i);
            want = op == cpu::ReduceOp::kMax ? std::max(want, v) : op == cpu::ReduceOp::kMin ? std::min(want, v) : want + v;
          }
          if (op == cpu::ReduceOp::kMean) want /= static_cast<double>(s.n);
          const float got = y[static_cast<size_t>(o * s.inner + i)];
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got));
          } else {
            EXPECT_NEAR(got, want, 1e-5 * (1 + std::abs(want)) * std::sqrt(s.n + 1.0))
                << "op " << static_cast<int>(op) << " split " << s.outer << "x" << s.n << "x" << s.inner;
          }
        }
    }
  }
}

TEST(Reduce, MaxAndMinPropagateNaNOnBothPaths) {
  for (const Split& s : {Split{1, 40, 1}, Split{1, 3, 1}, Split{1, 40, 3}}) {
    std::vector<float> x(static_cast<size_t>(s.size()), 1.0f);
    x[static_cast<size_t>(s.inner * 35 % s.size())] = kNaN;
    std::vector<float> y(static_cast<size_t>(s.inner));
    cpu::find_reduce_kernel(cpu::ReduceOp::kMax, DType::kFloat32)(x.data(), y.data(), 1, s.n, s.inner);
    EXPECT_TRUE(std::isnan(y[0])) << s.n << "x" << s.inner;
    cpu::find_reduce_kernel(cpu::ReduceOp::kMin, DType::kFloat32)(x.data(), y.data(), 1, s.n, s.inner);
    EXPECT_TRUE(std::isnan(y[0])) << s.n << "x" << s.inner;
  }
}

TEST(Reduce, IntegersSumWrapAndMeanTruncates) {
  const std::vector<int32_t> x = {std::numeric_limits<int32_t>::max(), 1, 2, 0};
  std::vector<int32_t> y(1);
  cpu::find_reduce_kernel(cpu::ReduceOp::kSum, DType::kInt32)(x.data(), y.data(), 1, 4, 1);
  EXPECT_EQ(y[0], std::numeric_limits<int32_t>::min() + 2);  // wraps like numpy's int32
  const std::vector<int64_t> z = {-7, 2, 0};
  std::vector<int64_t> m(1);
  cpu::find_reduce_kernel(cpu::ReduceOp::kMean, DType::kInt64)(z.data(), m.data(), 1, 3, 1);
  EXPECT_EQ(m[0], -1);  // -5/3 toward zero
  cpu::find_reduce_kernel(cpu::ReduceOp::kMax, DType::kInt64)(z.data(), m.data(), 1, 3, 1);
  EXPECT_EQ(m[0], 2);
  cpu::find_reduce_kernel(cpu::ReduceOp::kMin, DType::kInt64)(z.data(), m.data(), 1, 3, 1);
  EXPECT_EQ(m[0], -7);
}

TEST(Reduce, HalfFloatsComputeInFloat32) {
  std::vector<uint16_t> h(100), b(100);
  for (int i = 0; i < 100; ++i) {
    h[i] = cpu::float_to_f16(0.25f * static_cast<float>(i));
    b[i] = cpu::float_to_bf16(0.25f * static_cast<float>(i));
  }
  uint16_t y = 0;
  cpu::find_reduce_kernel(cpu::ReduceOp::kSum, DType::kFloat16)(h.data(), &y, 1, 64, 1);
  EXPECT_EQ(cpu::f16_to_float(y), 504.0f);  // exact in float32, representable in float16
  cpu::find_reduce_kernel(cpu::ReduceOp::kMean, DType::kBFloat16)(b.data(), &y, 1, 100, 1);
  EXPECT_FLOAT_EQ(cpu::bf16_to_float(y), 12.375f);
  cpu::find_reduce_kernel(cpu::ReduceOp::kMax, DType::kBFloat16)(b.data(), &y, 1, 100, 1);
  EXPECT_EQ(cpu::bf16_to_float(y), 24.75f);
}

TEST(Reduce, UnsupportedDtypesHaveNoKernel) {
  EXPECT_EQ(cpu::find_reduce_kernel(cpu::ReduceOp::kSum, DType::kBool), nullptr);
  EXPECT_EQ(cpu::find_reduce_kernel(cpu::ReduceOp::kSum, DType::kFloat8E4M3Fn), nullptr);
  EXPECT_EQ(cpu::find_arg_reduce_kernel(cpu::ArgReduceOp::kArgMax, DType::kUInt8), nullptr);
}

TEST(ArgReduce, FirstExtremeAndFirstNaNOnBothPaths) {
  for (const Split& s : kSplits) {
    if (s.n == 0) continue;
    std::vector<float> x = random_floats(s.size(), 11);
    for (float& v : x) v = std::round(v);  // many ties
    for (auto op : {cpu::ArgReduceOp::kArgMax, cpu::ArgReduceOp::kArgMin}) {
      std::vector<int64_t> y(static_cast<size_t>(s.outer * s.inner), -1);
      cpu::find_arg_reduce_kernel(op, DType::kFloat32)(x.data(), y.data(), s.outer, s.n, s.inner);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          int64_t want = 0;
          for (int64_t a = 1; a < s.n; ++a) {
            const double v = at(x, s, o, a, i), best = at(x, s, o, want, i);
            if (op == cpu::ArgReduceOp::kArgMax ? v > best : v < best) want = a;
          }
          EXPECT_EQ(y[static_cast<size_t>(o * s.inner + i)], want) << s.outer << "x" << s.n << "x" << s.inner;
        }
    }
  }
  for (const Split& s : {Split{1, 50, 1}, Split{1, 50, 2}}) {
    std::vector<float> x(static_cast<size_t>(s.size()), 0.0f);
    x[static_cast<size_t>(40 * s.inner)] = 5.0f;
    x[static_cast<size_t>(37 * s.inner)] = kNaN;
    x[static_cast<size_t>(45 * s.inner)] = kNaN;
    std::vector<int64_t> y(static_cast<size_t>(s.inner));
    cpu::find_arg_reduce_kernel(cpu::ArgReduceOp::kArgMax, DType::kFloat32)(x.data(), y.data(), 1, s.n, s.inner);
    EXPECT_EQ(y[0], 37);
    cpu::find_arg_reduce_kernel(cpu::ArgReduceOp::kArgMin, DType::kFloat32)(x.data(), y.data(), 1, s.n, s.inner);
    EXPECT_EQ(y[0], 37);
    if (s.inner > 1) EXPECT_EQ(y[1], 0);
  }
}

TEST(ArgReduce, IntegersAndHalves) {
  const std::vector<int32_t> x = {3, 9, -2, 9, -2};
  int64_t y = -1;
  cpu::find_arg_reduce_kernel(cpu::ArgReduceOp::kArgMax, DType::kInt32)(x.data(), &y, 1, 5, 1);
  EXPECT_EQ(y, 1);
  cpu::find_arg_reduce_kernel(cpu::ArgReduceOp::kArgMin, DType::kInt32)(x.data(), &y, 1, 5, 1);
  EXPECT_EQ(y, 2);
  const std::vector<uint16_t> h = {cpu::float_to_f16(1.0f), cpu::float_to_f16(-3.0f), cpu::float_to_f16(2.0f)};
  cpu::find_arg_reduce_kernel(cpu::ArgReduceOp::kArgMax, DType::kFloat16)(h.data(), &y, 1, 3, 1);
  EXPECT_EQ(y, 2);
}

TEST(Cumsum, EveryFlagOnBothPaths) {
  for (const Split& s : kSplits) {
    const std::vector<float> x = random_floats(s.size(), 3);
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        std::vector<float> y(x.size(), -99.0f);
        cpu::find_cumsum_kernel(DType::kFloat32)(x.data(), y.data(), s.outer, s.n, s.inner, exclusive, reverse);
        for (int64_t o = 0; o < s.outer; ++o)
          for (int64_t i = 0; i < s.inner; ++i) {
            double acc = 0;
            for (int64_t step = 0; step < s.n; ++step) {
              const int64_t a = reverse ? s.n - 1 - step : step;
              if (!exclusive) acc += at(x, s, o, a, i);
              EXPECT_NEAR(y[static_cast<size_t>((o * s.n + a) * s.inner + i)], acc, 1e-4 * (1 + step))
                  << "exclusive " << exclusive << " reverse " << reverse;
              if (exclusive) acc += at(x, s, o, a, i);
            }
          }
      }
  }
}

TEST(Cumsum, InPlaceAndIntegers) {
  std::vector<int64_t> x = {1, 2, 3, 4};
  cpu::find_cumsum_kernel(DType::kInt64)(x.data(), x.data(), 1, 4, 1, true, false);
  EXPECT_EQ(x, (std::vector<int64_t>{0, 1, 3, 6}));
  std::vector<int32_t> w = {std::numeric_limits<int32_t>::max(), 1};
  cpu::find_cumsum_kernel(DType::kInt32)(w.data(), w.data(), 1, 2, 1, false, false);
  EXPECT_EQ(w[1], std::numeric_limits<int32_t>::min());
  std::vector<float> c = {1, 10, 2, 20, 3, 30};  // [3, 2], axis 0, in place, reversed
  cpu::find_cumsum_kernel(DType::kFloat32)(c.data(), c.data(), 1, 3, 2, false, true);
  EXPECT_EQ(c, (std::vector<float>{6, 60, 5, 50, 3, 30}));
}

// The reference top_k of one line: a stable sort by descending value with NaN first.
std::vector<int64_t> reference_order(const std::vector<float>& line, bool descending) {
  std::vector<int64_t> idx(line.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    const float va = line[a], vb = line[b];
    if (std::isnan(va) || std::isnan(vb)) return descending ? (std::isnan(va) && !std::isnan(vb)) : (!std::isnan(va) && std::isnan(vb));
    return descending ? va > vb : va < vb;
  });
  return idx;
}

TEST(TopK, LargestFirstWithTiesByIndexAnyAxis) {
  for (const Split& s : kSplits) {
    std::vector<float> x = random_floats(s.size(), 5);
    for (float& v : x) v = std::round(v);
    if (s.size() > 3) x[2] = kNaN;
    for (int64_t k : {int64_t{0}, int64_t{1}, s.n / 2, s.n}) {
      if (k > s.n) continue;
      const int64_t lines = s.outer * s.inner, slots = 3;
      std::vector<float> values(static_cast<size_t>(lines * k));
      std::vector<int64_t> indices(values.size());
      std::vector<uint8_t> scratch(cpu::sort_scratch_bytes(DType::kFloat32, s.n, slots));
      cpu::find_top_k_kernel(DType::kFloat32)(x.data(), values.data(), indices.data(), s.outer, s.n, s.inner, k,
                                              scratch.data(), slots);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          std::vector<float> line(static_cast<size_t>(s.n));
          for (int64_t a = 0; a < s.n; ++a) line[a] = static_cast<float>(at(x, s, o, a, i));
          const std::vector<int64_t> want = reference_order(line, true);
          for (int64_t a = 0; a < k; ++a) {
            const size_t pos = static_cast<size_t>((o * k + a) * s.inner + i);
            EXPECT_EQ(indices[pos], want[a]) << s.outer << "x" << s.n << "x" << s.inner << " k " << k;
            const float v = line[want[a]];
            if (std::isnan(v)) {
              EXPECT_TRUE(std::isnan(values[pos]));
            } else {
              EXPECT_EQ(values[pos], v);
            }
          }
        }
    }
  }
}

TEST(Argsort, BothDirectionsStableWithNaN) {
  for (int64_t n : {0, 1, 2, 17, 1000}) {
    std::vector<float> x = random_floats(n, 9);
    for (float& v : x) v = std::round(v);
    if (n > 5) x[5] = kNaN;
    for (bool ascending : {true, false}) {
      std::vector<int64_t> y(static_cast<size_t>(n), -1);
      std::vector<uint8_t> scratch(cpu::sort_scratch_bytes(DType::kFloat32, n, 1) + 1);
      cpu::find_argsort_kernel(DType::kFloat32)(x.data(), y.data(), n, ascending, scratch.data());
      EXPECT_EQ(y, reference_order(x, !ascending)) << "n " << n << " ascending " << ascending;
    }
  }
  const std::vector<int64_t> ints = {5, -1, 5, 3};
  std::vector<int64_t> y(4);
  std::vector<uint8_t> scratch(cpu::sort_scratch_bytes(DType::kInt64, 4, 1));
  cpu::find_argsort_kernel(DType::kInt64)(ints.data(), y.data(), 4, false, scratch.data());
  EXPECT_EQ(y, (std::vector<int64_t>{0, 2, 3, 1}));
}

// ---- lowerings --------------------------------------------------------------------------

struct Lowering {
  Node node;
  std::vector<Shape> inputs, outputs;
  std::vector<const Constant*> constants;
  int32_t threads = 2;

  Lowered lower() {
    constants.assign(inputs.size(), nullptr);
    LowerContext ctx{node, inputs, outputs, constants, [](ValueId) { return Shape{}; }, threads};
    if (node.op == "max" || node.op == "min") return lower_reduce_max_min(ctx);
    const LowerFn* fn = KernelTable::builtin().find(node.op);
    if (!fn) throw Error(Code::kNotFound, "no lowering for " + node.op);
    return (*fn)(ctx);
  }
};

Node node(std::string op, Attrs attrs, size_t num_inputs = 1, size_t num_outputs = 1) {
  Node n;
  n.op = std::move(op);
  n.attrs = std::move(attrs);
  for (size_t i = 0; i < num_inputs; ++i) n.inputs.push_back(static_cast<ValueId>(i));
  for (size_t i = 0; i < num_outputs; ++i) n.outputs.push_back(static_cast<ValueId>(num_inputs + i));
  return n;
}

Code code_of(Lowering& l) {
  try {
    l.lower();
  } catch (const Error& e) {
    return e.code();
  }
  return Code::kOk;
}

TEST(ReductionLowering, SumOverAMiddleAxis) {
  Lowering l{node("sum", {{"axis", int64_t{-2}}}), {{DType::kFloat32, {2, 3, 2}}}, {{DType::kFloat32, {2, 1, 2}}}};
  const Lowered k = l.lower();
  std::vector<float> x(12);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<float> y(4);
  const void* ins[] = {x.data()};
  void* outs[] = {y.data()};
  k.run(KernelArgs{ins, outs, nullptr});
  EXPECT_EQ(y, (std::vector<float>{6, 9, 24, 27}));
}

TEST(ReductionLowering, MaxMinThroughTheSharedEntryPoint) {
  Lowering l{node("min", {{"axis", int64_t{0}}}), {{DType::kInt32, {3}}}, {{DType::kInt32, {1}}}};
  const Lowered k = l.lower();
  const std::vector<int32_t> x = {4, -2, 9};
  int32_t y = 0;
  const void* ins[] = {x.data()};
  void* outs[] = {&y};
  k.run(KernelArgs{ins, outs, nullptr});
  EXPECT_EQ(y, -2);
}

TEST(ReductionLowering, ErrorsCarryCodes) {
  Lowering bool_sum{node("sum", {{"axis", int64_t{0}}}), {{DType::kBool, {3}}}, {{DType::kBool, {1}}}};
  EXPECT_EQ(code_of(bool_sum), Code::kUnimplemented);
  Lowering empty_max{node("max", {{"axis", int64_t{1}}}), {{DType::kFloat32, {2, 0}}}, {{DType::kFloat32, {2, 1}}}};
  EXPECT_EQ(code_of(empty_max), Code::kInvalidArgument);
  Lowering empty_argmax{node("argmax", {{"axis", int64_t{1}}}), {{DType::kFloat32, {2, 0}}}, {{DType::kInt64, {2, 1}}}};
  EXPECT_EQ(code_of(empty_argmax), Code::kInvalidArgument);
  Lowering empty_sum{node("sum", {{"axis", int64_t{1}}}), {{DType::kFloat32, {2, 0}}}, {{DType::kFloat32, {2, 1}}}};
  EXPECT_EQ(code_of(empty_sum), Code::kOk);
  Lowering bad_axis{node("mean", {{"axis", int64_t{3}}}), {{DType::kFloat32, {2, 2}}}, {{DType::kFloat32, {2, 1}}}};
  EXPECT_EQ(code_of(bad_axis), Code::kInvalidArgument);
  Lowering argsort2d{node("argsort", {{"ascending", true}}), {{DType::kFloat32, {2, 2}}}, {{DType::kInt64, {2, 2}}}};
  EXPECT_EQ(code_of(argsort2d), Code::kUnimplemented);
}

TEST(ReductionLowering, TopKAsksForScratchPerThread) {
  Lowering l{node("top_k", {{"axis", int64_t{-1}}, {"k", int64_t{2}}}, 1, 2),
             {{DType::kFloat32, {4, 5}}},
             {{DType::kFloat32, {4, 2}}, {DType::kInt64, {4, 2}}}};
  const Lowered k = l.lower();
  EXPECT_EQ(k.scratch_bytes, cpu::sort_scratch_bytes(DType::kFloat32, 5, 2));
  std::vector<float> x(20);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<float> v(8);
  std::vector<int64_t> idx(8);
  std::vector<uint8_t> scratch(k.scratch_bytes);
  const void* ins[] = {x.data()};
  void* outs[] = {v.data(), idx.data()};
  k.run(KernelArgs{ins, outs, scratch.data()});
  EXPECT_EQ(v, (std::vector<float>{4, 3, 9, 8, 14, 13, 19, 18}));
  EXPECT_EQ(idx, (std::vector<int64_t>{4, 3, 4, 3, 4, 3, 4, 3}));
}

TEST(ReductionLowering, LargeReductionsRunOnThePool) {
  cpu::ThreadPool pool(2);
  cpu::PoolScope scope(&pool);
  const Split s{256, 1024, 1};
  const std::vector<float> x = random_floats(s.size(), 1);
  std::vector<float> y(256);
  cpu::find_reduce_kernel(cpu::ReduceOp::kSum, DType::kFloat32)(x.data(), y.data(), s.outer, s.n, s.inner);
  for (int64_t o = 0; o < s.outer; ++o) {
    double want = 0;
    for (int64_t a = 0; a < s.n; ++a) want += at(x, s, o, a, 0);
    ASSERT_NEAR(y[o], want, 1e-3) << o;
  }
}

}  // namespace
}  // namespace maxc

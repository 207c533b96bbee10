// Unit tests of the softmax and normalization kernels (kernels/cpu/softmax*, norm*), their
// lowerings (engine/lower/normalization.cc) and the add + layer_norm fusion pass
// (compiler/fuse_layer_norm.cc), against naive reference loops in double.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "compiler/passes.h"
#include "engine/lowering.h"
#include "graph/graph.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/norm.h"
#include "kernels/cpu/softmax.h"
#include "kernels/cpu/softmax_exp.h"

namespace maxc {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> random_floats(int64_t n, uint32_t seed, float scale = 4.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(gen);
  return v;
}

TEST(SoftmaxExp, WithinTwoUlpOfExpAndExactAtTheEdges) {
  std::vector<float> x;
  for (float v = -100.0f; v <= 90.0f; v += 0.0137f) x.push_back(v);
  x.insert(x.end(), {0.0f, -0.0f, -INFINITY, INFINITY, kNaN, -87.0f, 88.5f});
  std::vector<float> y(x.size());
  double want_sum = 0;
  for (float v : x)
    if (std::isfinite(v) && v < 80.0f) want_sum += std::exp(static_cast<double>(v));
  for (size_t i = 0; i < x.size(); ++i) {
    cpu::exp_shifted_sum(&x[i], 0.0f, &y[i], 1);
    const double want = std::exp(static_cast<double>(x[i]));
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
    } else if (want < 1.2e-38) {
      EXPECT_LE(y[i], 1.2e-38f) << x[i];
    } else if (want > std::numeric_limits<float>::max()) {
      EXPECT_EQ(y[i], INFINITY) << x[i];
    } else {
      EXPECT_NEAR(y[i], want, 2.5e-7 * want) << x[i];
    }
  }
  // The vector body, the masked tail and the sum agree with the one-at-a-time results.
  std::vector<float> finite;
  for (float v : x)
    if (std::isfinite(v) && v < 80.0f) finite.push_back(v);
  std::vector<float> y2(finite.size());
  const float sum = cpu::exp_shifted_sum(finite.data(), 0.0f, y2.data(), static_cast<int64_t>(finite.size()));
  EXPECT_NEAR(sum, want_sum, 1e-5 * want_sum);
}

struct Split {
  int64_t outer, n, inner;
  int64_t size() const { return outer * n * inner; }
};

const std::vector<Split> kSplits = {{1, 1, 1}, {3, 5, 1},  {2, 17, 1}, {4, 33, 1}, {1, 1000, 1}, {2, 7, 3},
                                    {1, 4, 300}, {3, 1, 5}, {0, 4, 2}, {2, 0, 1}, {2, 9, 257},  {128, 128, 1}};

TEST(Softmax, BothFormsMatchReferenceOnEveryPath) {
  for (const Split& s : kSplits) {
    const std::vector<float> x = random_floats(s.size(), 21, 10.0f);
    for (bool log : {false, true}) {
      std::vector<float> y(x.size(), -99.0f);
      cpu::find_softmax_kernel(DType::kFloat32, log)(x.data(), y.data(), s.outer, s.n, s.inner);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          double m = -INFINITY, sum = 0;
          auto at = [&](int64_t a) { return static_cast<size_t>((o * s.n + a) * s.inner + i); };
          for (int64_t a = 0; a < s.n; ++a) m = std::max(m, static_cast<double>(x[at(a)]));
          for (int64_t a = 0; a < s.n; ++a) sum += std::exp(x[at(a)] - m);
          for (int64_t a = 0; a < s.n; ++a) {
            const double want = log ? (x[at(a)] - m) - std::log(sum) : std::exp(x[at(a)] - m) / sum;
            EXPECT_NEAR(y[at(a)], want, 2e-6 * (1 + std::abs(want)))
                << (log ? "log" : "") << "softmax " << s.outer << "x" << s.n << "x" << s.inner;
          }
        }
    }
  }
}

TEST(Softmax, InPlaceMasksAndNaN) {
  std::vector<float> x = {1.0f, -INFINITY, 1.0f, -INFINITY};
  cpu::find_softmax_kernel(DType::kFloat32, false)(x.data(), x.data(), 1, 4, 1);
  EXPECT_EQ(x, (std::vector<float>{0.5f, 0.0f, 0.5f, 0.0f}));
  std::vector<float> nan_row = {1.0f, kNaN, 2.0f};
  std::vector<float> y(3);
  for (bool log : {false, true}) {
    cpu::find_softmax_kernel(DType::kFloat32, log)(nan_row.data(), y.data(), 1, 3, 1);
    for (float v : y) EXPECT_TRUE(std::isnan(v));
  }
}

TEST(Softmax, HalfFloatsAndDouble) {
  const std::vector<float> xf = random_floats(2 * 300, 4);
  std::vector<uint16_t> h(xf.size()), hy(xf.size());
  for (size_t i = 0; i < xf.size(); ++i) h[i] = cpu::float_to_bf16(xf[i]);
  std::vector<double> xd(xf.begin(), xf.end()), yd(xf.size());
  for (const Split& s : {Split{2, 300, 1}, Split{1, 2, 300}}) {
    cpu::find_softmax_kernel(DType::kBFloat16, false)(h.data(), hy.data(), s.outer, s.n, s.inner);
    cpu::find_softmax_kernel(DType::kFloat64, false)(xd.data(), yd.data(), s.outer, s.n, s.inner);
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        double m = -INFINITY, sum = 0, dsum = 0, dm = -INFINITY;
        auto at = [&](int64_t a) { return static_cast<size_t>((o * s.n + a) * s.inner + i); };
        for (int64_t a = 0; a < s.n; ++a) {
          m = std::max(m, static_cast<double>(cpu::bf16_to_float(h[at(a)])));
          dm = std::max(dm, xd[at(a)]);
        }
        for (int64_t a = 0; a < s.n; ++a) {
          sum += std::exp(cpu::bf16_to_float(h[at(a)]) - m);
          dsum += std::exp(xd[at(a)] - dm);
        }
        for (int64_t a = 0; a < s.n; ++a) {
          const double want = std::exp(cpu::bf16_to_float(h[at(a)]) - m) / sum;
          EXPECT_NEAR(cpu::bf16_to_float(hy[at(a)]), want, 8e-3 * want);
          EXPECT_NEAR(yd[at(a)], std::exp(xd[at(a)] - dm) / dsum, 1e-14);
        }
      }
  }
  EXPECT_EQ(cpu::find_softmax_kernel(DType::kInt32, false), nullptr);
}

void reference_layer_norm(const float* x, const float* g, const float* b, int64_t d, double eps, double* y) {
  double mean = 0, var = 0;
  for (int64_t i = 0; i < d; ++i) mean += x[i];
  mean /= static_cast<double>(d);
  for (int64_t i = 0; i < d; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<double>(d);
  for (int64_t i = 0; i < d; ++i) y[i] = (x[i] - mean) / std::sqrt(var + eps) * g[i] + b[i];
}

TEST(LayerNorm, MatchesReferenceForRowWidths) {
  for (int64_t d : {1, 3, 32, 33, 384, 1000}) {
    const int64_t rows = 5;
    std::vector<float> x = random_floats(rows * d, 2), g = random_floats(d, 3), b = random_floats(d, 4);
    for (size_t i = 0; i < static_cast<size_t>(d); ++i) x[i] += 1000.0f;  // a large mean: two-pass variance holds
    std::vector<float> y(x.size());
    cpu::find_layer_norm_kernel(DType::kFloat32)(x.data(), g.data(), b.data(), y.data(), rows, d, 1e-5);
    std::vector<double> want(static_cast<size_t>(d));
    for (int64_t r = 0; r < rows; ++r) {
      reference_layer_norm(&x[r * d], g.data(), b.data(), d, 1e-5, want.data());
      for (int64_t i = 0; i < d; ++i)
        EXPECT_NEAR(y[r * d + i], want[i], 2e-4 * (1 + std::abs(want[i]))) << "d " << d << " row " << r;
    }
  }
}

TEST(AddLayerNorm, EqualsAddThenLayerNormWithAndWithoutSumAndBroadcast) {
  const int64_t rows = 4, d = 40;
  const std::vector<float> x = random_floats(rows * d, 5), r = random_floats(rows * d, 6), g = random_floats(d, 7),
                           b = random_floats(d, 8);
  for (int64_t stride : {d, int64_t{0}}) {
    std::vector<float> sum(x.size());
    for (int64_t k = 0; k < rows; ++k)
      for (int64_t i = 0; i < d; ++i) sum[k * d + i] = x[k * d + i] + r[k * stride + i];
    std::vector<float> want(x.size()), y(x.size()), s(x.size(), -1.0f), y2(x.size());
    cpu::find_layer_norm_kernel(DType::kFloat32)(sum.data(), g.data(), b.data(), want.data(), rows, d, 1e-5);
    const auto fused = cpu::find_add_layer_norm_kernel(DType::kFloat32);
    fused(x.data(), r.data(), stride, g.data(), b.data(), y.data(), s.data(), rows, d, 1e-5);
    EXPECT_EQ(y, want);
    EXPECT_EQ(s, sum);
    fused(x.data(), r.data(), stride, g.data(), b.data(), y2.data(), nullptr, rows, d, 1e-5);
    EXPECT_EQ(y2, want);
  }
}

TEST(RmsNorm, BothCastOrdersAndOffset) {
  const int64_t rows = 3, d = 50;
  const std::vector<float> x = random_floats(rows * d, 9), w = random_floats(d, 10);
  std::vector<float> y(x.size());
  cpu::find_rms_norm_kernel(DType::kFloat32)(x.data(), w.data(), y.data(), rows, d, 1e-6, 1.0, true);
  for (int64_t k = 0; k < rows; ++k) {
    double ms = 0;
    for (int64_t i = 0; i < d; ++i) ms += static_cast<double>(x[k * d + i]) * x[k * d + i];
    const double scale = 1.0 / std::sqrt(ms / d + 1e-6);
    for (int64_t i = 0; i < d; ++i)
      EXPECT_NEAR(y[k * d + i], x[k * d + i] * scale * (w[i] + 1.0), 1e-5 * (1 + std::abs(y[k * d + i])));
  }
  // bfloat16 with multiply_before_cast false rounds x·rsqrt and (w + offset) to bfloat16.
  std::vector<uint16_t> xb(x.size()), wb(w.size()), yb(x.size());
  for (size_t i = 0; i < x.size(); ++i) xb[i] = cpu::float_to_bf16(x[i]);
  for (size_t i = 0; i < w.size(); ++i) wb[i] = cpu::float_to_bf16(w[i]);
  cpu::find_rms_norm_kernel(DType::kBFloat16)(xb.data(), wb.data(), yb.data(), rows, d, 1e-6, 0.5, false);
  for (int64_t k = 0; k < rows; ++k) {
    float ms = 0;
    for (int64_t i = 0; i < d; ++i) ms += cpu::bf16_to_float(xb[k * d + i]) * cpu::bf16_to_float(xb[k * d + i]);
    const float scale = 1.0f / std::sqrt(ms / d + 1e-6f);
    for (int64_t i = 0; i < d; ++i) {
      const float n = cpu::bf16_to_float(cpu::float_to_bf16(cpu::bf16_to_float(xb[k * d + i]) * scale));
      const float wo = cpu::bf16_to_float(cpu::float_to_bf16(cpu::bf16_to_float(wb[i]) + 0.5f));
      const float want = cpu::bf16_to_float(cpu::float_to_bf16(n * wo));
      EXPECT_NEAR(cpu::bf16_to_float(yb[k * d + i]), want, 1e-2 * std::abs(want) + 1e-6);
    }
  }
}

// ---- lowerings --------------------------------------------------------------------------

Lowered lower(const std::string& op, Attrs attrs, std::vector<Shape> inputs, std::vector<Shape> outputs) {
  Node n;
  n.op = op;
  n.attrs = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i) n.inputs.push_back(static_cast<ValueId>(i));
  for (size_t i = 0; i < outputs.size(); ++i) n.outputs.push_back(static_cast<ValueId>(inputs.size() + i));
  std::vector<const Constant*> constants(inputs.size(), nullptr);
  LowerContext ctx{n, inputs, outputs, constants, [](ValueId) { return Shape{}; }, 2};
  return (*KernelTable::builtin().find(op))(ctx);
}

TEST(NormalizationLowering, SoftmaxOverTheFirstAxisInPlace) {
  const Shape s{DType::kFloat32, {2, 3}};
  const Lowered k = lower("softmax", {{"axis", int64_t{0}}}, {s}, {s});
  EXPECT_EQ(k.inplace_input, 0);
  std::vector<float> x = {0, 1, 2, 0, 1, 2};
  const void* ins[] = {x.data()};
  void* outs[] = {x.data()};
  k.run(KernelArgs{ins, outs, nullptr});
  for (float v : x) EXPECT_FLOAT_EQ(v, 0.5f);
}

TEST(NormalizationLowering, UnsupportedDtypeAndMismatchedParameters) {
  const Shape h{DType::kFloat8E4M3Fn, {2, 3}};
  try {
    lower("softmax", {{"axis", int64_t{-1}}}, {h}, {h});
    ADD_FAILURE() << "expected UNIMPLEMENTED";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("float8_e4m3fn"), std::string::npos) << e.what();
  }
  const Shape x{DType::kFloat32, {2, 3}}, g{DType::kFloat32, {4}};
  try {
    lower("layer_norm", {{"epsilon", 1e-5}}, {x, g, g}, {x});
    ADD_FAILURE() << "expected INVALID_ARGUMENT";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
  }
}

TEST(NormalizationLowering, AddLayerNormWithTheSumAsSecondOutput) {
  const Shape x{DType::kFloat32, {2, 2}}, g{DType::kFloat32, {2}};
  const Lowered k = lower("add_layer_norm", {{"epsilon", 1e-5}}, {x, g, g, g}, {x, x});
  const std::vector<float> a = {1, 3, 5, 7}, row = {1, -1}, gamma = {1, 1}, beta = {0, 10};
  std::vector<float> y(4), s(4);
  const void* ins[] = {a.data(), row.data(), gamma.data(), beta.data()};
  void* outs[] = {y.data(), s.data()};
  k.run(KernelArgs{ins, outs, nullptr});
  EXPECT_EQ(s, (std::vector<float>{2, 2, 6, 6}));
  EXPECT_EQ(y, (std::vector<float>{0, 10, 0, 10}));  // rows of equal values normalize to 0
}

// ---- the fusion pass --------------------------------------------------------------------

struct LayerNormGraph {
  Graph g;
  ValueId x, r, gamma, beta, sum, y;

  // add(x, r) -> layer_norm, with r of shape `residual`.
  explicit LayerNormGraph(std::vector<Dim> residual) {
    x = g.add_input("x", TensorType{DType::kFloat32, {"batch", 4}});
    r = g.add_input("r", TensorType{DType::kFloat32, std::move(residual)});
    gamma = g.add_weight("gamma", TensorType{DType::kFloat32, {4}});
    beta = g.add_weight("beta", TensorType{DType::kFloat32, {4}});
    sum = g.add_op("add", {x, r})[0];
    y = g.add_op("layer_norm", {sum, gamma, beta}, {{"epsilon", 1e-5}})[0];
  }
};

TEST(FuseAddLayerNorm, FusesTheResidualAdd) {
  LayerNormGraph t({"batch", 4});
  t.g.set_outputs({{"y", t.y}});
  Program p = program_from_graph(t.g);
  fuse_add_layer_norm(p);
  ASSERT_EQ(p.nodes.size(), 1u) << p.to_string();
  const Node& n = p.nodes[0];
  EXPECT_EQ(n.op, "add_layer_norm");
  EXPECT_EQ(n.inputs, (std::vector<ValueId>{t.x, t.r, t.gamma, t.beta}));
  EXPECT_EQ(n.outputs, (std::vector<ValueId>{t.y}));
  EXPECT_EQ(n.attrs.get<double>("epsilon"), 1e-5);
}

TEST(FuseAddLayerNorm, KeepsTheSumWhenItIsReadElsewhere) {
  LayerNormGraph t({4});  // a row broadcast over the batch; it goes second
  const ValueId twice = t.g.add_op("mul", {t.sum, t.sum})[0];
  t.g.set_outputs({{"y", t.y}, {"twice", twice}});
  Program p = program_from_graph(t.g);
  fuse_add_layer_norm(p);
  ASSERT_EQ(p.nodes.size(), 2u) << p.to_string();
  EXPECT_EQ(p.nodes[0].op, "add_layer_norm");
  EXPECT_EQ(p.nodes[0].inputs, (std::vector<ValueId>{t.x, t.r, t.gamma, t.beta}));
  EXPECT_EQ(p.nodes[0].outputs, (std::vector<ValueId>{t.y, t.sum}));
  EXPECT_EQ(p.nodes[1].op, "mul");
}

TEST(FuseAddLayerNorm, LeavesTheSumWhenGammaComesAfterTheAdd) {
  // The fused node would have to sit at the add (the sum has an earlier reader), where
  // gamma does not exist yet: the pattern stays as it is.
  Graph g;
  const ValueId x = g.add_input("x", TensorType{DType::kFloat32, {2, 4}});
  const ValueId w = g.add_weight("w", TensorType{DType::kFloat32, {4}});
  const ValueId sum = g.add_op("add", {x, x})[0];
  const ValueId gamma = g.add_op("mul", {w, w})[0];
  const ValueId y = g.add_op("layer_norm", {sum, gamma, w}, {{"epsilon", 1e-5}})[0];
  g.set_outputs({{"y", y}, {"sum", sum}});
  Program p = program_from_graph(g);
  fuse_add_layer_norm(p);
  ASSERT_EQ(p.nodes.size(), 3u) << p.to_string();
  EXPECT_EQ(p.nodes[0].op, "add");
  EXPECT_EQ(p.nodes[2].op, "layer_norm");
}

TEST(FuseAddLayerNorm, LeavesOtherBroadcastsAlone) {
  LayerNormGraph t({"batch", 1});
  t.g.set_outputs({{"y", t.y}});
  Program p = program_from_graph(t.g);
  fuse_add_layer_norm(p);
  ASSERT_EQ(p.nodes.size(), 2u);
  EXPECT_EQ(p.nodes[0].op, "add");
  EXPECT_EQ(p.nodes[1].op, "layer_norm");
}

}  // namespace
}  // namespace maxc

// BatchNormalization with initializer parameters, as an inference CNN exports it: the
// importer computes its affine as constants (no parameter becomes a weight), the engine
// folds it into the convolution before it, and the result is the ONNX definition's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

std::vector<float> pattern(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 7) % 11);
  return v;
}

// relu(BN(conv1x1(x, w))) with x [1, C, H, W], w [F, C, 1, 1], computed as ONNX defines it.
std::vector<float> reference(const std::vector<float>& x, const std::vector<float>& w, int C, int F, int P,
                             const std::vector<std::vector<float>>& bn) {
  std::vector<float> y(static_cast<size_t>(F * P));
  for (int f = 0; f < F; ++f)
    for (int p = 0; p < P; ++p) {
      float s = 0;
      for (int c = 0; c < C; ++c) s += w[f * C + c] * x[c * P + p];
      const float n = (s - bn[2][f]) / std::sqrt(bn[3][f] + 1e-5f) * bn[0][f] + bn[1][f];
      y[f * P + p] = std::max(n, 0.f);
    }
  return y;
}

TEST(OnnxBatchNorm, InitializerParametersFoldIntoTheConvolution) {
  const int C = 8, F = 16, H = 3, W = 5;
  const std::vector<float> w = pattern(F * C, 0.05f, -0.25f);
  const std::vector<std::vector<float>> bn = {pattern(F, 0.2f, 0.5f), pattern(F, 0.1f, -0.5f),
                                              pattern(F, 0.03f, -0.1f), pattern(F, 0.3f, 0.2f)};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{C}, int64_t{H}, int64_t{W}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_f32("w", {F, C, 1, 1}, w), tensor_f32("s", {F}, bn[0]), tensor_f32("b", {F}, bn[1]),
                    tensor_f32("m", {F}, bn[2]), tensor_f32("v", {F}, bn[3])};
  g.nodes = {node("Conv", {"x", "w"}, {"c"}, {attr_ints("kernel_shape", {1, 1})}),
             node("BatchNormalization", {"c", "s", "b", "m", "v"}, {"n"}, {attr_float("epsilon", 1e-5f)}),
             node("Relu", {"n"}, {"y"})};
  ImportedModel imported = import_string(model(g));
  ASSERT_EQ(imported.weights.size(), 1u);  // the filter only
  EXPECT_EQ(imported.weights[0].first, "w");
  const std::vector<float> x = pattern(C * H * W, 0.1f, -0.4f);
  auto compiled = compile_imported(std::move(imported));
  const std::vector<Ref<Tensor>> in = {f32_tensor({1, C, H, W}, x)};
  const auto out = compiled->execute(in);
  const Program& p = compiled->compiled()->program();
  ASSERT_EQ(std::count_if(p.nodes.begin(), p.nodes.end(), [](const Node& n) { return n.op == "fused_conv2d"; }), 1)
      << p.to_string();
  expect_near(floats_of(out[0]), reference(x, w, C, F, H * W, bn), 1e-5f);
}

}  // namespace
}  // namespace maxc::onnx::testing

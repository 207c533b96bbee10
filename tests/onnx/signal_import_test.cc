// Windows, MelWeightMatrix, DFT and STFT (constants and matmuls computed at import) and
// RotaryEmbedding, against direct C++ evaluations of the ONNX formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

using Vec = std::vector<float>;
constexpr double kPi = std::numbers::pi;

Vec ramp(size_t n, float scale, float offset) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 3) % 7) - 0.05f * static_cast<float>(i % 4);
  return v;
}

TEST(OnnxSignal, HannWindowOfKnownSize) {
  GraphSpec g;
  g.initializers = {tensor_i64("n", {}, {8})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("HannWindow", {"n"}, {"y"}, {attr_int("periodic", 0)})};
  auto out = run_model(model(g, 17), {});
  Vec want;
  for (int i = 0; i < 8; ++i) want.push_back(static_cast<float>(std::pow(std::sin(kPi * i / 7), 2)));
  expect_near(floats_of(out[0]), want, 1e-6f);
}

TEST(OnnxSignal, WindowOfRuntimeSizeIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("n", kInt64, {})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("BlackmanWindow", {"n"}, {"y"}, {}, "win")};
  Error e = import_error(model(g, 17));
  EXPECT_EQ(e.code(), Code::kUnimplemented);
  EXPECT_NE(std::string(e.what()).find("node 0 'win' (BlackmanWindow)"), std::string::npos) << e.what();
}

TEST(OnnxSignal, MelWeightMatrixMatchesTheReference) {
  GraphSpec g;
  g.initializers = {tensor_i64("mels", {}, {3}), tensor_i64("dft", {}, {32}), tensor_i64("rate", {}, {16000}),
                    tensor_f32("lo", {}, {100.f}), tensor_f32("hi", {}, {8000.f})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("MelWeightMatrix", {"mels", "dft", "rate", "lo", "hi"}, {"y"})};
  auto out = run_model(model(g, 17), {});
  Vec want(17 * 3, 0.f);
  // Values of onnx.reference's MelWeightMatrix(3, 32, 16000, 100, 8000), rows 1..8.
  Vec head = {1, 0, 0, 0, 1, 0, 0, 0.666667f, 0.333333f, 0, 0.333333f, 0.666667f,
              0, 0, 1, 0, 0, 0.75f, 0, 0, 0.5f, 0, 0, 0.25f};
  std::copy(head.begin(), head.end(), want.begin() + 3);
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{17, 3}));
  expect_near(floats_of(out[0]), want, 1e-5f);
}

// X[m] = Σ x[k] e^{-2πimk/n} along axis 1 of a real [B, n, 1] signal, bins [0, count).
Vec naive_dft(const Vec& x, int64_t batch, int64_t n, int64_t count, const Vec* window = nullptr) {
  Vec y;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t m = 0; m < count; ++m) {
      double re = 0, im = 0;
      for (int64_t k = 0; k < n; ++k) {
        double v = x[static_cast<size_t>(b * n + k)] * (window ? (*window)[static_cast<size_t>(k)] : 1.f);
        re += v * std::cos(2 * kPi * m * k / n);
        im -= v * std::sin(2 * kPi * m * k / n);
      }
      y.push_back(static_cast<float>(re));
      y.push_back(static_cast<float>(im));
    }
  return y;
}

TEST(OnnxSignal, OneSidedDftAndItsInverse) {
  const int64_t B = 2, N = 6;
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {B, N, int64_t{1}})};
  g.outputs = {value_info("spec", kFloat, {}), value_info("back", kFloat, {})};
  g.nodes = {node("DFT", {"x"}, {"spec"}, {attr_int("axis", 1), attr_int("onesided", 1)}),
             node("DFT", {"spec"}, {"back"}, {attr_int("axis", 1), attr_int("onesided", 1), attr_int("inverse", 1)})};
  Vec x = ramp(B * N, 0.4f, -1.f);
  auto out = run_model(model(g, 19), {f32_tensor({B, N, 1}, x)});
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{B, N / 2 + 1, 2}));
  expect_near(floats_of(out[0]), naive_dft(x, B, N, N / 2 + 1));
  EXPECT_EQ(out[1]->dims(), (std::vector<int64_t>{B, N, 1}));
  expect_near(floats_of(out[1]), x);
}

TEST(OnnxSignal, DftAlongARuntimeAxisIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{4}, int64_t{1}}), value_info("axis", kInt64, {})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("DFT", {"x", "", "axis"}, {"y"}, {}, "fft")};
  Error e = import_error(model(g, 20));
  EXPECT_EQ(e.code(), Code::kUnimplemented);
  EXPECT_NE(std::string(e.what()).find("node 0 'fft' (DFT)"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("'axis'"), std::string::npos) << e.what();
}

TEST(OnnxSignal, StftWithAHannWindow) {
  const int64_t L = 20, F = 8, step = 4, frames = 1 + (L - F) / step;
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, L, int64_t{1}})};
  g.initializers = {tensor_i64("step", {}, {step}), tensor_i64("f", {}, {F})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("HannWindow", {"f"}, {"win"}), node("STFT", {"x", "step", "win"}, {"y"})};
  Vec x = ramp(L, 0.3f, -0.9f);
  auto out = run_model(model(g, 17), {f32_tensor({1, L, 1}, x)});
  Vec window;
  for (int64_t k = 0; k < F; ++k) window.push_back(static_cast<float>(0.5 - 0.5 * std::cos(2 * kPi * k / F)));
  Vec want;
  for (int64_t f = 0; f < frames; ++f) {
    Vec frame(x.begin() + f * step, x.begin() + f * step + F);
    Vec bins = naive_dft(frame, 1, F, F / 2 + 1, &window);
    want.insert(want.end(), bins.begin(), bins.end());
  }
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{1, frames, F / 2 + 1, 2}));
  expect_near(floats_of(out[0]), want);
}

// ---- RotaryEmbedding ----

TEST(OnnxRotaryEmbedding, InterleavedPartialRotationWithPositionIds) {
  const int64_t B = 1, H = 2, S = 2, D = 6, R = 4, P = 5;
  Vec x = ramp(B * H * S * D, 0.2f, -0.5f), cos_cache = ramp(P * R / 2, 0.1f, 0.3f), sin_cache = ramp(P * R / 2, 0.15f, -0.4f);
  std::vector<int64_t> pos = {3, 1};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {B, H, S, D})};
  g.initializers = {tensor_f32("cos", {P, R / 2}, cos_cache), tensor_f32("sin", {P, R / 2}, sin_cache),
                    tensor_i64("pos", {B, S}, pos)};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("RotaryEmbedding", {"x", "cos", "sin", "pos"}, {"y"},
                  {attr_int("interleaved", 1), attr_int("rotary_embedding_dim", R)})};
  auto out = run_model(model(g, 23), {f32_tensor({B, H, S, D}, x)});
  Vec want = x;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t i = 0; i < R / 2; ++i) {
        size_t at = static_cast<size_t>((h * S + s) * D + 2 * i);
        float c = cos_cache[static_cast<size_t>(pos[static_cast<size_t>(s)] * R / 2 + i)];
        float sn = sin_cache[static_cast<size_t>(pos[static_cast<size_t>(s)] * R / 2 + i)];
        want[at] = c * x[at] - sn * x[at + 1];
        want[at + 1] = sn * x[at] + c * x[at + 1];
      }
  expect_near(floats_of(out[0]), want);
}

}  // namespace
}  // namespace maxc::onnx::testing

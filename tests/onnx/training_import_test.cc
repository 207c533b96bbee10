// The optimizers of ai.onnx.preview.training (Adagrad, Adam, Momentum), the ai.onnx.ml
// Binarizer and ArrayFeatureExtractor, and BatchNormalization with training_mode = 1, each
// against a C++ reference of ONNX's formulas; Dropout in training mode; and the variants the
// importers refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

// A model whose nodes are of `domain`, importing only that domain's opset (as the backend
// cases do) unless `with_default` asks for the default one too.
std::string domain_model(const GraphSpec& g, const std::string& domain, bool with_default = false) {
  if (with_default) return model_with_opsets(g, {{"", 17}, {domain, 1}});
  return model_with_opsets(g, {{domain, 1}});
}

const char* kTraining = "ai.onnx.preview.training";
const char* kMl = "ai.onnx.ml";

Ref<Tensor> i64_scalar(int64_t v) {
  auto t = Tensor::create(Device::cpu(), DType::kInt64, {});
  std::memcpy(t->data(), &v, sizeof v);
  return t;
}
Ref<Tensor> i64_tensor(std::vector<int64_t> dims, const std::vector<int64_t>& v) {
  auto t = Tensor::create(Device::cpu(), DType::kInt64, std::move(dims));
  std::memcpy(t->data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

// An optimizer node over R, T and `groups` groups (named by `prefixes`) of tensors of sizes
// `sizes`; outputs are the groups but G, suffixed "_new".
std::string optimizer_model(const std::string& op, const std::vector<std::string>& prefixes,
                            const std::vector<int64_t>& sizes, const std::vector<Msg>& attrs) {
  GraphSpec g;
  g.inputs = {value_info("R", kFloat, {}), value_info("T", kInt64, {})};
  std::vector<std::string> in = {"R", "T"}, out;
  for (const std::string& p : prefixes)
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::string name = p + std::to_string(i);
      g.inputs.push_back(value_info(name, kFloat, {sizes[i]}));
      in.push_back(name);
      if (p != "G") {
        out.push_back(name + "_new");
        g.outputs.push_back(value_info(name + "_new", kFloat, {sizes[i]}));
      }
    }
  g.nodes = {domain_node(kTraining, op, in, out, attrs, "opt")};
  return domain_model(g, kTraining);
}

const std::vector<int64_t> kSizes = {3, 2};
const std::vector<std::vector<float>> kX = {{1.0f, -2.0f, 0.5f}, {3.0f, -0.25f}};
const std::vector<std::vector<float>> kG = {{-0.5f, 1.5f, 0.1f}, {2.0f, -1.0f}};
const std::vector<std::vector<float>> kS1 = {{0.2f, 0.3f, 0.0f}, {1.0f, 0.5f}};
const std::vector<std::vector<float>> kS2 = {{0.1f, 0.7f, 0.4f}, {0.0f, 2.0f}};

std::vector<Ref<Tensor>> groups_inputs(float r, int64_t t, const std::vector<const std::vector<std::vector<float>>*>& groups) {
  std::vector<Ref<Tensor>> in = {f32_tensor({}, {r}), i64_scalar(t)};
  for (auto* group : groups)
    for (size_t i = 0; i < kSizes.size(); ++i) in.push_back(f32_tensor({kSizes[i]}, (*group)[i]));
  return in;
}

TEST(OnnxTraining, AdagradOnTwoTensorsMatchesReference) {
  const float decay = 0.1f, eps = 1e-5f, norm = 0.001f;
  const std::string m = optimizer_model("Adagrad", {"X", "G", "H"}, kSizes,
                                        {attr_float("decay_factor", decay), attr_float("epsilon", eps),
                                         attr_float("norm_coefficient", norm)});
  const float r = 0.1f;
  const int64_t t = 3;
  auto out = run_model(m, groups_inputs(r, t, {&kX, &kG, &kS1}));
  ASSERT_EQ(out.size(), 4u);
  for (size_t i = 0; i < kSizes.size(); ++i) {
    std::vector<float> x_new, h_new;
    for (size_t j = 0; j < kX[i].size(); ++j) {
      const double rate = r / (1 + t * double(decay));
      const double g = norm * kX[i][j] + kG[i][j];
      const double h = kS1[i][j] + g * g;
      h_new.push_back(float(h));
      x_new.push_back(float(kX[i][j] - rate * g / (std::sqrt(h) + eps)));
    }
    expect_near(floats_of(out[i]), x_new);
    expect_near(floats_of(out[2 + i]), h_new);
  }
}

TEST(OnnxTraining, AdamCorrectsBiasOnlyAfterTheFirstStep) {
  const float alpha = 0.95f, beta = 0.85f, eps = 0.01f, norm = 0.001f, post = 0.02f;
  const std::string m = optimizer_model("Adam", {"X", "G", "V", "H"}, kSizes,
                                        {attr_float("alpha", alpha), attr_float("beta", beta), attr_float("epsilon", eps),
                                         attr_float("norm_coefficient", norm), attr_float("norm_coefficient_post", post)});
  const float r = 0.1f;
  for (int64_t t : {int64_t{0}, int64_t{4}}) {
    auto out = run_model(m, groups_inputs(r, t, {&kX, &kG, &kS1, &kS2}));
    ASSERT_EQ(out.size(), 6u);
    for (size_t i = 0; i < kSizes.size(); ++i) {
      std::vector<float> x_new, v_new, h_new;
      for (size_t j = 0; j < kX[i].size(); ++j) {
        const double g = norm * kX[i][j] + kG[i][j];
        const double v = alpha * double(kS1[i][j]) + (1 - double(alpha)) * g;
        const double h = beta * double(kS2[i][j]) + (1 - double(beta)) * g * g;
        const double rate = t > 0 ? r * std::sqrt(1 - std::pow(double(beta), double(t))) / (1 - std::pow(double(alpha), double(t))) : r;
        const double x = kX[i][j] - rate * v / (std::sqrt(h) + eps);
        x_new.push_back(float((1 - post) * x));
        v_new.push_back(float(v));
        h_new.push_back(float(h));
      }
      expect_near(floats_of(out[i]), x_new);
      expect_near(floats_of(out[2 + i]), v_new);
      expect_near(floats_of(out[4 + i]), h_new);
    }
  }
}

TEST(OnnxTraining, MomentumStandardAndNesterov) {
  const float alpha = 0.9f, beta = 0.3f, norm = 0.01f, r = 0.05f;
  for (const std::string mode : {"standard", "nesterov"}) {
    const std::string m = optimizer_model("Momentum", {"X", "G", "V"}, kSizes,
                                          {attr_float("alpha", alpha), attr_float("beta", beta),
                                           attr_float("norm_coefficient", norm), attr_string("mode", mode)});
    for (int64_t t : {int64_t{0}, int64_t{2}}) {
      auto out = run_model(m, groups_inputs(r, t, {&kX, &kG, &kS1}));
      ASSERT_EQ(out.size(), 4u);
      for (size_t i = 0; i < kSizes.size(); ++i) {
        std::vector<float> x_new, v_new;
        for (size_t j = 0; j < kX[i].size(); ++j) {
          const double g = norm * kX[i][j] + kG[i][j];
          const double v = alpha * double(kS1[i][j]) + (t > 0 ? beta : 1.0f) * g;
          x_new.push_back(float(kX[i][j] - r * (mode == "standard" ? v : g + alpha * v)));
          v_new.push_back(float(v));
        }
        expect_near(floats_of(out[i]), x_new);
        expect_near(floats_of(out[2 + i]), v_new);
      }
    }
  }
}

TEST(OnnxTraining, OptimizerVariantsAreRefusedNamingTheNode) {
  // An unknown Momentum mode is invalid; inputs not in groups are invalid; R of float16 is
  // not supported.
  const std::string bad_mode = optimizer_model("Momentum", {"X", "G", "V"}, {2},
                                               {attr_float("alpha", 0.9f), attr_float("beta", 0.1f),
                                                attr_float("norm_coefficient", 0.0f), attr_string("mode", "heavy")});
  Error e = import_error(bad_mode);
  EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
  EXPECT_NE(std::string(e.what()).find("'opt'"), std::string::npos) << e.what();

  GraphSpec g;
  g.inputs = {value_info("R", kFloat, {}), value_info("T", kInt64, {}), value_info("X", kFloat, {2}),
              value_info("G", kFloat, {2})};
  g.outputs = {value_info("X_new", kFloat, {2})};
  g.nodes = {domain_node(kTraining, "Adagrad", {"R", "T", "X", "G"}, {"X_new"}, {}, "ada")};
  e = import_error(domain_model(g, kTraining));
  EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();

  const int32_t kFloat16 = 10;
  g.inputs = {value_info("R", kFloat16, {}), value_info("T", kInt64, {}), value_info("X", kFloat, {2}),
              value_info("G", kFloat, {2}), value_info("H", kFloat, {2})};
  g.nodes = {domain_node(kTraining, "Adagrad", {"R", "T", "X", "G", "H"}, {"X_new"}, {}, "ada")};
  expect_unimplemented_naming(domain_model(g, kTraining), "node 0 'ada' (Adagrad)", "float16");
}

// ---- ai.onnx.ml ----

TEST(OnnxMl, BinarizerIsOneAboveTheThreshold) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}, int64_t{3}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {domain_node(kMl, "Binarizer", {"x"}, {"y"}, {attr_float("threshold", 0.5f)}, "bin")};
  const std::vector<float> x = {0.5f, 0.51f, -3.0f, 7.0f, 0.0f, 0.4999f};
  for (bool with_default : {false, true}) {
    auto out = run_model(domain_model(g, kMl, with_default), {f32_tensor({2, 3}, x)});
    std::vector<float> want;
    for (float v : x) want.push_back(v > 0.5f ? 1.0f : 0.0f);
    expect_near(floats_of(out[0]), want, 0);
  }
}

TEST(OnnxMl, BinarizerOfInt8IsUnimplementedNamingTheNode) {
  GraphSpec g;
  g.inputs = {value_info("x", kInt8, {int64_t{2}})};
  g.outputs = {value_info("y", kInt8, {})};
  g.nodes = {domain_node(kMl, "Binarizer", {"x"}, {"y"}, {}, "bin")};
  expect_unimplemented_naming(domain_model(g, kMl), "node 0 'bin' (Binarizer)", "int8");
}

TEST(OnnxMl, ArrayFeatureExtractorSelectsFromTheLastAxis) {
  // x [2, 4], indices [1, 3] (flattened; one negative): z [2, 3].
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}, int64_t{4}}), value_info("i", kInt64, {int64_t{1}, int64_t{3}})};
  g.outputs = {value_info("z", kFloat, {})};
  g.nodes = {domain_node(kMl, "ArrayFeatureExtractor", {"x", "i"}, {"z"}, {}, "afe")};
  const std::vector<float> x = {0, 1, 2, 3, 10, 11, 12, 13};
  const std::vector<int64_t> idx = {3, 0, -1};
  auto out = run_model(domain_model(g, kMl), {f32_tensor({2, 4}, x), i64_tensor({1, 3}, idx)});
  ASSERT_EQ(out[0]->dims(), (std::vector<int64_t>{2, 3}));
  std::vector<float> want;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t k : idx) want.push_back(x[r * 4 + (k < 0 ? k + 4 : k)]);
  expect_near(floats_of(out[0]), want, 0);

  // A rank-1 x gives [1, k].
  g.inputs = {value_info("x", kFloat, {int64_t{5}}), value_info("i", kInt64, {int64_t{2}})};
  out = run_model(domain_model(g, kMl), {f32_tensor({5}, {5, 6, 7, 8, 9}), i64_tensor({2}, {4, 1})});
  ASSERT_EQ(out[0]->dims(), (std::vector<int64_t>{1, 2}));
  expect_near(floats_of(out[0]), {9, 6}, 0);
}

// ---- BatchNormalization, training_mode = 1 ----

TEST(OnnxTraining, BatchNormTrainingModeUsesBatchStatistics) {
  const int64_t n = 2, ch = 3, hw = 4;
  const float eps = 0.01f, momentum = 0.8f;
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {n, ch, int64_t{2}, int64_t{2}}), value_info("s", kFloat, {ch}),
              value_info("b", kFloat, {ch}), value_info("mean", kFloat, {ch}), value_info("var", kFloat, {ch})};
  g.outputs = {value_info("y", kFloat, {}), value_info("rm", kFloat, {}), value_info("rv", kFloat, {})};
  g.nodes = {node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y", "rm", "rv"},
                  {attr_float("epsilon", eps), attr_float("momentum", momentum), attr_int("training_mode", 1)}, "bn")};
  std::vector<float> x(n * ch * hw);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * float(i)) * 3.0f + float(i % 5);
  const std::vector<float> s = {1.0f, 0.5f, -2.0f}, b = {0.0f, 1.0f, 0.25f}, mean = {0.1f, -0.2f, 3.0f},
                           var = {1.0f, 2.0f, 0.5f};
  auto out = run_model(model(g, 15), {f32_tensor({n, ch, 2, 2}, x), f32_tensor({ch}, s), f32_tensor({ch}, b),
                                      f32_tensor({ch}, mean), f32_tensor({ch}, var)});
  ASSERT_EQ(out.size(), 3u);
  std::vector<float> y(x.size()), rm(ch), rv(ch);
  for (int64_t c = 0; c < ch; ++c) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < hw; ++k) sum += x[(i * ch + c) * hw + k];
    const double mu = sum / double(n * hw);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < hw; ++k) sq += std::pow(x[(i * ch + c) * hw + k] - mu, 2);
    const double v = sq / double(n * hw);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < hw; ++k) {
        const size_t at = static_cast<size_t>((i * ch + c) * hw + k);
        y[at] = float(s[c] * (x[at] - mu) / std::sqrt(v + eps) + b[c]);
      }
    rm[c] = float(mean[c] * momentum + mu * (1 - momentum));
    rv[c] = float(var[c] * momentum + v * (1 - momentum));
  }
  expect_near(floats_of(out[0]), y);
  expect_near(floats_of(out[1]), rm);
  expect_near(floats_of(out[2]), rv);
}

// Dropout(x, ratio, training_mode) with both known: training with ratio 0 keeps every
// element (an all-true mask); training with a ratio above 0 draws random numbers, refused.
std::string dropout_model(float ratio, bool training) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{3}})};
  g.outputs = {value_info("y", kFloat, {int64_t{3}}), value_info("mask", kBool, {int64_t{3}})};
  const char t = training ? 1 : 0;
  g.initializers = {tensor_f32("r", {}, {ratio}), tensor_raw("t", kBool, {}, std::string(1, t))};
  g.nodes = {node("Dropout", {"x", "r", "t"}, {"y", "mask"}, {}, "drop")};
  return model(g);
}

TEST(OnnxTraining, DropoutTrainsOnlyWithRatioZero) {
  for (const auto& [ratio, training] : {std::pair{0.f, true}, std::pair{0.5f, false}}) {
    auto out = run_model(dropout_model(ratio, training), {f32_tensor({3}, {1.5f, -2.f, 0.f})});
    expect_near(floats_of(out[0]), {1.5f, -2.f, 0.f}, 0.f);
    ASSERT_EQ(out[1]->dtype(), DType::kBool);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(out[1]->data()[i], 1) << "ratio " << ratio << " element " << i;
  }
  expect_unimplemented_naming(dropout_model(0.25f, true), "'drop' (Dropout)", "ratio 0.25 draws random numbers");
}

}  // namespace
}  // namespace maxc::onnx::testing

// GroupNormalization, LRN, LpPool, Pad's edge/reflect/wrap modes and CenterCropPad, imported
// as compositions of our ops: one value each against a hand-computed reference, and the
// variants we refuse.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

// Two groups of two channels, one element each: each group normalizes to [-1, 1] (up to eps).
TEST(OnnxNormalizationImport, GroupNormalizationPerChannelAffine) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{4}, int64_t{1}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_f32("scale", {4}, {1.f, 2.f, 3.f, 4.f}), tensor_f32("bias", {4}, {0.f, 0.f, 1.f, 1.f})};
  g.nodes = {node("GroupNormalization", {"x", "scale", "bias"}, {"y"}, {attr_int("num_groups", 2), attr_float("epsilon", 0.f)})};
  auto out = run_model(model(g, 21), {f32_tensor({1, 4, 1}, {1.f, 3.f, 10.f, 20.f})});
  expect_near(floats_of(out[0]), {-1.f, 2.f, -2.f, 5.f});
}

TEST(OnnxNormalizationImport, GroupNormalizationNeedsStaticChannels) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, std::string("c"), int64_t{2}}), value_info("s", kFloat, {int64_t{2}}),
              value_info("b", kFloat, {int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("GroupNormalization", {"x", "s", "b"}, {"y"}, {attr_int("num_groups", 2)}, "gn")};
  expect_unimplemented_naming(model(g, 21), {"node 0 'gn' (GroupNormalization)", "static channel dim"});
}

// size 3: each channel sums the squares of itself and its neighbours (clipped at the ends).
TEST(OnnxNormalizationImport, LRNAcrossChannels) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{3}, int64_t{1}, int64_t{1}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("LRN", {"x"}, {"y"},
                  {attr_int("size", 3), attr_float("alpha", 3.f), attr_float("beta", 0.5f), attr_float("bias", 1.f)})};
  auto out = run_model(model(g, 13), {f32_tensor({1, 3, 1, 1}, {1.f, 2.f, 3.f})});
  // squares 1, 4, 9; sums 5, 14, 13; y = x / sqrt(1 + sum).
  expect_near(floats_of(out[0]), {1.f / std::sqrt(6.f), 2.f / std::sqrt(15.f), 3.f / std::sqrt(14.f)});
}

// p = 3 over windows of 2 with one zero of padding at each end.
TEST(OnnxNormalizationImport, LpPool1dWithPads) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{1}, int64_t{3}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("LpPool", {"x"}, {"y"}, {attr_ints("kernel_shape", {2}), attr_int("p", 3), attr_ints("pads", {1, 1})})};
  auto out = run_model(model(g, 18), {f32_tensor({1, 1, 3}, {1.f, -2.f, 3.f})});
  expect_near(floats_of(out[0]), {1.f, std::cbrt(9.f), std::cbrt(35.f), 3.f}, 1e-4f);
}

TEST(OnnxNormalizationImport, PadReflectEdgeWrap) {
  for (const auto& [mode, want] : std::vector<std::pair<std::string, std::vector<float>>>{
           {"reflect", {3, 2, 1, 2, 3, 2, 1}}, {"edge", {1, 1, 1, 2, 3, 3, 3}}, {"wrap", {2, 3, 1, 2, 3, 1, 2}}}) {
    GraphSpec g;
    g.inputs = {value_info("x", kFloat, {int64_t{3}})};
    g.outputs = {value_info("y", kFloat, {})};
    g.initializers = {tensor_i64("pads", {2}, {2, 2})};
    g.nodes = {node("Pad", {"x", "pads"}, {"y"}, {attr_string("mode", mode)})};
    auto out = run_model(model(g, 19), {f32_tensor({3}, {1.f, 2.f, 3.f})});
    expect_near(floats_of(out[0]), want);
  }
}

// A symbolic axis is padded by pieces of static length (test_onnx_dynamic_shapes.py runs
// them); cropping one by a negative pad is not done.
TEST(OnnxNormalizationImport, PadReflectCropOfASymbolicAxisIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {std::string("n")})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_i64("pads", {2}, {-1, 1})};
  g.nodes = {node("Pad", {"x", "pads"}, {"y"}, {attr_string("mode", "reflect")}, "pad")};
  expect_unimplemented_naming(model(g, 19), {"node 0 'pad' (Pad)", "reflect", "negative pads", "symbolic"});
}

// 5 -> 2 crops [1, 3); 1 -> 4 pads one zero before and two after.
TEST(OnnxNormalizationImport, CenterCropPad) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{5}, int64_t{1}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_i64("shape", {2}, {2, 4})};
  g.nodes = {node("CenterCropPad", {"x", "shape"}, {"y"})};
  auto out = run_model(model(g, 18), {f32_tensor({5, 1}, {1.f, 2.f, 3.f, 4.f, 5.f})});
  expect_near(floats_of(out[0]), {0, 2, 0, 0, 0, 3, 0, 0});
}

}  // namespace
}  // namespace maxc::onnx::testing

// ONNX quantization operators imported as compositions of our ops: one representative value
// per operator, against hand-computed references, and the variants we refuse.
#include <gtest/gtest.h>

#include <cstring>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

constexpr int32_t kInt16 = 5, kInt4 = 22;

template <typename T>
Ref<Tensor> int_tensor(DType dtype, std::vector<int64_t> dims, const std::vector<T>& v) {
  auto t = Tensor::create(Device::cpu(), dtype, std::move(dims));
  std::memcpy(t->data(), v.data(), v.size() * sizeof(T));
  return t;
}

template <typename T>
std::vector<T> elements_of(const Ref<Tensor>& t) {
  const T* p = reinterpret_cast<const T*>(t->data());
  return {p, p + t->num_elements()};
}

Msg tensor_u8(const std::string& name, const std::vector<int64_t>& dims, const std::vector<uint8_t>& v) {
  return tensor_raw(name, kUInt8, dims, raw_of(v.data(), v.size()));
}

// Per-axis: each of the 2 channels has its own scale and zero point; 2.5 and -2.5 show the
// rounding half to even, 1000 and -1000 the saturation.
TEST(OnnxQuantizeImport, QuantizeLinearPerAxisRoundsHalfToEvenAndSaturates) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}, int64_t{3}})};
  g.outputs = {value_info("y", kUInt8, {})};
  g.initializers = {tensor_f32("s", {2}, {1.f, 0.5f}), tensor_u8("zp", {2}, {10, 128})};
  g.nodes = {node("QuantizeLinear", {"x", "s", "zp"}, {"y"}, {attr_int("axis", 0)})};
  auto out = run_model(model(g, 21), {f32_tensor({2, 3}, {2.5f, -2.5f, 1000.f, 1.25f, -1000.f, 3.3f})});
  EXPECT_EQ(elements_of<uint8_t>(out[0]), (std::vector<uint8_t>{12, 8, 255, 130, 0, 135}));
}

// Blocked: blocks of 2 along axis 1, the last block partial (3 = 2 + 1).
TEST(OnnxQuantizeImport, DequantizeLinearBlocked) {
  GraphSpec g;
  g.inputs = {value_info("x", kInt8, {int64_t{1}, int64_t{3}})};
  g.outputs = {value_info("y", kFloat, {})};
  std::vector<int8_t> zp = {1, -2};
  g.initializers = {tensor_f32("s", {1, 2}, {0.5f, 2.f}), tensor_raw("zp", kInt8, {1, 2}, raw_of(zp.data(), 2))};
  g.nodes = {node("DequantizeLinear", {"x", "s", "zp"}, {"y"}, {attr_int("axis", 1), attr_int("block_size", 2)})};
  auto out = run_model(model(g, 21), {int_tensor<int8_t>(DType::kInt8, {1, 3}, {5, -3, 4})});
  expect_near(floats_of(out[0]), {2.f, -2.f, 12.f});
}

// y = round((a - za)(b - zb) * sa * sb / sy) + zy, saturated to uint8.
TEST(OnnxQuantizeImport, QLinearMatMul) {
  GraphSpec g;
  g.inputs = {value_info("a", kUInt8, {int64_t{1}, int64_t{2}}), value_info("b", kUInt8, {int64_t{2}, int64_t{2}})};
  g.outputs = {value_info("y", kUInt8, {})};
  g.initializers = {tensor_f32("sa", {}, {0.5f}), tensor_u8("za", {}, {2}), tensor_f32("sb", {}, {0.25f}),
                    tensor_u8("zb", {}, {1}),   tensor_f32("sy", {}, {0.125f}), tensor_u8("zy", {}, {100})};
  g.nodes = {node("QLinearMatMul", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"})};
  auto out = run_model(model(g, 21), {int_tensor<uint8_t>(DType::kUInt8, {1, 2}, {4, 1}),
                                      int_tensor<uint8_t>(DType::kUInt8, {2, 2}, {3, 101, 2, 0})});
  // acc = [2*2 + (-1)*1, 2*100 + (-1)*(-1)] = [3, 201]; times 1 -> [103, 301 -> 255].
  EXPECT_EQ(elements_of<uint8_t>(out[0]), (std::vector<uint8_t>{103, 255}));
}

TEST(OnnxQuantizeImport, MatMulIntegerSubtractsZeroPoints) {
  GraphSpec g;
  g.inputs = {value_info("a", kUInt8, {int64_t{2}, int64_t{2}}), value_info("b", kInt8, {int64_t{2}, int64_t{1}})};
  g.outputs = {value_info("y", kInt32, {})};
  g.initializers = {tensor_u8("za", {}, {200})};
  g.nodes = {node("MatMulInteger", {"a", "b", "za"}, {"y"})};
  auto out = run_model(model(g, 13), {int_tensor<uint8_t>(DType::kUInt8, {2, 2}, {255, 200, 0, 210}),
                                      int_tensor<int8_t>(DType::kInt8, {2, 1}, {-128, 127})});
  // [55, 0] . [-128, 127] = -7040; [-200, 10] . [-128, 127] = 25600 + 1270 = 26870.
  EXPECT_EQ(elements_of<int32_t>(out[0]), (std::vector<int32_t>{-7040, 26870}));
}

// min(0, min x) = -1, max = 2: scale 3/255, zero point round(255/3) = 85.
TEST(OnnxQuantizeImport, DynamicQuantizeLinear) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{3}})};
  g.outputs = {value_info("y", kUInt8, {}), value_info("s", kFloat, {}), value_info("zp", kUInt8, {})};
  g.nodes = {node("DynamicQuantizeLinear", {"x"}, {"y", "s", "zp"})};
  auto out = run_model(model(g, 13), {f32_tensor({3}, {-1.f, 1.f, 2.f})});
  EXPECT_EQ(elements_of<uint8_t>(out[0]), (std::vector<uint8_t>{0, 170, 255}));
  expect_near(floats_of(out[1]), {3.f / 255.f}, 1e-7f);
  EXPECT_EQ(elements_of<uint8_t>(out[2]), (std::vector<uint8_t>{85}));
}

TEST(OnnxQuantizeImport, ConvIntegerWithPerChannelWeightZeroPoints) {
  GraphSpec g;
  g.inputs = {value_info("x", kUInt8, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}})};
  g.outputs = {value_info("y", kInt32, {})};
  g.initializers = {tensor_u8("w", {2, 1, 1, 1}, {3, 5}), tensor_u8("zx", {}, {1}), tensor_u8("zw", {2}, {1, 7})};
  g.nodes = {node("ConvInteger", {"x", "w", "zx", "zw"}, {"y"})};
  auto out = run_model(model(g, 13), {int_tensor<uint8_t>(DType::kUInt8, {1, 1, 2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(elements_of<int32_t>(out[0]), (std::vector<int32_t>{0, 2, 4, 6, 0, -2, -4, -6}));
}

// ---- refused variants name the node and what is missing ----

TEST(OnnxQuantizeImport, Int4OutputIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}})};
  g.outputs = {value_info("y", kUInt8, {})};
  g.initializers = {tensor_f32("s", {}, {1.f})};
  g.nodes = {node("QuantizeLinear", {"x", "s"}, {"y"}, {attr_int("output_dtype", kInt4)}, "q4")};
  expect_unimplemented_naming(model(g, 21), {"node 0 'q4' (QuantizeLinear)", "output_dtype", "INT4"});
}

TEST(OnnxQuantizeImport, BlockedWithSymbolicDimIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kInt8, {int64_t{1}, std::string("n")}), value_info("s", kFloat, {int64_t{1}, int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("DequantizeLinear", {"x", "s"}, {"y"}, {attr_int("axis", 1), attr_int("block_size", 2)}, "dq")};
  expect_unimplemented_naming(model(g, 21), {"node 0 'dq' (DequantizeLinear)", "static dims"});
}

TEST(OnnxQuantizeImport, Int16QuantizeRoundTrips) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{3}})};
  g.outputs = {value_info("y", kFloat, {})};
  std::vector<int16_t> zp = {-5};
  g.initializers = {tensor_f32("s", {}, {0.01f}), tensor_raw("zp", kInt16, {}, raw_of(zp.data(), 2))};
  g.nodes = {node("QuantizeLinear", {"x", "s", "zp"}, {"q"}), node("DequantizeLinear", {"q", "s", "zp"}, {"y"})};
  auto out = run_model(model(g, 21), {f32_tensor({3}, {1.234f, -400.f, 400.f})});
  // 400 / 0.01 = 40000 saturates at 32767 (-> (32767 + 5) * 0.01), -40000 at -32768.
  expect_near(floats_of(out[0]), {1.23f, -327.63f, 327.72f}, 1e-3f);
}

}  // namespace
}  // namespace maxc::onnx::testing

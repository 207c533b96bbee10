// ONNX quantization operators imported as compositions of our ops: one representative value
// per operator, against hand-computed references, and the variants we refuse.
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>
#include <vector>

#include "base/packed_int.h"
#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

constexpr int32_t kInt16 = 5, kUInt4 = 21, kInt4 = 22, kFloat8E8M0 = 24, kUInt2 = 25, kInt2 = 26;

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

// The values of a uint2/int2/uint4/int4 tensor.
std::vector<int64_t> packed_elements_of(const Ref<Tensor>& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t->num_elements(); ++i) v.push_back(packed_int_get(t->dtype(), t->data(), i));
  return v;
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

// float8_e8m0fnu is a dtype of ours, but no quantized type of ONNX's: refused naming it.
TEST(OnnxQuantizeImport, Float8E8M0OutputIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}})};
  g.outputs = {value_info("y", kUInt8, {})};
  g.initializers = {tensor_f32("s", {}, {1.f})};
  g.nodes = {node("QuantizeLinear", {"x", "s"}, {"y"}, {attr_int("output_dtype", kFloat8E8M0)}, "q8")};
  expect_unimplemented_naming(model(g, 21), {"node 0 'q8' (QuantizeLinear)", "output of type float8_e8m0fnu"});
}

TEST(OnnxQuantizeImport, Float8E8M0InputIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat8E8M0, {int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_f32("s", {}, {1.f})};
  g.nodes = {node("DequantizeLinear", {"x", "s"}, {"y"}, {}, "dq8")};
  expect_unimplemented_naming(model(g, 21), {"node 0 'dq8' (DequantizeLinear)", "x of type float8_e8m0fnu"});
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

// ---- the 2- and 4-bit integers ----

// int4 has [-8, 7]: 2.5 and -2.5 round half to even, 100 and -100 saturate.
TEST(OnnxQuantizeImport, Int4OutputRoundsHalfToEvenAndSaturates) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{6}})};
  g.outputs = {value_info("y", kInt4, {})};
  g.initializers = {tensor_f32("s", {}, {1.f})};
  g.nodes = {node("QuantizeLinear", {"x", "s"}, {"y"}, {attr_int("output_dtype", kInt4)})};
  auto out = run_model(model(g, 21), {f32_tensor({6}, {2.5f, -2.5f, 3.5f, 100.f, -100.f, 7.4f})});
  ASSERT_EQ(out[0]->dtype(), DType::kInt4);
  EXPECT_EQ(packed_elements_of(out[0]), (std::vector<int64_t>{2, -2, 4, 7, -8, 7}));
}

// uint2 per axis: the zero points [1, 2] in raw_data (one packed byte), the output saturated
// to [0, 3].
TEST(OnnxQuantizeImport, UInt2PerAxisWithPackedZeroPoint) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}, int64_t{3}})};
  g.outputs = {value_info("y", kUInt2, {})};
  const uint8_t zp = 0x1 | (0x2 << 2);
  g.initializers = {tensor_f32("s", {2}, {1.f, 2.f}), tensor_raw("zp", kUInt2, {2}, raw_of(&zp, 1))};
  g.nodes = {node("QuantizeLinear", {"x", "s", "zp"}, {"y"}, {attr_int("axis", 0)})};
  auto out = run_model(model(g, 21), {f32_tensor({2, 3}, {0.f, 1.4f, 9.f, -4.f, 1.f, 3.f})});
  EXPECT_EQ(packed_elements_of(out[0]), (std::vector<int64_t>{1, 2, 3, 0, 2, 3}));
}

// An int4 weight (two elements per byte, low nibble first) and its int4 zero point,
// dequantized: the usual form of a 4-bit weight-only model.
TEST(OnnxQuantizeImport, DequantizeInt4Weight) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{5}})};
  g.outputs = {value_info("y", kFloat, {})};
  const std::vector<uint8_t> w = {0x78, 0x0F, 0x03}, zp = {0x0E};  // -8, 7, -1, 0, 3 and -2
  g.initializers = {tensor_raw("w", kInt4, {5}, raw_of(w.data(), 3)), tensor_f32("s", {}, {0.5f}),
                    tensor_raw("zp", kInt4, {}, raw_of(zp.data(), 1))};
  g.nodes = {node("DequantizeLinear", {"w", "s", "zp"}, {"wf"}), node("Add", {"wf", "x"}, {"y"})};
  auto out = run_model(model(g, 21), {f32_tensor({5}, {0.f, 0.f, 0.f, 0.f, 100.f})});
  expect_near(floats_of(out[0]), {-3.f, 4.5f, 0.5f, 1.f, 102.5f});
}

TEST(OnnxQuantizeImport, DequantizeInt2AndUInt4Inputs) {
  for (auto [type, dtype, byte, want] :
       {std::tuple{kInt2, DType::kInt2, uint8_t{0x9C}, std::vector<float>{0.f, -1.f, 1.f, -2.f}},
        std::tuple{kUInt4, DType::kUInt4, uint8_t{0xF3}, std::vector<float>{3.f, 15.f}}}) {
    GraphSpec g;
    const int64_t n = static_cast<int64_t>(want.size());
    g.inputs = {value_info("x", type, {n})};
    g.outputs = {value_info("y", kFloat, {})};
    g.initializers = {tensor_f32("s", {}, {1.f})};
    g.nodes = {node("DequantizeLinear", {"x", "s"}, {"y"})};
    auto x = Tensor::create(Device::cpu(), dtype, {n});
    x->data()[0] = byte;
    auto out = run_model(model(g, 21), {x});
    expect_near(floats_of(out[0]), want);
  }
}

// Cast of a known int64 to INT4 folds at import: the value wraps to 4 bits, and a second
// cast reads the wrapped value.
TEST(OnnxQuantizeImport, KnownCastToInt4WrapsAtImport) {
  GraphSpec g;
  g.inputs = {value_info("x", kInt8, {int64_t{4}})};
  g.outputs = {value_info("y", kInt8, {})};
  g.initializers = {tensor_i64("c", {4}, {300, -1, 7, 8})};
  g.nodes = {node("Cast", {"c"}, {"q"}, {attr_int("to", kInt4)}),
             node("Cast", {"q"}, {"q8"}, {attr_int("to", kInt8)}), node("Add", {"q8", "x"}, {"y"})};
  auto out = run_model(model(g, 21), {int_tensor<int8_t>(DType::kInt8, {4}, {0, 0, 0, 0})});
  EXPECT_EQ(elements_of<int8_t>(out[0]), (std::vector<int8_t>{-4, -1, 7, -8}));
}

}  // namespace
}  // namespace maxc::onnx::testing

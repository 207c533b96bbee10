// Sub-byte tensors (int4, uint4, int2, uint2, float4) stored in a TensorProto's int32_data:
// onnx.proto packs them there as in raw_data, one byte per entry (two or four elements),
// low bits first; the entry count is the packed byte count, not the element count.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

constexpr int32_t kInt4 = 22, kFloat4E2M1 = 23, kUInt2 = 25;

Msg tensor_int32_data(const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& entries) {
  Msg m;
  m.packed_varints(1, dims).varint(2, static_cast<uint64_t>(type)).packed_varints(5, entries).bytes(8, name);
  return m;
}

// y = cast(w, float32) + x for an initializer w.
std::string cast_and_add(Msg w, int64_t n) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {n})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {std::move(w)};
  g.nodes = {node("Cast", {"w"}, {"wf"}, {attr_int("to", kFloat)}), node("Add", {"wf", "x"}, {"y"})};
  return model(g, 21);
}

std::vector<float> run_cast_and_add(Msg w, int64_t n) {
  const std::vector<float> zeros(static_cast<size_t>(n), 0.f);
  return floats_of(run_model(cast_and_add(std::move(w), n), {f32_tensor({n}, zeros)})[0]);
}

TEST(OnnxSubByteTensorData, Int4TwoPerEntry) {
  // -8, 7, -1, 0, 3
  expect_near(run_cast_and_add(tensor_int32_data("w", kInt4, {5}, {0x78, 0x0F, 0x03}), 5), {-8, 7, -1, 0, 3});
}

TEST(OnnxSubByteTensorData, UInt2FourPerEntry) {
  expect_near(run_cast_and_add(tensor_int32_data("w", kUInt2, {6}, {0xE4, 0x07}), 6), {0, 1, 2, 3, 3, 1});
}

TEST(OnnxSubByteTensorData, Float4TwoPerEntry) {
  expect_near(run_cast_and_add(tensor_int32_data("w", kFloat4E2M1, {3}, {0xA7, 0x01}), 3), {6, -1, 0.5});
}

TEST(OnnxSubByteTensorData, WrongEntryCountIsDataLossNamingTheExpectedCount) {
  Error e = import_error(cast_and_add(tensor_int32_data("w", kInt4, {5}, {1, 2, 3, 4, 5}), 5));
  EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
  EXPECT_NE(std::string(e.what()).find("holds 5 values (3 expected)"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace maxc::onnx::testing

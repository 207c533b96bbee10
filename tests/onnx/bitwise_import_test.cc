// BitShift against C++'s own shifts, on every shift amount of uint8 (the width and past it
// included), and the variants the importer refuses.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

std::string shift_model(const std::string& direction, int32_t elem = kUInt8) {
  GraphSpec g;
  g.inputs = {value_info("x", elem, {int64_t{10}}), value_info("y", elem, {int64_t{10}})};
  g.outputs = {value_info("z", elem, {})};
  g.nodes = {node("BitShift", {"x", "y"}, {"z"}, {attr_string("direction", direction)}, "shift")};
  return model(g, 18);
}

Ref<Tensor> u8(const std::vector<uint8_t>& v) {
  auto t = Tensor::create(Device::cpu(), DType::kUInt8, {static_cast<int64_t>(v.size())});
  std::memcpy(t->data(), v.data(), v.size());
  return t;
}

TEST(OnnxBitwise, BitShiftMatchesCppShiftsForEveryAmount) {
  const std::vector<uint8_t> x = {0, 1, 3, 77, 128, 200, 255, 255, 129, 42};
  const std::vector<uint8_t> y = {0, 1, 2, 3, 4, 5, 7, 8, 9, 200};  // 8 and past: everything shifts out
  for (const std::string direction : {"LEFT", "RIGHT"}) {
    auto out = run_model(shift_model(direction), {u8(x), u8(y)});
    ASSERT_EQ(out[0]->dtype(), DType::kUInt8);
    const auto* z = reinterpret_cast<const uint8_t*>(out[0]->data());
    for (size_t i = 0; i < x.size(); ++i) {
      const unsigned want = y[i] >= 8 ? 0u : direction == "LEFT" ? (x[i] << y[i]) & 0xffu : x[i] >> y[i];
      EXPECT_EQ(z[i], want) << direction << " " << int{x[i]} << " by " << int{y[i]};
    }
  }
}

TEST(OnnxBitwise, SignedBitShiftIsUnimplementedNamingTheNode) {
  Error e = import_error(shift_model("LEFT", kInt32));
  EXPECT_EQ(e.code(), Code::kUnimplemented) << e.what();
  EXPECT_NE(std::string(e.what()).find("'shift'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("only unsigned"), std::string::npos) << e.what();
}

TEST(OnnxBitwise, UnknownDirectionIsInvalid) {
  EXPECT_EQ(import_error(shift_model("UP")).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace maxc::onnx::testing

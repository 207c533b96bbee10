// BitShift against C++'s own shifts, on uint8 and int8 for every shift amount (negative, the
// width and past it included), and the variants the importer refuses.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
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

template <typename T>
Ref<Tensor> bytes(DType dtype, const std::vector<T>& v) {
  auto t = Tensor::create(Device::cpu(), dtype, {static_cast<int64_t>(v.size())});
  std::memcpy(t->data(), v.data(), v.size() * sizeof(T));
  return t;
}
Ref<Tensor> u8(const std::vector<uint8_t>& v) { return bytes(DType::kUInt8, v); }

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

// int8: a left shift wraps through the sign bit; a right shift fills with the sign; a shift
// by a negative amount or by 8 and more gives 0, or -1 for a right shift of a negative x.
TEST(OnnxBitwise, SignedBitShiftIsArithmeticAndWraps) {
  const std::vector<int8_t> x = {0, -1, 77, -128, -77, 127, -3, 5, -5, -100};
  const std::vector<int8_t> y = {1, 7, 3, 1, 2, 7, 8, 100, -1, 6};
  for (const std::string direction : {"LEFT", "RIGHT"}) {
    auto out = run_model(shift_model(direction, kInt8), {bytes(DType::kInt8, x), bytes(DType::kInt8, y)});
    ASSERT_EQ(out[0]->dtype(), DType::kInt8);
    const auto* z = reinterpret_cast<const int8_t*>(out[0]->data());
    for (size_t i = 0; i < x.size(); ++i) {
      const bool in_range = y[i] >= 0 && y[i] < 8;
      int want;
      if (direction == "LEFT")
        want = in_range ? static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint8_t>(x[i]) << y[i])) : 0;
      else
        want = in_range ? x[i] >> y[i] : (x[i] < 0 ? -1 : 0);  // >> of a negative int is arithmetic in C++20
      EXPECT_EQ(int{z[i]}, want) << direction << " " << int{x[i]} << " by " << int{y[i]};
    }
  }
}

// 64-bit right shifts of values float64 cannot hold, across the 32-bit halves the importer
// splits them into: every amount around 32, 0 and 63, and out of range.
TEST(OnnxBitwise, RightShiftsOf64BitValuesAreExact) {
  const int64_t big = 0x7edcba9876543211;
  const std::vector<int64_t> x = {big, -big, INT64_MIN, -1, big, -big, big, -big, 12345, -12345};
  const std::vector<int64_t> y = {0, 31, 63, 5, 32, 33, 63, 64, -1, 1};
  auto out = run_model(shift_model("RIGHT", kInt64), {bytes(DType::kInt64, x), bytes(DType::kInt64, y)});
  const auto* z = reinterpret_cast<const int64_t*>(out[0]->data());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t want = y[i] >= 0 && y[i] < 64 ? x[i] >> y[i] : (x[i] < 0 ? -1 : 0);
    EXPECT_EQ(z[i], want) << x[i] << " >> " << y[i];
  }
  const std::vector<uint64_t> ux = {~0ull, 0xfedcba9876543211ull, 1ull << 63, 3, ~0ull, 0x123456789abcdefull,
                                    ~0ull, 7, 0x8000000180000001ull, ~0ull};
  const std::vector<uint64_t> uy = {0, 1, 63, 1, 31, 32, 33, 64, 32, 1000};
  out = run_model(shift_model("RIGHT", kUInt64), {bytes(DType::kUInt64, ux), bytes(DType::kUInt64, uy)});
  const auto* uz = reinterpret_cast<const uint64_t*>(out[0]->data());
  for (size_t i = 0; i < ux.size(); ++i) EXPECT_EQ(uz[i], uy[i] < 64 ? ux[i] >> uy[i] : 0) << ux[i] << " >> " << uy[i];
}

TEST(OnnxBitwise, UnknownDirectionIsInvalid) {
  EXPECT_EQ(import_error(shift_model("UP")).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace maxc::onnx::testing

// KnownValue's doubles in and out of the half types: rounded through float32 to nearest
// even, as the kernels' casts round, so a value folded at import has run-time bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "onnx/known_value.h"

namespace maxc::onnx {
namespace {

std::vector<uint16_t> bits_of(const KnownValue& k) {
  std::vector<uint16_t> out(static_cast<size_t>(k.num_elements()));
  std::memcpy(out.data(), k.data->data(), out.size() * 2);
  return out;
}

TEST(OnnxKnownValue, Float16RoundsToNearestEvenAndOverflowsToInfinity) {
  // 1/3 -> 0x3555; 2049 is a tie between 2048 and 2050 (even mantissa: 2048); 65520 rounds
  // past the largest half, 65504.
  KnownValue k = KnownValue::from_doubles(DType::kFloat16, {4}, {1.0 / 3, 2049, 65520, -0.0});
  EXPECT_EQ(bits_of(k), (std::vector<uint16_t>{0x3555, 0x6800, 0x7c00, 0x8000}));
  std::vector<double> back = *k.doubles();
  EXPECT_EQ(back[0], 0.333251953125);
  EXPECT_EQ(back[1], 2048);
  EXPECT_TRUE(std::isinf(back[2]));
  EXPECT_TRUE(std::signbit(back[3]));
}

TEST(OnnxKnownValue, BFloat16KeepsFloat32sRangeWithEightBits) {
  KnownValue k = KnownValue::from_doubles(DType::kBFloat16, {3}, {1.0 / 3, 257, 1e30});
  EXPECT_EQ(bits_of(k), (std::vector<uint16_t>{0x3eab, 0x4380, 0x714a}));
  std::vector<double> back = *k.doubles();
  EXPECT_EQ(back[0], 0.333984375);
  EXPECT_EQ(back[1], 256);  // 257 is a tie between 256 and 258: the even mantissa wins
  EXPECT_NEAR(back[2], 1e30, 1e28);
}

}  // namespace
}  // namespace maxc::onnx

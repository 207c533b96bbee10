// KnownValue's doubles in and out of the half types: rounded through float32 to nearest
// even, as the kernels' casts round, so a value folded at import has run-time bits. And the
// packed 2- and 4-bit integers: their bytes packed as the kernels pack them, values wrapped.
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

TEST(OnnxKnownValue, Int4FromDimsPacksAndWraps) {
  KnownValue k = KnownValue::from_dims(DType::kInt4, {3}, {Dim(-1), Dim(300), Dim(7)});
  ASSERT_TRUE(k.is_static());
  EXPECT_EQ(k.data->byte_size(), 2u);
  EXPECT_EQ(k.data->data()[0], 0xCF);  // -1 | 300 -> -4 (0xC)
  EXPECT_EQ(k.data->data()[1], 0x07);
  EXPECT_EQ(*k.static_ints(), (std::vector<int64_t>{-1, -4, 7}));
  EXPECT_EQ(*k.doubles(), (std::vector<double>{-1, -4, 7}));
}

TEST(OnnxKnownValue, UInt2FromDoublesAndFromTensor) {
  KnownValue k = KnownValue::from_doubles(DType::kUInt2, {5}, {0, 1, 2, 3, 5});
  EXPECT_EQ(k.data->data()[0], 0xE4);  // 0, 1, 2, 3 from the low bits up
  EXPECT_EQ(k.data->data()[1], 0x01);  // 5 wraps to 1; the unused bits are 0
  KnownValue t = KnownValue::from_tensor(k.data);
  EXPECT_EQ(*t.static_ints(), (std::vector<int64_t>{0, 1, 2, 3, 1}));
}

}  // namespace
}  // namespace maxc::onnx

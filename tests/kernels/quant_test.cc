// Block-quantized encodings (kernels/cpu/quant_*.h, qmatmul.h): the GGML byte layouts on
// hand-made blocks, the reference quantizer's error and its stability on decoded data, and
// qmatmul (both the AVX2 and the portable dot products) against float matmuls in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/quant_encoding.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/qmatmul.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quant_reference.h"
#include "kernels/cpu/simd.h"

namespace maxc {
namespace {

using cpu::QuantIsa;

constexpr QuantEncoding kAll[] = {QuantEncoding::kQ4_0, QuantEncoding::kQ4_K, QuantEncoding::kQ5_K,
                                  QuantEncoding::kQ6_K, QuantEncoding::kQ8_0};

int64_t block_elements(QuantEncoding e) { return quant_encoding_info(e)->elements_per_block; }

std::string name_of(const ::testing::TestParamInfo<QuantEncoding>& info) { return quant_encoding_name(info.param); }

enum class Data { kNormal, kUniform, kOutliers, kShifted };

std::vector<float> make_data(Data kind, int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (kind) {
      case Data::kNormal: v[i] = normal(gen); break;
      case Data::kUniform: v[i] = uniform(gen); break;
      case Data::kOutliers: v[i] = normal(gen) + (i % 97 == 0 ? 20.f : 0.f); break;
      case Data::kShifted: v[i] = -std::fabs(normal(gen)) - 3.f; break;  // all negative, off zero
    }
  }
  return v;
}

std::vector<uint8_t> quantize(QuantEncoding e, const std::vector<float>& x, int64_t rows, int64_t k) {
  std::vector<uint8_t> q(static_cast<size_t>(rows * quant_row_bytes(e, k)));
  cpu::quantize_rows(e, x.data(), rows, k, q.data());
  return q;
}

std::vector<float> dequantize(QuantEncoding e, const std::vector<uint8_t>& q, int64_t rows, int64_t k) {
  std::vector<float> y(static_cast<size_t>(rows * k));
  cpu::dequantize_rows(e, q.data(), rows, k, y.data());
  return y;
}

uint16_t half_bits(float f) { return cpu::float_to_f16(f); }

void put_half(uint8_t* p, float f) {
  const uint16_t h = half_bits(f);
  p[0] = static_cast<uint8_t>(h), p[1] = static_cast<uint8_t>(h >> 8);
}

// ---- layouts: raw bytes written by hand, decoded by the GGML rules ---------------------------

TEST(QuantLayout, Q4_0NibblesAndOffset) {
  uint8_t b[18] = {};
  put_half(b, 0.5f);
  for (int i = 0; i < 16; ++i) b[2 + i] = 0x88;  // level 8 everywhere: value 0
  b[2 + 0] = 0x3C;   // element 0: 12 -> (12 - 8) * 0.5;  element 16: 3 -> -2.5
  b[2 + 15] = 0xF0;  // element 15: 0 -> -4;  element 31: 15 -> 3.5
  const std::vector<float> y = dequantize(QuantEncoding::kQ4_0, std::vector<uint8_t>(b, b + 18), 1, 32);
  EXPECT_EQ(y[0], 2.f);
  EXPECT_EQ(y[16], -2.5f);
  EXPECT_EQ(y[15], -4.f);
  EXPECT_EQ(y[31], 3.5f);
  EXPECT_EQ(y[7], 0.f);
}

TEST(QuantLayout, Q8_0SignedBytes) {
  std::vector<uint8_t> b(34, 0);
  put_half(b.data(), 0.25f);
  b[2 + 3] = static_cast<uint8_t>(-7);
  b[2 + 31] = 127;
  const std::vector<float> y = dequantize(QuantEncoding::kQ8_0, b, 1, 32);
  EXPECT_EQ(y[3], -1.75f);
  EXPECT_EQ(y[31], 31.75f);
  EXPECT_EQ(y[0], 0.f);
}

// Q4_K / Q5_K header: d = 1, dmin = 0.5 and the 12 scale bytes for
// sc = {1, 2, 3, 4, 5, 6, 7, 63}, m = {0, 1, 2, 3, 4, 5, 6, 33}, packed by hand:
// bytes 0-3 sc[0..3] | (sc[4..7] >> 4) << 6, bytes 4-7 m[0..3] | (m[4..7] >> 4) << 6,
// bytes 8-11 (sc[4..7] & 15) | (m[4..7] & 15) << 4.
void put_k_header(uint8_t* b) {
  put_half(b, 1.f);
  put_half(b + 2, 0.5f);
  const uint8_t scales[12] = {1, 2, 3, 4 | 3 << 6,                                // sc[0..3], sc[7] >> 4
                              0, 1, 2, 3 | 2 << 6,                                // m[0..3], m[7] >> 4
                              5 | 4 << 4, 6 | 5 << 4, 7 | 6 << 4, 15 | 1 << 4};  // sc, m [4..7] & 15
  std::memcpy(b + 4, scales, 12);
}

TEST(QuantLayout, KScalePackingMatchesTheHandPackedBytes) {
  uint8_t b[144] = {};
  put_k_header(b);
  uint8_t sc[8], m[8], packed[12];
  cpu::unpack_k_scales(b + 4, sc, m);
  const uint8_t want_sc[8] = {1, 2, 3, 4, 5, 6, 7, 63}, want_m[8] = {0, 1, 2, 3, 4, 5, 6, 33};
  EXPECT_EQ(std::memcmp(sc, want_sc, 8), 0);
  EXPECT_EQ(std::memcmp(m, want_m, 8), 0);
  cpu::pack_k_scales(sc, m, packed);
  EXPECT_EQ(std::memcmp(packed, b + 4, 12), 0);
  // Every 6-bit pair survives the packing.
  for (int v = 0; v < 64; ++v) {
    uint8_t s[8], mm[8], back_s[8], back_m[8];
    for (int j = 0; j < 8; ++j)
      s[j] = static_cast<uint8_t>((v + 7 * j) & 63), mm[j] = static_cast<uint8_t>((v * 5 + j) & 63);
    cpu::pack_k_scales(s, mm, packed);
    cpu::unpack_k_scales(packed, back_s, back_m);
    ASSERT_EQ(std::memcmp(s, back_s, 8), 0);
    ASSERT_EQ(std::memcmp(mm, back_m, 8), 0);
  }
}

TEST(QuantLayout, Q4_KSubBlocksInNibbles) {
  std::vector<uint8_t> b(144, 0);
  put_k_header(b.data());
  b[16 + 32 * 3 + 5] = 0xA7;  // chunk 3: sub-block 6 (low nibble) and 7 (high), element 5
  const std::vector<float> y = dequantize(QuantEncoding::kQ4_K, b, 1, 256);
  EXPECT_EQ(y[6 * 32 + 5], 1.f * 7 * 7 - 0.5f * 6);     // 46
  EXPECT_EQ(y[7 * 32 + 5], 1.f * 63 * 10 - 0.5f * 33);  // 613.5
  EXPECT_EQ(y[2 * 32], -0.5f * 2);                      // level 0: -dmin * m
}

TEST(QuantLayout, Q5_KFifthBitFromQh) {
  std::vector<uint8_t> b(176, 0);
  put_k_header(b.data());
  b[16 + 5] = 1 << 6;             // qh[5] bit 6: element 6 * 32 + 5 gains 16
  b[16 + 32 + 32 * 3 + 5] = 0x07;  // its low four bits: 7
  b[16 + 31] = 1 << 1;            // qh[31] bit 1: element 32 + 31 = 16
  const std::vector<float> y = dequantize(QuantEncoding::kQ5_K, b, 1, 256);
  EXPECT_EQ(y[6 * 32 + 5], 1.f * 7 * 23 - 0.5f * 6);
  EXPECT_EQ(y[1 * 32 + 31], 1.f * 2 * 16 - 0.5f * 1);
  EXPECT_EQ(y[0], 0.f);
}

TEST(QuantLayout, Q6_KLowAndHighBitsAndGroupScales) {
  std::vector<uint8_t> b(210, 0);
  for (int i = 0; i < 128; ++i) b[i] = 0;  // ql
  for (int i = 0; i < 64; ++i) b[128 + i] = 0xAA;  // every high pair 2: level 32, value 0
  for (int g = 0; g < 16; ++g) b[192 + g] = static_cast<uint8_t>(static_cast<int8_t>(g - 8));
  put_half(b.data() + 208, 0.5f);
  // Second half (elements 128..255): ql[64 + 40] holds run 1 (low nibble) and run 3 (high)
  // of l = 8; qh[32 + 8] holds the top pairs of runs 0..3 at bits 0-1, 2-3, 4-5, 6-7.
  b[64 + 40] = 9 | 4 << 4;
  b[128 + 32 + 8] = 0 | 2 << 2 | 0 << 4 | 1 << 6;
  const std::vector<float> y = dequantize(QuantEncoding::kQ6_K, b, 1, 256);
  // element 128 + 32 + 8: level 9 | 2 << 4 = 41, group 8 + 2 (scale 2)
  EXPECT_EQ(y[168], 0.5f * 2 * (41 - 32));
  // element 128 + 96 + 8: level 4 | 1 << 4 = 20, group 8 + 6 (scale 6)
  EXPECT_EQ(y[232], 0.5f * 6 * (20 - 32));
  // element 128 + 8 (run 0): low bits 0 (ql[64 + 8]), high pair 0 -> level 0, group 8 (scale 0)
  EXPECT_EQ(y[136], 0.f);
  // element 128 + 64 + 8 (run 2): high nibble of ql[64 + 8] = 0, pair 0 -> -32, group 12 (4)
  EXPECT_EQ(y[200], 0.5f * 4 * -32);
  EXPECT_EQ(y[0], 0.f);  // level 32 anywhere else
}

TEST(QuantLayout, RowsMustBeWholeBlocks) {
  std::vector<float> x(40);
  std::vector<uint8_t> q(64);
  try {
    cpu::quantize_rows(QuantEncoding::kQ4_0, x.data(), 1, 40, q.data());
    FAIL() << "40 elements are not whole q4_0 blocks";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("q4_0"), std::string::npos) << e.what();
  }
}

// ---- the reference quantizer -----------------------------------------------------------------

// Error bounds of quantize -> dequantize, per block of the encoding (32 or 256 elements):
//   max |x - y| <= max_error * max|x over the block|   (any of the data sets)
//   sqrt(Σ (x - y)² / Σ x²) <= rms_error               (normal data)
// Q8_0's max bound is exact: half a step of max|x| / 127 (+ the half rounding of d). The others
// are what the fits reach on these data sets with some margin (measured on N(0, 1): RMS 8.2%
// Q4_0, 7.1% Q4_K, 3.5% Q5_K, 1.7% Q6_K, 0.53% Q8_0).
struct ErrorBound {
  QuantEncoding e;
  double max_error, rms_error;
};

ErrorBound bound_of(QuantEncoding e) {
  switch (e) {
    case QuantEncoding::kQ4_0: return {e, 0.16, 0.09};
    case QuantEncoding::kQ4_K: return {e, 0.14, 0.075};
    case QuantEncoding::kQ5_K: return {e, 0.075, 0.04};
    case QuantEncoding::kQ6_K: return {e, 0.03, 0.02};
    case QuantEncoding::kQ8_0: return {e, (1 + 1e-3) / 254, 0.006};
    case QuantEncoding::kNone: break;
  }
  return {e, 0, 0};
}

class QuantRoundTrip : public ::testing::TestWithParam<QuantEncoding> {};

TEST_P(QuantRoundTrip, ErrorWithinTheEncodingsBound) {
  const QuantEncoding e = GetParam();
  const ErrorBound bound = bound_of(e);
  const int64_t rows = 16, k = 1024, epb = block_elements(e);
  for (Data kind : {Data::kNormal, Data::kUniform, Data::kOutliers, Data::kShifted}) {
    const std::vector<float> x = make_data(kind, rows * k, 7);
    const std::vector<float> y = dequantize(e, quantize(e, x, rows, k), rows, k);
    double sq_err = 0, sq_x = 0;
    for (int64_t b = 0; b < rows * k / epb; ++b) {
      float amax = 0, worst = 0;
      for (int64_t i = b * epb; i < (b + 1) * epb; ++i) {
        amax = std::max(amax, std::fabs(x[i]));
        worst = std::max(worst, std::fabs(x[i] - y[i]));
        sq_err += double{x[i] - y[i]} * (x[i] - y[i]), sq_x += double{x[i]} * x[i];
      }
      ASSERT_LE(worst, bound.max_error * amax) << "data set " << static_cast<int>(kind) << ", block " << b;
    }
    if (kind == Data::kNormal) EXPECT_LE(std::sqrt(sq_err / sq_x), bound.rms_error);
  }
}

// Quantizing values an encoding decoded gives them back bit for bit: the fits find the grid a
// block lies on (its scales, mins and signs), so re-encoding decoded weights loses nothing.
// Shown on dense data. Not promised for blocks that fit several grids exactly (mostly zeros)
// or K-quant blocks that are all positive: those may come back on another, equally close grid.
TEST_P(QuantRoundTrip, DecodedDataIsAFixedPoint) {
  const QuantEncoding e = GetParam();
  const int64_t rows = 8, k = 1024;
  for (Data kind : {Data::kNormal, Data::kUniform, Data::kOutliers, Data::kShifted}) {
    const std::vector<float> once = dequantize(e, quantize(e, make_data(kind, rows * k, 11), rows, k), rows, k);
    const std::vector<float> twice = dequantize(e, quantize(e, once, rows, k), rows, k);
    int64_t differ = 0;
    for (size_t i = 0; i < once.size(); ++i) differ += once[i] != twice[i];
    EXPECT_EQ(differ, 0) << "data set " << static_cast<int>(kind);
  }
}

TEST_P(QuantRoundTrip, ZerosStayZeros) {
  const QuantEncoding e = GetParam();
  const int64_t k = 2 * block_elements(e);
  const std::vector<float> y = dequantize(e, quantize(e, std::vector<float>(k, 0.f), 1, k), 1, k);
  for (float v : y) ASSERT_EQ(v, 0.f);
}

INSTANTIATE_TEST_SUITE_P(Quant, QuantRoundTrip, ::testing::ValuesIn(kAll), name_of);

// ---- qmatmul ---------------------------------------------------------------------------------

struct AlignedScratch {
  explicit AlignedScratch(int64_t bytes) : p(std::aligned_alloc(64, static_cast<size_t>((bytes + 127) / 64 * 64))) {}
  ~AlignedScratch() { std::free(p); }
  void* p;
};

std::vector<float> run_qmatmul(QuantEncoding e, const std::vector<float>& x, int64_t m, int64_t k,
                               const std::vector<uint8_t>& w, int64_t n, QuantIsa isa) {
  std::vector<float> y(static_cast<size_t>(m * n), NAN);
  AlignedScratch scratch(cpu::qmatmul_scratch_bytes(e, m, k));
  cpu::qmatmul(e, x.data(), m, k, w.data(), n, y.data(), scratch.p, isa);
  return y;
}

std::vector<QuantIsa> isas() {
  std::vector<QuantIsa> v{QuantIsa::kScalar};
  if (cpu::cpu_has_avx2()) v.push_back(QuantIsa::kAvx2);
  return v;
}

struct Dims {
  int64_t m, n, blocks;
};

class QuantMatmul : public ::testing::TestWithParam<QuantEncoding> {};

// y = x · dequant(w)ᵀ in double is the reference. qmatmul rounds each activation to 8 bits
// with step d = max|x| / 127 over its block (32 elements for Q4_0 / Q8_0, 256 for the
// K-quants), at most d / 2 off, so
//   |y - ref| <= Σ_blocks d_b / 2 · Σ_{i in b} |w_i|  (+ float rounding: 2e-5 · Σ |x_i| (|w_i| + max|w|)).
TEST_P(QuantMatmul, MatchesTheDequantizedFloatProductWithinTheActivationRounding) {
  const QuantEncoding e = GetParam();
  const int64_t epb = block_elements(e), act_block = e == QuantEncoding::kQ4_0 || e == QuantEncoding::kQ8_0 ? 32 : 256;
  // m = 1 (matvec), odd m and n, n < m (split over rows), several blocks of K.
  for (const Dims& d :
       {Dims{1, 1, 1}, Dims{1, 37, 4}, Dims{3, 5, 2}, Dims{7, 64, 3}, Dims{16, 3, 2}, Dims{2, 130, 1}}) {
    const int64_t m = d.m, n = d.n, k = d.blocks * epb;
    const std::vector<float> x = make_data(Data::kNormal, m * k, 3);
    const std::vector<uint8_t> w = quantize(e, make_data(Data::kNormal, n * k, 5), n, k);
    const std::vector<float> wf = dequantize(e, w, n, k);
    std::vector<std::vector<float>> results;
    for (QuantIsa isa : isas()) results.push_back(run_qmatmul(e, x, m, k, w, n, isa));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float* xr = &x[i * k];
        const float* wr = &wf[j * k];
        float wmax = 0;
        for (int64_t t = 0; t < k; ++t) wmax = std::max(wmax, std::fabs(wr[t]));
        double ref = 0, bound = 0, rounding = 0;
        for (int64_t b = 0; b < k / act_block; ++b) {
          float amax = 0;
          double wsum = 0;
          for (int64_t t = b * act_block; t < (b + 1) * act_block; ++t) {
            amax = std::max(amax, std::fabs(xr[t]));
            wsum += std::fabs(wr[t]);
            ref += double{xr[t]} * wr[t];
            rounding += std::fabs(xr[t]) * (std::fabs(wr[t]) + wmax);
          }
          bound += amax / 127.0 / 2 * wsum;
        }
        const double tol = bound * (1 + 1e-3) + 2e-5 * rounding;
        for (size_t r = 0; r < results.size(); ++r)
          ASSERT_NEAR(results[r][i * n + j], ref, tol)
              << "isa " << r << ", m " << m << " n " << n << " k " << k << " at (" << i << ", " << j << ")";
        if (results.size() == 2)
          ASSERT_NEAR(results[0][i * n + j], results[1][i * n + j], 2e-5 * rounding)
              << "scalar vs AVX2, m " << m << " n " << n << " k " << k << " at (" << i << ", " << j << ")";
      }
    }
  }
}

// On activations that 8 bits hold exactly (integers in [-127, 127] with one of magnitude 127
// per block, so d = 1), both paths equal the float product but for rounding.
TEST_P(QuantMatmul, ExactActivationsGiveTheFloatProduct) {
  const QuantEncoding e = GetParam();
  const int64_t m = 2, n = 9, k = 2 * block_elements(e);
  std::vector<float> x(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m * k; ++i) x[i] = static_cast<float>((i * 37) % 255 - 127);
  for (int64_t i = 0; i < m * k; i += 32) x[i] = 127.f;
  const std::vector<uint8_t> w = quantize(e, make_data(Data::kUniform, n * k, 9), n, k);
  const std::vector<float> wf = dequantize(e, w, n, k);
  for (QuantIsa isa : isas()) {
    const std::vector<float> y = run_qmatmul(e, x, m, k, w, n, isa);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double ref = 0, mag = 0;
        for (int64_t t = 0; t < k; ++t) ref += double{x[i * k + t]} * wf[j * k + t], mag += std::fabs(x[i * k + t]);
        EXPECT_NEAR(y[i * n + j], ref, 1e-5 * mag * 4) << "isa " << static_cast<int>(isa);
      }
  }
}

TEST_P(QuantMatmul, EmptyAndZeroK) {
  const QuantEncoding e = GetParam();
  std::vector<float> y(6, 1.f);
  cpu::qmatmul(e, nullptr, 2, 0, nullptr, 3, y.data(), nullptr);
  for (float v : y) EXPECT_EQ(v, 0.f);
  EXPECT_EQ(cpu::qmatmul_scratch_bytes(e, 0, block_elements(e)), 0);
  cpu::qmatmul(e, nullptr, 0, block_elements(e), nullptr, 4, nullptr, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Quant, QuantMatmul, ::testing::ValuesIn(kAll), name_of);

TEST(QuantMatmulErrors, KMustBeWholeBlocks) {
  try {
    cpu::qmatmul_scratch_bytes(QuantEncoding::kQ4_K, 1, 100);
    FAIL() << "100 is not a multiple of 256";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("q4_k"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maxc

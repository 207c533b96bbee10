// quantized.cu (dequantize_rows, qmatmul_rows) under the emulator, with the launch geometry of
// its lowering (src/engine/lower_gpu/quantized.cc), against the CPU (kernels/cpu/
// quant_reference.h, qmatmul.h) for every GGUF encoding:
//   - dequantize gives the CPU reference's bits, on blocks from the CPU's quantizer and on
//     random bytes (every scale, min and high bit pattern; half scales normal, subnormal,
//     zero and negative);
//   - qmatmul equals x · dequantize(w)ᵀ to float rounding, and the CPU's qmatmul (which
//     quantizes x to 8 bits) within the error that quantization allows; m = 1, m not a
//     multiple of the kernel's rows per block, k shorter and longer than the block, and a grid
//     with fewer blocks than (column, row group) tasks, so blocks loop.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/quantized.cu"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/quant_encoding.h"
#include "gpu_emu/emu_test_util.h"
#include "gpu_emu/qmatmul_check.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/qmatmul.h"
#include "kernels/cpu/quant_reference.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc::gpu_emu::testing {
namespace {

const QuantEncodingInfo& info(QuantEncoding e) { return *quant_encoding_info(e); }

// Where each encoding keeps its half scales (d, and dmin for the K-quants with minimums).
std::vector<int> half_offsets(QuantEncoding e) {
  switch (e) {
    case QuantEncoding::kQ4_0:
    case QuantEncoding::kQ8_0: return {0};
    case QuantEncoding::kQ4_K:
    case QuantEncoding::kQ5_K: return {0, 2};
    case QuantEncoding::kQ6_K: return {208};
    case QuantEncoding::kNone: break;
  }
  return {};
}

// rows x k elements of random bytes whose half scales are finite: mostly normal values of
// either sign, with some subnormals and zeros.
std::vector<uint8_t> random_blocks(QuantEncoding e, int64_t rows, int64_t k, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * quant_row_bytes(e, k)));
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> scale(-0.5f, 0.5f);
  const size_t blocks = bytes.size() / static_cast<size_t>(info(e).block_bytes);
  for (size_t i = 0; i < blocks; ++i)
    for (int offset : half_offsets(e)) {
      const unsigned kind = rng() % 8;
      const uint16_t h = kind == 0   ? static_cast<uint16_t>(rng() % 0x400 | (rng() & 1) << 15)  // subnormal
                         : kind == 1 ? uint16_t{0}
                                     : cpu::float_to_f16(scale(rng));
      uint8_t* p = bytes.data() + i * info(e).block_bytes + offset;
      p[0] = static_cast<uint8_t>(h), p[1] = static_cast<uint8_t>(h >> 8);
    }
  return bytes;
}

std::vector<uint8_t> quantized(QuantEncoding e, const std::vector<float>& x, int64_t rows, int64_t k) {
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * quant_row_bytes(e, k)));
  cpu::quantize_rows(e, x.data(), rows, k, bytes.data());
  return bytes;
}

std::vector<float> cpu_dequantized(QuantEncoding e, const std::vector<uint8_t>& w, int64_t rows, int64_t k) {
  std::vector<float> out(static_cast<size_t>(rows * k));
  cpu::dequantize_rows(e, w.data(), rows, k, out.data());
  return out;
}

// The emulated dequantize_rows of encoding tag Q, on a grid smaller than the elements.
template <class Q>
std::vector<float> gpu_dequantized(const std::vector<uint8_t>& w, int64_t elements, unsigned grid) {
  std::vector<float> out(static_cast<size_t>(elements), -1.f);
  emulate_launch(dim3(grid), dim3(256), g::dequantize_rows<Q>, w.data(), out.data(), elements);
  return out;
}

template <class Q>
std::vector<float> gpu_qmatmul(const std::vector<float>& x, const std::vector<uint8_t>& w, int64_t m, int64_t k,
                               int64_t n, unsigned grid) {
  std::vector<float> out(static_cast<size_t>(m * n), -1.f);
  emulate_launch(dim3(grid), dim3(256), g::qmatmul_rows<Q>, x.data(), w.data(), out.data(), m, k, n);
  return out;
}

template <class Q>
void check_dequantize(QuantEncoding e) {
  const std::string name = quant_encoding_name(e);
  ASSERT_EQ(Q::kElements, info(e).elements_per_block) << name;
  ASSERT_EQ(Q::kBytes, info(e).block_bytes) << name;
  const int64_t k = 3 * Q::kElements;
  // Fitted blocks: 5 rows of smooth data, decoded on 2 blocks of 256 threads (they loop).
  std::vector<float> x = random_values<float>(static_cast<size_t>(5 * k), -3, 3, 7);
  const std::vector<uint8_t> fitted = quantized(e, x, 5, k);
  expect_same_bits(gpu_dequantized<Q>(fitted, 5 * k, 2), cpu_dequantized(e, fitted, 5, k), name + " fitted blocks");
  // Random bytes: every bit of scales, mins, levels and high bits, 64 blocks.
  const int64_t rows = 64 / 3 + 1;
  const std::vector<uint8_t> noise = random_blocks(e, rows, k, 11 + static_cast<unsigned>(e));
  expect_same_bits(gpu_dequantized<Q>(noise, rows * k, 3), cpu_dequantized(e, noise, rows, k),
                   name + " random bytes");
}

TEST(EmulatedQuantized, DequantizeGivesTheCpuReferenceBitsForEveryEncoding) {
  check_dequantize<g::QuantQ4_0>(QuantEncoding::kQ4_0);
  check_dequantize<g::QuantQ8_0>(QuantEncoding::kQ8_0);
  check_dequantize<g::QuantQ4_K>(QuantEncoding::kQ4_K);
  check_dequantize<g::QuantQ5_K>(QuantEncoding::kQ5_K);
  check_dequantize<g::QuantQ6_K>(QuantEncoding::kQ6_K);
}

struct MatmulCase {
  int64_t m, n, blocks;  // k = blocks * elements_per_block
  unsigned grid;
};

template <class Q>
void check_qmatmul(QuantEncoding e, const MatmulCase& c, unsigned seed) {
  const int64_t m = c.m, n = c.n, k = c.blocks * Q::kElements;
  const std::string label = std::string(quant_encoding_name(e)) + " m = " + std::to_string(m) +
                            ", n = " + std::to_string(n) + ", k = " + std::to_string(k);
  const std::vector<float> x = random_values<float>(static_cast<size_t>(m * k), -1, 1, seed);
  const std::vector<float> w_float = random_values<float>(static_cast<size_t>(n * k), -2, 2, seed + 1);
  const std::vector<uint8_t> w = quantized(e, w_float, n, k);
  const std::vector<float> wd = cpu_dequantized(e, w, n, k);

  const std::vector<float> got = gpu_qmatmul<Q>(x, w, m, k, n, c.grid);

  std::vector<float> cpu_y(static_cast<size_t>(m * n), -1.f);
  std::vector<unsigned char> scratch(static_cast<size_t>(cpu::qmatmul_scratch_bytes(e, m, k)));
  cpu::qmatmul(e, x.data(), m, k, w.data(), n, cpu_y.data(), scratch.data());

  maxc::testing::expect_qmatmul_close(label, got, cpu_y, x, wd, m, k, n);
}

template <class Q>
void check_qmatmul_shapes(QuantEncoding e, unsigned seed) {
  // k of 1 block (fewer elements than threads for every encoding) to several; m = 1, a
  // partial row group, and several groups; grids smaller than n x groups.
  const MatmulCase cases[] = {{1, 3, 1, 2}, {5, 7, Q::kElements == 32 ? 11 : 2, 3}, {9, 2, 3, 4}, {4, 5, 1, 64}};
  for (const MatmulCase& c : cases) check_qmatmul<Q>(e, c, seed++);
}

TEST(EmulatedQuantized, QmatmulMatchesTheDequantizedProductAndTheCpu) {
  check_qmatmul_shapes<g::QuantQ4_0>(QuantEncoding::kQ4_0, 100);
  check_qmatmul_shapes<g::QuantQ8_0>(QuantEncoding::kQ8_0, 200);
  check_qmatmul_shapes<g::QuantQ4_K>(QuantEncoding::kQ4_K, 300);
  check_qmatmul_shapes<g::QuantQ5_K>(QuantEncoding::kQ5_K, 400);
  check_qmatmul_shapes<g::QuantQ6_K>(QuantEncoding::kQ6_K, 500);
}

// An empty k writes zeros, as the CPU's qmatmul does.
TEST(EmulatedQuantized, QmatmulOfEmptyKIsZero) {
  const std::vector<float> x;
  const std::vector<uint8_t> w;
  EXPECT_EQ(gpu_qmatmul<g::QuantQ4_K>(x, w, 3, 0, 2, 2), std::vector<float>(6, 0.f));
}

TEST(EmulatedQuantized, CatalogNamesTheTagOfEachEncoding) {
  EXPECT_EQ(gpu::dequantize_kernel(QuantEncoding::kQ4_0), "maxc::gpu::dequantize_rows<maxc::gpu::QuantQ4_0>");
  EXPECT_EQ(gpu::qmatmul_kernel(QuantEncoding::kQ6_K), "maxc::gpu::qmatmul_rows<maxc::gpu::QuantQ6_K>");
  EXPECT_THROW(gpu::qmatmul_kernel(QuantEncoding::kNone), Error);
  size_t instances = 0;
  for (const gpu::KernelFamily& f : gpu::kernel_catalog())
    if (f.source == "quantized.cu") instances += f.instances.size();
  EXPECT_EQ(instances, 10u);
}

}  // namespace
}  // namespace maxc::gpu_emu::testing

#include "kernels/cpu/gemm_packed.h"

#include <algorithm>

#include "kernels/cpu/gemm_tile.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/vector_math.h"

namespace maxc::cpu {
namespace {

constexpr int64_t kPanel = PackedGemm::kPanel;
static_assert(kPanel == kTileCols, "a panel is one tile wide");
// k per block: a panel's slice (kBlockK x 16 floats, 16 KiB) stays in L1 while the row
// tiles walk it.
constexpr int64_t kBlockK = 256;
// Rows per block: a block's slice of a, kBlockRows x kBlockK floats (144 KiB), stays in L2.
constexpr int64_t kBlockRows = 144;
// Prefetching the next panel pays from 8 row tiles on, where each tile issues at most
// kBlockK / 8 of its lines among its FMAs (cold weights, one thread: 64 rows 12% faster).
// With fewer tiles the bursts only queue behind the demand loads (8 rows: 8% slower), and a
// single tile walks each panel whole, a stream the hardware prefetcher follows anyway.
constexpr int64_t kPrefetchMinRows = 8 * kTileRows;

// y = act(y) over one row of n; the switch sits outside the loop so each loop vectorizes.
[[gnu::always_inline]] inline void activate_row(float* row, int64_t n, Activation activation) {
  switch (activation) {
    case Activation::kNone: break;
    case Activation::kRelu:
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) row[j] = row[j] > 0.f ? row[j] : 0.f;
      break;
    case Activation::kGelu:
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) row[j] = vm::gelu_erf_f(row[j]);
      break;
    case Activation::kGeluTanh:
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) row[j] = vm::gelu_tanh_f(row[j]);
      break;
    case Activation::kSigmoid:
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) row[j] = vm::sigmoid_f(row[j]);
      break;
    case Activation::kTanh:
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) row[j] = vm::tanh_f(row[j]);
      break;
    case Activation::kSilu:
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) row[j] = row[j] * vm::sigmoid_f(row[j]);
      break;
  }
}

// The epilogue over rows x cols of c (rows ldc apart), bias starting at the strip's first
// column. One call per strip, not per row: a strip row is only 16 floats, and a call per
// row paid the dispatch and the reload of the activation's two dozen constants for two
// vectors of work (GELU cost three times its own arithmetic that way).
MAXC_SIMD_CLONES void epilogue_strip(float* c, int64_t rows, int64_t cols, int64_t ldc, const float* bias,
                                     const MatmulEpilogue& e) {
  for (int64_t i = 0; i < rows; ++i) {
    float* row = c + i * ldc;
    if (e.has_bias) {
      if (e.bias_len == 1) {
        const float b = bias[0];
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) row[j] += b;
      } else {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) row[j] += bias[j];
      }
    }
    activate_row(row, cols, e.activation);
  }
}

// Panels [p0, p1) of the result, all rows. Rows go in blocks of kBlockRows so the block's
// slice of a (kBlockRows x kBlockK floats) stays in L2 while the panels walk past it. The
// epilogue runs on each block's strip of a panel right after its last k block, while the
// strip is still in L1, instead of in a second pass over c.
MAXC_SIMD_CLONES void panels(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed,
                             float* c, int64_t ldc, int64_t p0, int64_t p1, const float* bias,
                             const MatmulEpilogue& e) {
  // One row tile reuses nothing across panels: walk each panel whole, one contiguous stream.
  const int64_t block = m <= kTileRows ? k : kBlockK;
  const bool has_epilogue = e.has_bias || e.activation != Activation::kNone;
  for (int64_t k0 = 0; k0 < k; k0 += block) {
    const int64_t kb = std::min(block, k - k0);
    const bool last = k0 + kb == k;
    for (int64_t i0 = 0; i0 < m; i0 += kBlockRows) {
      const int64_t mb = std::min(kBlockRows, m - i0);
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t j0 = p * kPanel, cols = std::min(kPanel, n - j0);
        float* strip = c + i0 * ldc + j0;
        // The next panel's slice (a slice row of 16 floats is one cache line); the last panel
        // of a block hands on to the first of the next k block.
        const bool next_k = p + 1 == p1 && i0 + kBlockRows >= m && k0 + kb < k;
        const float* next = p + 1 < p1 ? packed + (p + 1) * k * kPanel + k0 * kPanel
                            : next_k   ? packed + p0 * k * kPanel + (k0 + kb) * kPanel
                                       : nullptr;
        const int64_t next_lines =
            !next || m < kPrefetchMinRows ? 0 : p + 1 < p1 ? kb : std::min(block, k - k0 - kb);
        gemm_tiles(mb, kb, 1.f, a + i0 * lda + k0, lda, packed + p * k * kPanel + k0 * kPanel, kPanel, k0 > 0, strip,
                   ldc, cols, next, next_lines);
        if (last && has_epilogue) {
          const float* strip_bias = e.has_bias && e.bias_len != 1 ? bias + j0 : bias;
          epilogue_strip(strip, mb, cols, ldc, strip_bias, e);
        }
      }
    }
  }
}

}  // namespace

uint64_t PackedGemm::packed_bytes(int64_t k, int64_t n) {
  return sizeof(float) * static_cast<uint64_t>((n + kPanel - 1) / kPanel) * kPanel * static_cast<uint64_t>(k);
}

void PackedGemm::pack(const float* b, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n, float* packed) {
  const int64_t num_panels = (n + kPanel - 1) / kPanel;
  parallel_for(num_panels, k * kPanel, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      float* dst = packed + p * k * kPanel;
      const int64_t j0 = p * kPanel, cols = std::min(kPanel, n - j0);
      for (int64_t q = 0; q < k; ++q, dst += kPanel) {
        for (int64_t j = 0; j < cols; ++j) dst[j] = b[q * stride_k + (j0 + j) * stride_n];
        for (int64_t j = cols; j < kPanel; ++j) dst[j] = 0.f;
      }
    }
  });
}

void gemm_packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b, float* c,
                 int64_t ldc, const float* bias, const MatmulEpilogue& e) {
  if (m <= 0 || n <= 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.f);
  } else {
    const int64_t num_panels = (n + kPanel - 1) / kPanel;
    parallel_for(num_panels, 2 * m * k * kPanel, [&](int64_t begin, int64_t end) {
      panels(m, n, k, a, lda, packed_b, c, ldc, begin, end, bias, e);
    });
    return;
  }
  if (e.has_bias || e.activation != Activation::kNone)
    epilogue_strip(c, m, n, ldc, bias, e);
}

}  // namespace maxc::cpu

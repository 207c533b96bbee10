// The register tile both float32 GEMMs are built from (gemm_small, gemm_packed): Rows x 16
// results kept in 2 * Rows eight-float accumulators while k is walked. With six rows that is
// 12 accumulators, two rows of b and a broadcast: 15 of the 16 AVX registers, and 12 FMAs
// per 8 loads keep the FMA units, not the loads, busy. Include only from .cc files of
// kernels/cpu; always inlined, so each SIMD clone of the caller compiles it for its own
// instruction set.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/vec8.h"

namespace maxc::cpu {

inline constexpr int kTileRows = 6;
inline constexpr int kTileCols = 16;

// c[Rows, cols] (=|+=) alpha * a[Rows, k] @ b[k, 16], rows of a, b and c lda, ldb and ldc
// floats apart; += when `accumulate`. Only the first `cols` (<= 16) columns are stored, but
// b's 16 are read.
template <int Rows>
[[gnu::always_inline]] inline void gemm_tile(int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                                             int64_t ldb, bool accumulate, float* c, int64_t ldc, int64_t cols) {
  V8 acc[Rows][2] = {};
  for (int64_t p = 0; p < k; ++p) {
    const V8 b0 = load8(b + p * ldb), b1 = load8(b + p * ldb + 8);
    // Unrolled, so the accumulators live in registers, not in an array on the stack.
#pragma GCC unroll 6
    for (int r = 0; r < Rows; ++r) {
      const float x = a[r * lda + p];
      acc[r][0] += x * b0;
      acc[r][1] += x * b1;
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < Rows; ++r) {
    float* out = c + r * ldc;
    const V8 lo = acc[r][0] * alpha, hi = acc[r][1] * alpha;
    if (cols == kTileCols) {
      store8(out, accumulate ? lo + load8(out) : lo);
      store8(out + 8, accumulate ? hi + load8(out + 8) : hi);
    } else {
      float staged[kTileCols];
      store8(staged, lo);
      store8(staged + 8, hi);
      for (int64_t j = 0; j < cols; ++j) out[j] = staged[j] + (accumulate ? out[j] : 0.f);
    }
  }
}

// gemm_tile over all m rows: whole six-row tiles, then one tile of the rows left. Meanwhile
// `prefetch_lines` cache lines from `prefetch` are fetched into L2, a share per tile: the
// next panel's slice of b, which a weight streamed from memory would otherwise make the
// first tile wait for, line by line.
[[gnu::always_inline]] inline void gemm_tiles(int64_t m, int64_t k, float alpha, const float* a, int64_t lda,
                                              const float* b, int64_t ldb, bool accumulate, float* c, int64_t ldc,
                                              int64_t cols, const float* prefetch = nullptr,
                                              int64_t prefetch_lines = 0) {
  const int64_t tiles = (m + kTileRows - 1) / kTileRows;
  const int64_t lines_per_tile = (prefetch_lines + tiles - 1) / std::max<int64_t>(tiles, 1);
  int64_t i = 0;
  for (; i + kTileRows <= m; i += kTileRows) {
    const int64_t first = i / kTileRows * lines_per_tile, last = std::min(first + lines_per_tile, prefetch_lines);
    for (int64_t line = first; line < last; ++line) __builtin_prefetch(prefetch + line * 16, 0, 2);
    gemm_tile<kTileRows>(k, alpha, a + i * lda, lda, b, ldb, accumulate, c + i * ldc, ldc, cols);
  }
  const float* ar = a + i * lda;
  float* cr = c + i * ldc;
  switch (m - i) {
    case 5: gemm_tile<5>(k, alpha, ar, lda, b, ldb, accumulate, cr, ldc, cols); break;
    case 4: gemm_tile<4>(k, alpha, ar, lda, b, ldb, accumulate, cr, ldc, cols); break;
    case 3: gemm_tile<3>(k, alpha, ar, lda, b, ldb, accumulate, cr, ldc, cols); break;
    case 2: gemm_tile<2>(k, alpha, ar, lda, b, ldb, accumulate, cr, ldc, cols); break;
    case 1: gemm_tile<1>(k, alpha, ar, lda, b, ldb, accumulate, cr, ldc, cols); break;
    default: break;
  }
}

}  // namespace maxc::cpu

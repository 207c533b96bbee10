// The register tile both float32 GEMMs are built from (gemm_small, gemm_packed): Rows x 16
// results kept in 2 * Rows eight-float accumulators while k is walked. With six rows that is
// 12 accumulators, two rows of b and a broadcast: 15 of the 16 AVX registers, and 12 FMAs
// per 8 loads keep the FMA units, not the loads, busy. In sixteen-float vectors (V16, for
// AVX-512's 32 registers) the same tile is Rows x 32. Include only from .cc files of
// kernels/cpu; always inlined, so each SIMD clone of the caller compiles it for its own
// instruction set.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/vec8.h"

namespace maxc::cpu {

inline constexpr int kTileRows = 6;
inline constexpr int kTileCols = 16;

// c[Rows, cols] (=|+=) alpha * a[Rows, k] @ b[k, 2 * lanes of V] (16 columns in V8, 32 in
// V16 where AVX-512 runs), rows of a, b and c lda, ldb and ldc floats apart; += when
// `accumulate`. Only the first `cols` columns are stored, but all of b's are read.
template <int Rows, typename V = V8>
[[gnu::always_inline]] inline void gemm_tile(int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                                             int64_t ldb, bool accumulate, float* c, int64_t ldc, int64_t cols) {
  constexpr int lanes = sizeof(V) / sizeof(float);
  V acc[Rows][2] = {};
  for (int64_t p = 0; p < k; ++p) {
    const V b0 = load_vec<V>(b + p * ldb), b1 = load_vec<V>(b + p * ldb + lanes);
    // Unrolled, so the accumulators live in registers, not in an array on the stack.
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
      const float x = a[r * lda + p];
      acc[r][0] += x * b0;
      acc[r][1] += x * b1;
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r) {
    float* out = c + r * ldc;
    const V lo = acc[r][0] * alpha, hi = acc[r][1] * alpha;
    if (cols == 2 * lanes) {
      store_vec(out, accumulate ? lo + load_vec<V>(out) : lo);
      store_vec(out + lanes, accumulate ? hi + load_vec<V>(out + lanes) : hi);
    } else {
      float staged[2 * lanes];
      store_vec(staged, lo);
      store_vec(staged + lanes, hi);
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

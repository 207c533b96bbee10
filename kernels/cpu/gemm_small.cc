#include "kernels/cpu/gemm_small.h"

#include "kernels/cpu/simd.h"
#include "kernels/cpu/vec8.h"

namespace maxc::cpu {
namespace {

// 6 x 16 results are 12 accumulators: with the two rows of B and a broadcast that is 15 of
// the 16 AVX registers, and 12 FMAs per 8 loads keep the FMA units, not the loads, busy.
constexpr int kTileRows = 6;
constexpr int kTileCols = 16;

// One tile of rows x 16 results. Inlined into each clone of the caller, so it is compiled
// for that clone's instruction set.
template <int Rows>
[[gnu::always_inline]] inline void tile(int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                                        int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  V8 acc[Rows][2] = {};
  for (int64_t p = 0; p < k; ++p) {
    const V8 b0 = load8(b + p * ldb), b1 = load8(b + p * ldb + 8);
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
    V8 lo = acc[r][0] * alpha, hi = acc[r][1] * alpha;
    if (accumulate) lo += load8(out), hi += load8(out + 8);
    store8(out, lo);
    store8(out + 8, hi);
  }
}

// Columns past the last whole tile.
[[gnu::always_inline]] inline void edge(int64_t m, int64_t j0, int64_t n, int64_t k, float alpha, const float* a,
                                        int64_t lda, const float* b, int64_t ldb, bool accumulate, float* c,
                                        int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = j0; j < n; ++j) {
      float sum = 0.f;
      for (int64_t p = 0; p < k; ++p) sum += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = alpha * sum + (accumulate ? c[i * ldc + j] : 0.f);
    }
}

}  // namespace

MAXC_SIMD_CLONES void gemm_small_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                                     const float* b, int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  const int64_t whole = n / kTileCols * kTileCols;
  for (int64_t j = 0; j < whole; j += kTileCols) {
    int64_t i = 0;
    for (; i + kTileRows <= m; i += kTileRows)
      tile<kTileRows>(k, alpha, a + i * lda, lda, b + j, ldb, accumulate, c + i * ldc + j, ldc);
    switch (m - i) {
      case 5: tile<5>(k, alpha, a + i * lda, lda, b + j, ldb, accumulate, c + i * ldc + j, ldc); break;
      case 4: tile<4>(k, alpha, a + i * lda, lda, b + j, ldb, accumulate, c + i * ldc + j, ldc); break;
      case 3: tile<3>(k, alpha, a + i * lda, lda, b + j, ldb, accumulate, c + i * ldc + j, ldc); break;
      case 2: tile<2>(k, alpha, a + i * lda, lda, b + j, ldb, accumulate, c + i * ldc + j, ldc); break;
      case 1: tile<1>(k, alpha, a + i * lda, lda, b + j, ldb, accumulate, c + i * ldc + j, ldc); break;
      default: break;
    }
  }
  if (whole < n) edge(m, whole, n, k, alpha, a, lda, b, ldb, accumulate, c, ldc);
}

}  // namespace maxc::cpu

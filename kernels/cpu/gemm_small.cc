#include "kernels/cpu/gemm_small.h"

#include "kernels/cpu/gemm_tile.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

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
  for (int64_t j = 0; j < whole; j += kTileCols)
    gemm_tiles(m, k, alpha, a, lda, b + j, ldb, accumulate, c + j, ldc, kTileCols);
  if (whole < n) edge(m, whole, n, k, alpha, a, lda, b, ldb, accumulate, c, ldc);
}

}  // namespace maxc::cpu

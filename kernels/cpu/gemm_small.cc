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

MAXC_SIMD_CLONES void gemm_small_avx2(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                                      const float* b, int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  const int64_t whole = n / kTileCols * kTileCols;
  for (int64_t j = 0; j < whole; j += kTileCols)
    gemm_tiles(m, k, alpha, a, lda, b + j, ldb, accumulate, c + j, ldc, kTileCols);
  if (whole < n) edge(m, whole, n, k, alpha, a, lda, b, ldb, accumulate, c, ldc);
}

#if MAXC_HAVE_AVX2
// Where AVX-512 runs, tiles of Rows x 32 results in 2 * Rows sixteen-float registers (of 32):
// twice the AVX2 tile's width and more rows per loaded b. Attention's two products at BERT's
// shapes ([32, 64] @ [64, 128] and [32, 128] @ [128, 64]) took half their AVX2 time.
constexpr int kWideRows = 8, kWideCols = 32;

template <int Rows>
[[gnu::always_inline]] inline void wide_tile(int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                                             int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  gemm_tile<Rows, V16>(k, alpha, a, lda, b, ldb, accumulate, c, ldc, kWideCols);
}

__attribute__((target("avx512f,avx512vl,fma"))) void gemm_small_avx512(int64_t m, int64_t n, int64_t k, float alpha,
                                                                        const float* a, int64_t lda, const float* b,
                                                                        int64_t ldb, bool accumulate, float* c,
                                                                        int64_t ldc) {
  const int64_t whole = n / kWideCols * kWideCols;
  for (int64_t j = 0; j < whole; j += kWideCols) {
    int64_t i = 0;
    for (; i + kWideRows <= m; i += kWideRows)
      wide_tile<kWideRows>(k, alpha, a + i * lda, lda, b + j, ldb, accumulate, c + i * ldc + j, ldc);
    const float* ar = a + i * lda;
    float* cr = c + i * ldc + j;
    switch (m - i) {
      case 7: wide_tile<7>(k, alpha, ar, lda, b + j, ldb, accumulate, cr, ldc); break;
      case 6: wide_tile<6>(k, alpha, ar, lda, b + j, ldb, accumulate, cr, ldc); break;
      case 5: wide_tile<5>(k, alpha, ar, lda, b + j, ldb, accumulate, cr, ldc); break;
      case 4: wide_tile<4>(k, alpha, ar, lda, b + j, ldb, accumulate, cr, ldc); break;
      case 3: wide_tile<3>(k, alpha, ar, lda, b + j, ldb, accumulate, cr, ldc); break;
      case 2: wide_tile<2>(k, alpha, ar, lda, b + j, ldb, accumulate, cr, ldc); break;
      case 1: wide_tile<1>(k, alpha, ar, lda, b + j, ldb, accumulate, cr, ldc); break;
      default: break;
    }
  }
  if (whole < n) gemm_small_avx2(m, n - whole, k, alpha, a, lda, b + whole, ldb, accumulate, c + whole, ldc);
}
#endif

}  // namespace

void gemm_small_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                    int64_t ldb, bool accumulate, float* c, int64_t ldc) {
#if MAXC_HAVE_AVX2
  if (cpu_has_avx512()) return gemm_small_avx512(m, n, k, alpha, a, lda, b, ldb, accumulate, c, ldc);
#endif
  gemm_small_avx2(m, n, k, alpha, a, lda, b, ldb, accumulate, c, ldc);
}

}  // namespace maxc::cpu

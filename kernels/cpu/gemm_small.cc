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
typedef float V16 __attribute__((vector_size(64)));

[[gnu::always_inline]] inline V16 load16(const float* p) {
  V16 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

[[gnu::always_inline]] inline void store16(float* p, V16 v) { __builtin_memcpy(p, &v, sizeof v); }

constexpr int kWideRows = 8, kWideCols = 32;

template <int Rows>
[[gnu::always_inline]] inline void wide_tile(int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                                             int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  V16 acc[Rows][2] = {};
  for (int64_t p = 0; p < k; ++p) {
    const V16 b0 = load16(b + p * ldb), b1 = load16(b + p * ldb + 16);
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
    const V16 lo = acc[r][0] * alpha, hi = acc[r][1] * alpha;
    store16(out, accumulate ? lo + load16(out) : lo);
    store16(out + 16, accumulate ? hi + load16(out + 16) : hi);
  }
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

// AVX2 and AVX-512 exp loops for softmax, with a portable fallback (see softmax_exp.h).
#include "kernels/cpu/softmax_exp.h"

#include <cmath>

#include "kernels/cpu/simd.h"

#if MAXC_HAVE_AVX2
#include <immintrin.h>
#endif

namespace maxc::cpu {
namespace {

float exp_shifted_sum_portable(const float* x, float shift, float* y, int64_t n) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = std::exp(x[i] - shift);
    if (y) y[i] = e;
    sum += e;
  }
  return sum;
}

void exp_shifted_accumulate_portable(const float* x, const float* shift, float* sum, float* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float e = std::exp(x[j] - shift[j]);
    sum[j] += e;
    if (y) y[j] = e;
  }
}

#if MAXC_HAVE_AVX2

MAXC_TARGET_AVX2 inline __m256 exp256(__m256 x) {
  const __m256 kMin = _mm256_set1_ps(-87.3365447f), kMax = _mm256_set1_ps(88.7228394f);
  // max/min return their second operand for NaN, so NaN is clamped here and restored below.
  // Lanes below kMin (a mask's -inf or lowest float: half the scores of a padded batch)
  // compute e^0 instead, which the select below replaces by 0: clamped to kMin they made a
  // subnormal product, and a subnormal costs a microcode assist per lane (a softmax over
  // half-masked rows ran 50% slower).
  const __m256 below = _mm256_cmp_ps(x, kMin, _CMP_LT_OQ);
  const __m256 xc = _mm256_andnot_ps(below, _mm256_min_ps(_mm256_max_ps(x, kMin), kMax));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 e = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n in two factors, so n = 128 (x near kMax) stays inside the exponent field.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i half = _mm256_srai_epi32(ni, 1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 scale_a = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
  const __m256 scale_b = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, half), bias), 23));
  __m256 result = _mm256_mul_ps(_mm256_mul_ps(e, scale_a), scale_b);
  result = _mm256_andnot_ps(below, result);
  result = _mm256_blendv_ps(result, _mm256_set1_ps(INFINITY), _mm256_cmp_ps(x, kMax, _CMP_GT_OQ));
  return _mm256_blendv_ps(result, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// Lanes past n read and write nothing: the tail goes through a masked load and store.
MAXC_TARGET_AVX2 inline __m256i tail_mask(int64_t left) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(left)), lanes);
}

MAXC_TARGET_AVX2 float exp_shifted_sum_avx2(const float* x, float shift, float* y, int64_t n) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 e0 = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    const __m256 e1 = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), s));
    if (y) {
      _mm256_storeu_ps(y + i, e0);
      _mm256_storeu_ps(y + i + 8, e1);
    }
    acc0 = _mm256_add_ps(acc0, e0);
    acc1 = _mm256_add_ps(acc1, e1);
  }
  for (; i < n; i += 8) {
    const __m256i mask = tail_mask(n - i);
    const __m256 e = _mm256_and_ps(exp256(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), s)), _mm256_castsi256_ps(mask));
    if (y) _mm256_maskstore_ps(y + i, mask, e);
    acc0 = _mm256_add_ps(acc0, e);
  }
  const __m256 acc = _mm256_add_ps(acc0, acc1);
  __m128 v = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));
  v = _mm_add_ss(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(v);
}

MAXC_TARGET_AVX2 void exp_shifted_accumulate_avx2(const float* x, const float* shift, float* sum, float* y,
                                                  int64_t n) {
  for (int64_t j = 0; j < n; j += 8) {
    const __m256i mask = tail_mask(n - j);
    const __m256 e = exp256(_mm256_sub_ps(_mm256_maskload_ps(x + j, mask), _mm256_maskload_ps(shift + j, mask)));
    _mm256_maskstore_ps(sum + j, mask, _mm256_add_ps(_mm256_maskload_ps(sum + j, mask), e));
    if (y) _mm256_maskstore_ps(y + j, mask, e);
  }
}

// The same exp in sixteen-float registers where AVX-512 runs (attention's softmax over
// BERT's 128 keys took 2x its AVX2 time); lane masks replace the blends and the tail's
// masked moves.
#define MAXC_TARGET_AVX512 __attribute__((target("avx512f")))

MAXC_TARGET_AVX512 inline __m512 exp512(__m512 x) {
  const __m512 kMin = _mm512_set1_ps(-87.3365447f), kMax = _mm512_set1_ps(88.7228394f);
  const __mmask16 below = _mm512_cmp_ps_mask(x, kMin, _CMP_LT_OQ);  // e^0 computed, 0 stored
  const __m512 xc = _mm512_maskz_mov_ps(static_cast<__mmask16>(~below), _mm512_min_ps(_mm512_max_ps(x, kMin), kMax));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 e = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  // e * 2^n in one instruction, exact as the two multiplications of exp256 are (n = 128
  // included: it overflows to inf, as it must).
  __m512 result = _mm512_maskz_scalef_ps(static_cast<__mmask16>(~below), e, n);
  result = _mm512_mask_mov_ps(result, _mm512_cmp_ps_mask(x, kMax, _CMP_GT_OQ), _mm512_set1_ps(INFINITY));
  return _mm512_mask_mov_ps(result, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

MAXC_TARGET_AVX512 float exp_shifted_sum_avx512(const float* x, float shift, float* y, int64_t n) {
  const __m512 s = _mm512_set1_ps(shift);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 e0 = exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i), s));
    const __m512 e1 = exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), s));
    if (y) {
      _mm512_storeu_ps(y + i, e0);
      _mm512_storeu_ps(y + i + 16, e1);
    }
    acc0 = _mm512_add_ps(acc0, e0);
    acc1 = _mm512_add_ps(acc1, e1);
  }
  for (; i < n; i += 16) {
    const __mmask16 mask = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 e = _mm512_maskz_mov_ps(mask, exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), s)));
    if (y) _mm512_mask_storeu_ps(y + i, mask, e);
    acc0 = _mm512_add_ps(acc0, e);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

#endif

}  // namespace

float exp_shifted_sum(const float* x, float shift, float* y, int64_t n) {
#if MAXC_HAVE_AVX2
  if (cpu_has_avx512()) return exp_shifted_sum_avx512(x, shift, y, n);
  if (cpu_has_avx2()) return exp_shifted_sum_avx2(x, shift, y, n);
#endif
  return exp_shifted_sum_portable(x, shift, y, n);
}

void exp_shifted_accumulate(const float* x, const float* shift, float* sum, float* y, int64_t n) {
#if MAXC_HAVE_AVX2
  if (cpu_has_avx2()) return exp_shifted_accumulate_avx2(x, shift, sum, y, n);
#endif
  exp_shifted_accumulate_portable(x, shift, sum, y, n);
}

}  // namespace maxc::cpu

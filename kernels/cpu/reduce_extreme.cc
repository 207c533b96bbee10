// Row maximum and minimum of float32 (see reduce_extreme.h).
#include "kernels/cpu/reduce_extreme.h"

#include <cmath>
#include <limits>

#include "kernels/cpu/simd.h"

#if MAXC_HAVE_AVX2
#include <immintrin.h>
#endif

namespace maxc::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

template <bool kMax>
float extreme_portable(const float* x, int64_t n) {
  float r = kMax ? -kInf : kInf;
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    r = kMax ? (r > v ? r : v) : (r < v ? r : v);
    nan |= v != v;
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : r;
}

#if MAXC_HAVE_AVX2

template <bool kMax>
MAXC_TARGET_AVX2 inline __m256 pick(__m256 a, __m256 b) {
  return kMax ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b);
}

// A NaN makes an accumulator NaN for one step at most (max_ps returns its second operand
// then), so NaN is tracked in its own mask and decides the result at the end.
template <bool kMax>
MAXC_TARGET_AVX2 float extreme_avx2(const float* x, int64_t n) {
  const __m256 identity = _mm256_set1_ps(kMax ? -kInf : kInf);
  __m256 a0 = identity, a1 = identity, a2 = identity, a3 = identity;
  __m256 nan = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
    a0 = pick<kMax>(a0, v0);
    a1 = pick<kMax>(a1, v1);
    a2 = pick<kMax>(a2, v2);
    a3 = pick<kMax>(a3, v3);
    nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(v0, v1, _CMP_UNORD_Q), _mm256_cmp_ps(v2, v3, _CMP_UNORD_Q)));
  }
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (; i < n; i += 8) {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(n - i)), lanes);
    const __m256 v = _mm256_blendv_ps(identity, _mm256_maskload_ps(x + i, mask), _mm256_castsi256_ps(mask));
    a0 = pick<kMax>(a0, v);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  __m256 a = pick<kMax>(pick<kMax>(a0, a1), pick<kMax>(a2, a3));
  a = pick<kMax>(a, _mm256_permute2f128_ps(a, a, 1));
  a = pick<kMax>(a, _mm256_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
  a = pick<kMax>(a, _mm256_shuffle_ps(a, a, _MM_SHUFFLE(2, 3, 0, 1)));
  if (_mm256_movemask_ps(nan)) return std::numeric_limits<float>::quiet_NaN();
  return _mm256_cvtss_f32(a);
}

#endif

template <bool kMax>
float extreme(const float* x, int64_t n) {
#if MAXC_HAVE_AVX2
  if (cpu_has_avx2()) return extreme_avx2<kMax>(x, n);
#endif
  return extreme_portable<kMax>(x, n);
}

}  // namespace

float max_of_row(const float* x, int64_t n) { return extreme<true>(x, n); }
float min_of_row(const float* x, int64_t n) { return extreme<false>(x, n); }

}  // namespace maxc::cpu

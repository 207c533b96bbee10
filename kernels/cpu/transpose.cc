#include "kernels/cpu/transpose.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/simd.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace maxc::cpu {
namespace {

// The plane goes in strips of source rows, each strip as tall as one cache line of the
// destination (64 / sizeof(T) elements): walking a strip along `a`, every source line is read
// once and stays in L1 for the blocks that need it, and every destination line is written
// whole at once. Tiling the other way (square tiles walked column by column) keeps 32 rows a
// power-of-two stride apart in flight, which thrashes one cache set on 1024-wide planes.
template <typename T>
constexpr int64_t kStrip = 64 / sizeof(T);

template <typename T>
void edge_scalar(const T* src, int64_t src_ld, T* dst, int64_t dst_ld, int64_t a0, int64_t a1, int64_t b0,
                 int64_t b1) {
  for (int64_t a = a0; a < a1; ++a) {
    T* out = dst + a * dst_ld;
    for (int64_t b = b0; b < b1; ++b) out[b] = src[b * src_ld + a];
  }
}

// Runs Block (a B x B block transposer) over the full blocks of each full strip, and scalar
// code over what is left at the edges.
template <typename T, int64_t B, typename Block>
void plane_blocked(const T* src, int64_t src_ld, T* dst, int64_t dst_ld, int64_t na, int64_t nb, Block&& block) {
  constexpr int64_t H = std::max(kStrip<T>, B);
  const int64_t nb_full = nb / H * H, na_full = na / B * B;
  for (int64_t b0 = 0; b0 < nb_full; b0 += H) {
    for (int64_t a = 0; a < na_full; a += B)
      for (int64_t b = b0; b < b0 + H; b += B) block(src + b * src_ld + a, src_ld, dst + a * dst_ld + b, dst_ld);
    edge_scalar(src, src_ld, dst, dst_ld, na_full, na, b0, b0 + H);
  }
  edge_scalar(src, src_ld, dst, dst_ld, 0, na, nb_full, nb);
}

template <typename T>
void block_scalar(const T* src, int64_t src_ld, T* dst, int64_t dst_ld) {
  for (int64_t a = 0; a < 8; ++a)
    for (int64_t b = 0; b < 8; ++b) dst[a * dst_ld + b] = src[b * src_ld + a];
}

#if defined(__x86_64__)
// 8x8 16-bit words in SSE2 (baseline x86-64): three rounds of interleaving.
inline void block8x8_16(const uint16_t* src, int64_t src_ld, uint16_t* dst, int64_t dst_ld) {
  __m128i r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_ld));
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h) {
    const int o = 4 * h;
    u[o + 0] = _mm_unpacklo_epi32(t[o + 0], t[o + 2]);
    u[o + 1] = _mm_unpackhi_epi32(t[o + 0], t[o + 2]);
    u[o + 2] = _mm_unpacklo_epi32(t[o + 1], t[o + 3]);
    u[o + 3] = _mm_unpackhi_epi32(t[o + 1], t[o + 3]);
  }
  for (int i = 0; i < 4; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * i) * dst_ld), _mm_unpacklo_epi64(u[i], u[i + 4]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * i + 1) * dst_ld), _mm_unpackhi_epi64(u[i], u[i + 4]));
  }
}
#endif

#if MAXC_HAVE_AVX2
// 8x8 32-bit words through registers: 8 row loads, 24 shuffles, 8 row stores. Shuffles move
// bits without interpreting them, so any 4-byte dtype goes through.
MAXC_TARGET_AVX2 inline void block8x8_32(const uint32_t* src, int64_t src_ld, uint32_t* dst, int64_t dst_ld) {
  __m256 r[8], t[8], s[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + i * src_ld));
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h) {  // rows 0-3, then rows 4-7
    const int o = 4 * h;
    s[o + 0] = _mm256_shuffle_ps(t[o + 0], t[o + 2], _MM_SHUFFLE(1, 0, 1, 0));
    s[o + 1] = _mm256_shuffle_ps(t[o + 0], t[o + 2], _MM_SHUFFLE(3, 2, 3, 2));
    s[o + 2] = _mm256_shuffle_ps(t[o + 1], t[o + 3], _MM_SHUFFLE(1, 0, 1, 0));
    s[o + 3] = _mm256_shuffle_ps(t[o + 1], t[o + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + i * dst_ld), _mm256_permute2f128_ps(s[i], s[i + 4], 0x20));
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + (i + 4) * dst_ld), _mm256_permute2f128_ps(s[i], s[i + 4], 0x31));
  }
}

// 4x4 64-bit words.
MAXC_TARGET_AVX2 inline void block4x4_64(const uint64_t* src, int64_t src_ld, uint64_t* dst, int64_t dst_ld) {
  __m256d r[4];
  for (int i = 0; i < 4; ++i) r[i] = _mm256_loadu_pd(reinterpret_cast<const double*>(src + i * src_ld));
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + 0 * dst_ld), _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + 1 * dst_ld), _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + 2 * dst_ld), _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + 3 * dst_ld), _mm256_permute2f128_pd(t1, t3, 0x31));
}

MAXC_TARGET_AVX2 void plane_avx2_32(const uint32_t* src, int64_t src_ld, uint32_t* dst, int64_t dst_ld, int64_t na,
                                    int64_t nb) {
  plane_blocked<uint32_t, 8>(src, src_ld, dst, dst_ld, na, nb, block8x8_32);
}

MAXC_TARGET_AVX2 void plane_avx2_64(const uint64_t* src, int64_t src_ld, uint64_t* dst, int64_t dst_ld, int64_t na,
                                    int64_t nb) {
  plane_blocked<uint64_t, 4>(src, src_ld, dst, dst_ld, na, nb, block4x4_64);
}
#endif

template <typename T>
void plane_portable(const T* src, int64_t src_ld, T* dst, int64_t dst_ld, int64_t na, int64_t nb) {
  plane_blocked<T, 8>(src, src_ld, dst, dst_ld, na, nb, block_scalar<T>);
}

}  // namespace

void transpose_plane(const void* src, int64_t src_ld, void* dst, int64_t dst_ld, int64_t na, int64_t nb,
                     int32_t elem_bytes) {
  switch (elem_bytes) {
    case 1:
      return plane_portable(static_cast<const uint8_t*>(src), src_ld, static_cast<uint8_t*>(dst), dst_ld, na, nb);
    case 2:
#if defined(__x86_64__)
      return plane_blocked<uint16_t, 8>(static_cast<const uint16_t*>(src), src_ld, static_cast<uint16_t*>(dst), dst_ld,
                                        na, nb, block8x8_16);
#else
      return plane_portable(static_cast<const uint16_t*>(src), src_ld, static_cast<uint16_t*>(dst), dst_ld, na, nb);
#endif
    case 4:
#if MAXC_HAVE_AVX2
      if (cpu_has_avx2())
        return plane_avx2_32(static_cast<const uint32_t*>(src), src_ld, static_cast<uint32_t*>(dst), dst_ld, na, nb);
#endif
      return plane_portable(static_cast<const uint32_t*>(src), src_ld, static_cast<uint32_t*>(dst), dst_ld, na, nb);
    case 8:
#if MAXC_HAVE_AVX2
      if (cpu_has_avx2())
        return plane_avx2_64(static_cast<const uint64_t*>(src), src_ld, static_cast<uint64_t*>(dst), dst_ld, na, nb);
#endif
      return plane_portable(static_cast<const uint64_t*>(src), src_ld, static_cast<uint64_t*>(dst), dst_ld, na, nb);
    default:
      return;  // plan_strided_copy accepts only the widths above
  }
}

}  // namespace maxc::cpu

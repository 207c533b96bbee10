// The AVX2 dot products. Weight levels are unsigned (0..63), activations signed int8, which is
// exactly what _mm256_maddubs_epi16 multiplies: 32 products summed in pairs to int16, which
// never saturate (63 * 127 * 2 < 32767). _mm256_madd_epi16 then widens to int32 and applies
// the sub-block scale in the same instruction. Offsets (Q4_0's 8, Q6_K's 32, the K-quant
// mins) come out of the activations' precomputed sums instead of the inner loop.
#include "kernels/cpu/quant_dot.h"

#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd.h"

#if MAXC_HAVE_AVX2
#include <immintrin.h>

#include <cstring>
#endif

namespace maxc::cpu {

#if MAXC_HAVE_AVX2
namespace {

// F16C's conversion: the hot loops read one or two halves per block.
MAXC_TARGET_AVX2 inline float half_value(const F16Bytes& h) {
  uint16_t bits;
  std::memcpy(&bits, h.bytes, 2);
  return _cvtsh_ss(bits);
}

MAXC_TARGET_AVX2 inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

MAXC_TARGET_AVX2 inline float hsum(__m128 v) {
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));
  return _mm_cvtss_f32(_mm_add_ss(v, _mm_movehdup_ps(v)));
}

MAXC_TARGET_AVX2 inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Eight int32 lanes of Σ u * s over 32 unsigned-by-signed byte products, each pair of
// products weighted by the int16 in `scale`.
MAXC_TARGET_AVX2 inline __m256i dot_bytes(__m256i u, __m256i s, __m256i scale) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), scale);
}

// Q4_0 and Q8_0 blocks are small (18 and 34 bytes), so the per-block scaling is a good part
// of the work: two blocks per step, on two accumulators, keep the FMA latency hidden.
template <typename Block, typename IntDot>
MAXC_TARGET_AVX2 inline float dot_blocks_32(int64_t blocks, const uint8_t* wp, const void* xp, IntDot&& int_dot) {
  const auto* w = reinterpret_cast<const Block*>(wp);
  const auto* x = static_cast<const ActQ8_32*>(xp);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(int_dot(w[b], x[b])), _mm256_set1_ps(half_value(w[b].d) * x[b].d), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(int_dot(w[b + 1], x[b + 1])),
                           _mm256_set1_ps(half_value(w[b + 1].d) * x[b + 1].d), acc1);
  }
  if (b < blocks)
    acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(int_dot(w[b], x[b])), _mm256_set1_ps(half_value(w[b].d) * x[b].d), acc0);
  return hsum(_mm256_add_ps(acc0, acc1));
}

// Signed by signed: w's sign moves onto x, so that maddubs sees |w| unsigned.
MAXC_TARGET_AVX2 inline __m256i int_dot_q8_0(const BlockQ8_0& w, const ActQ8_32& x) {
  const __m256i wq = load32(w.qs), xq = load32(x.qs);
  return dot_bytes(_mm256_sign_epi8(wq, wq), _mm256_sign_epi8(xq, wq), _mm256_set1_epi16(1));
}

// Σ (q - 8) x = Σ q x - 8 Σ x: the correction goes into lane 0 of the integer sums.
MAXC_TARGET_AVX2 inline __m256i int_dot_q4_0(const BlockQ4_0& w, const ActQ8_32& x) {
  const __m128i low4 = _mm_set1_epi8(15);
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs));
  const __m256i q = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4), _mm_and_si128(bytes, low4));
  const __m256i sum = dot_bytes(q, load32(x.qs), _mm256_set1_epi16(1));
  return _mm256_sub_epi32(sum, _mm256_zextsi128_si256(_mm_cvtsi32_si128(8 * x.sum)));
}

MAXC_TARGET_AVX2 float dot_q8_0(int64_t blocks, const uint8_t* w, const void* x) {
  return dot_blocks_32<BlockQ8_0>(blocks, w, x, int_dot_q8_0);
}

MAXC_TARGET_AVX2 float dot_q4_0(int64_t blocks, const uint8_t* w, const void* x) {
  return dot_blocks_32<BlockQ4_0>(blocks, w, x, int_dot_q4_0);
}

// Lane pair `j` (bytes 2j, 2j + 1) of each 128-bit half, repeated: with _mm256_shuffle_epi8,
// broadcasts int16 lane j of each half.
MAXC_TARGET_AVX2 inline __m256i lane16(int j) {
  return _mm256_set1_epi16(static_cast<short>(2 * j | (2 * j + 1) << 8));
}

// Q4_K and Q5_K: four 32-byte chunks, low nibbles one sub-block and high nibbles the next;
// Q5_K ORs in a fifth bit taken from qh, two sub-blocks' worth of bits per chunk. The 6-bit
// scales become int16 lanes once per block and are broadcast per sub-block by shuffles; the
// mins meet the activations' sums (16-element, added in pairs) in one madd.
template <bool kFifthBit, typename Block>
MAXC_TARGET_AVX2 float dot_k_affine(int64_t blocks, const uint8_t* wp, const void* xp) {
  const auto* w = reinterpret_cast<const Block*>(wp);
  const auto* x = static_cast<const ActQ8_256*>(xp);
  const __m256i low4 = _mm256_set1_epi8(15), bit0 = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  __m128 mins = _mm_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    uint32_t words[4];
    k_scale_words(w[b].scales, words);
    const __m256i sm = _mm256_cvtepu8_epi16(_mm_setr_epi32(static_cast<int>(words[0]), static_cast<int>(words[1]),
                                                           static_cast<int>(words[2]), static_cast<int>(words[3])));
    const __m256i sc = _mm256_permute2x128_si256(sm, sm, 0x00);  // the scales in both halves
    const __m128i pairs = _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].sums)),
                                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].sums + 8)));
    const float dx = x[b].d;
    mins = _mm_fmadd_ps(_mm_cvtepi32_ps(_mm_madd_epi16(_mm256_extracti128_si256(sm, 1), pairs)),
                        _mm_set1_ps(half_value(w[b].dmin) * dx), mins);
    __m256i high = _mm256_setzero_si256();
    if constexpr (kFifthBit) high = load32(w[b].qh);
    __m256i sum = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m256i q = load32(w[b].qs + 32 * c);
      __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      if constexpr (kFifthBit) {
        lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(high, bit0), 4));
        hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 1), bit0), 4));
        high = _mm256_srli_epi16(high, 2);
      }
      const int8_t* xq = x[b].qs + 64 * c;
      sum = _mm256_add_epi32(sum, dot_bytes(lo, load32(xq), _mm256_shuffle_epi8(sc, lane16(2 * c))));
      sum = _mm256_add_epi32(sum, dot_bytes(hi, load32(xq + 32), _mm256_shuffle_epi8(sc, lane16(2 * c + 1))));
    }
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(half_value(w[b].d) * dx), acc);
  }
  return hsum(acc) - hsum(mins);
}

// Q6_K: per half of 128, ql gives the low four bits of four 32-element runs (two in low
// nibbles, two in high) and each qh byte the top two bits of all four. Each run spans two
// groups of 16, so its scale vector holds one group's int8 scale in each 128-bit half. The
// -32 offset comes out of the integer sum: 32 Σ_g sc_g Σ x, in one madd with the sums.
MAXC_TARGET_AVX2 float dot_q6_k(int64_t blocks, const uint8_t* wp, const void* xp) {
  const auto* w = reinterpret_cast<const BlockQ6_K*>(wp);
  const auto* x = static_cast<const ActQ8_256*>(xp);
  const __m256i low4 = _mm256_set1_epi8(15), bits23 = _mm256_set1_epi8(3 << 2), bits45 = _mm256_set1_epi8(3 << 4);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const __m256i sc = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales)));
    const __m256i offset = _mm256_madd_epi16(sc, load32(x[b].sums));
    __m256i sum = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 5));
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i ql0 = load32(w[b].ql + 64 * h), ql1 = load32(w[b].ql + 64 * h + 32);
      const __m256i qh = load32(w[b].qh + 32 * h);
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45)),
          _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_slli_epi16(_mm256_and_si256(qh, bits23), 2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_and_si256(qh, bits45)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                          _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45))};
      // This half's eight scales in both 128-bit halves; run i takes lanes 2i (low) and 2i + 1.
      // Two literal immediates: an unoptimized build (the sanitizer one) folds no ternary into one.
      const __m256i half_sc = h == 0 ? _mm256_permute2x128_si256(sc, sc, 0x00) : _mm256_permute2x128_si256(sc, sc, 0x11);
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {
        const __m256i pick =
            _mm256_setr_m128i(_mm256_castsi256_si128(lane16(2 * i)), _mm256_castsi256_si128(lane16(2 * i + 1)));
        const __m256i scale = _mm256_shuffle_epi8(half_sc, pick);
        sum = _mm256_add_epi32(sum, dot_bytes(q[i], load32(x[b].qs + 128 * h + 32 * i), scale));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(half_value(w[b].d) * x[b].d), acc);
  }
  return hsum(acc);
}

}  // namespace

QuantDotFn quant_dot_avx2(QuantEncoding e) {
  switch (e) {
    case QuantEncoding::kQ4_0: return dot_q4_0;
    case QuantEncoding::kQ8_0: return dot_q8_0;
    case QuantEncoding::kQ4_K: return dot_k_affine<false, BlockQ4_K>;
    case QuantEncoding::kQ5_K: return dot_k_affine<true, BlockQ5_K>;
    case QuantEncoding::kQ6_K: return dot_q6_k;
    case QuantEncoding::kNone: break;
  }
  return nullptr;
}
#else
QuantDotFn quant_dot_avx2(QuantEncoding) { return nullptr; }
#endif

}  // namespace maxc::cpu

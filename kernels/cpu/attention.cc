#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/gemm_small.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/softmax_exp.h"
#include "kernels/cpu/transpose.h"
#include "kernels/cpu/vec8.h"

#if MAXC_HAVE_AVX2
#include <immintrin.h>
#endif

namespace maxc::cpu {
namespace {

// Query rows per item: their scores ([rows, Lk] floats) stay in L1/L2 between the two
// products.
constexpr int64_t kBlockRows = 32;

// Adds the mask row (contiguous, when there is one) and returns the row's largest score,
// NaNs aside as std::max(peak, score) leaves them, in one pass. In vectors: GCC may not
// reorder a float max chain without -ffast-math, and kept scalar it cost 4 cycles a score,
// 60% of MiniLM's attention.
template <typename V>
[[gnu::always_inline]] inline float add_mask_max_in(float* row, const float* mask, int64_t n) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(float);
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  V m0 = V{} + kLowest, m1 = m0;
  int64_t j = 0;
  for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
    V a = load_vec<V>(row + j), b = load_vec<V>(row + j + kLanes);
    if (mask) {
      a += load_vec<V>(mask + j);
      b += load_vec<V>(mask + j + kLanes);
      store_vec(row + j, a);
      store_vec(row + j + kLanes, b);
    }
    m0 = a > m0 ? a : m0;
    m1 = b > m1 ? b : m1;
  }
  float peak = kLowest;
  for (int64_t l = 0; l < kLanes; ++l) peak = std::max({peak, m0[l], m1[l]});
  for (; j < n; ++j) {
    if (mask) row[j] += mask[j];
    peak = std::max(peak, row[j]);
  }
  return peak;
}

#if MAXC_HAVE_AVX2
__attribute__((target("avx512f"))) float add_mask_max_avx512(float* row, const float* mask, int64_t n) {
  return add_mask_max_in<V16>(row, mask, n);
}
MAXC_TARGET_AVX2 float add_mask_max_avx2(float* row, const float* mask, int64_t n) {
  return add_mask_max_in<V8>(row, mask, n);
}
#endif

// The same, for a mask read `stride` floats apart.
float add_mask_max(float* row, const float* mask, int64_t stride, int64_t n) {
  if (mask && stride != 1) {
    for (int64_t j = 0; j < n; ++j) row[j] += mask[j * stride];
    mask = nullptr;
  }
#if MAXC_HAVE_AVX2
  if (cpu_has_avx512()) return add_mask_max_avx512(row, mask, n);
  if (cpu_has_avx2()) return add_mask_max_avx2(row, mask, n);
#endif
  return add_mask_max_in<V8>(row, mask, n);
}

// A contiguous bool mask: row[j] stays where mask[j] is true and becomes `fill` where false,
// as where(mask, scores, fill) reads. In intrinsics: a byte at a time it cost a third of
// GPT-2's attention, and GCC's generic vectors widen the bytes one lane at a time.
#if MAXC_HAVE_AVX2
__attribute__((target("avx512f,avx512bw,avx512vl"))) void select_by_mask_avx512(float* row, const uint8_t* mask,
                                                                                float fill, int64_t n) {
  const __m512 filled = _mm512_set1_ps(fill);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mask + j));
    const __mmask16 keep = _mm_test_epi8_mask(bytes, bytes);
    _mm512_storeu_ps(row + j, _mm512_mask_blend_ps(keep, filled, _mm512_loadu_ps(row + j)));
  }
  for (; j < n; ++j) row[j] = mask[j] ? row[j] : fill;
}

MAXC_TARGET_AVX2 void select_by_mask_avx2(float* row, const uint8_t* mask, float fill, int64_t n) {
  const __m256 filled = _mm256_set1_ps(fill);
  const __m256i zero = _mm256_setzero_si256();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256i wide = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(mask + j)));
    const __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(wide, zero));
    _mm256_storeu_ps(row + j, _mm256_blendv_ps(filled, _mm256_loadu_ps(row + j), keep));
  }
  for (; j < n; ++j) row[j] = mask[j] ? row[j] : fill;
}
#endif

// The same, for a mask read `stride` bytes apart.
void select_by_mask(float* row, const uint8_t* mask, int64_t stride, float fill, int64_t n) {
#if MAXC_HAVE_AVX2
  if (stride == 1 && cpu_has_avx512()) return select_by_mask_avx512(row, mask, fill, n);
  if (stride == 1 && cpu_has_avx2()) return select_by_mask_avx2(row, mask, fill, n);
#endif
  for (int64_t j = 0; j < n; ++j) row[j] = mask[j * stride] ? row[j] : fill;
}

MAXC_SIMD_CLONES void scale_row(float* row, float factor, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) row[j] *= factor;
}

// kᵀ of one batch: [Lk, D] rows `ld` apart -> dense [D, Lk], in register-transposed blocks.
void transpose(const float* k, int64_t rows, int64_t cols, int64_t ld, float* kt) {
  transpose_plane(k, ld, kt, rows, cols, rows, sizeof(float));
}

// Row-major [batch_dims..., rows, cols] when `strides` is empty: the strides along
// batch_dims, then rows.
void default_to_dense(std::vector<int64_t>& strides, const std::vector<int64_t>& batch_dims, int64_t rows,
                      int64_t cols) {
  if (!strides.empty()) return;
  std::vector<int64_t> dims = batch_dims;
  dims.push_back(rows);
  dims.push_back(cols);
  strides = dense_strides(dims);
  strides.pop_back();
}

}  // namespace

int64_t AttentionShape::batch() const {
  int64_t b = 1;
  for (int64_t d : batch_dims) b *= d;
  return b;
}

Attention::Attention(const AttentionShape& s, float scale, int64_t threads)
    : s_(s), scale_(scale), slots_(std::max<int64_t>(threads, 1)) {
  default_to_dense(s_.q_strides, s.batch_dims, s.q_len, s.head_dim);
  default_to_dense(s_.k_strides, s.batch_dims, s.k_transposed ? s.head_dim : s.kv_len,
                   s.k_transposed ? s.kv_len : s.head_dim);
  default_to_dense(s_.v_strides, s.batch_dims, s.kv_len, s.v_dim);
  default_to_dense(s_.out_strides, s.batch_dims, s.q_len, s.v_dim);
  block_rows_ = std::min(kBlockRows, std::max<int64_t>(s.q_len, 1));
  // Scores of one block, one reciprocal per row, and kᵀ when k is not given transposed.
  slot_floats_ = block_rows_ * s.kv_len + block_rows_ + (s.k_transposed ? 0 : s.head_dim * s.kv_len);
  slot_floats_ = (slot_floats_ + 15) / 16 * 16;  // keeps each slot 64-byte aligned
}

uint64_t Attention::scratch_bytes() const { return sizeof(float) * static_cast<uint64_t>(slots_ * slot_floats_); }

int64_t Attention::offset(int64_t batch, const std::vector<int64_t>& strides) const {
  int64_t offset = 0;
  for (size_t i = s_.batch_dims.size(); i-- > 0;) {
    offset += batch % s_.batch_dims[i] * strides[i];
    batch /= s_.batch_dims[i];
  }
  return offset;
}

void Attention::run(const float* q, const float* k, const float* v, const void* mask, float* out,
                    void* scratch) const {
  const int64_t row_blocks = (s_.q_len + block_rows_ - 1) / block_rows_;
  const int64_t items = s_.batch() * row_blocks;
  if (items == 0 || s_.v_dim == 0) return;
  const int64_t slots = std::min(slots_, items);
  const int64_t item_cost = block_rows_ * s_.kv_len * (s_.head_dim + s_.v_dim) * 2;
  parallel_for(slots, item_cost * (items / slots), [&](int64_t begin, int64_t end) {
    for (int64_t slot = begin; slot < end; ++slot)
      run_items(items * slot / slots, items * (slot + 1) / slots, q, k, v, mask, out,
                static_cast<float*>(scratch) + slot * slot_floats_);
  });
}

float Attention::mask_row_max(float* row, const void* mask, int64_t at, int64_t n) const {
  if (!s_.has_mask) return add_mask_max(row, nullptr, 0, n);
  const int64_t stride = s_.mask_strides.back();
  if (!s_.mask_selects) return add_mask_max(row, static_cast<const float*>(mask) + at, stride, n);
  select_by_mask(row, static_cast<const uint8_t*>(mask) + at, stride, s_.mask_fill, n);
  return add_mask_max(row, nullptr, 0, n);
}

void Attention::run_items(int64_t first, int64_t last, const float* q, const float* k, const float* v,
                          const void* mask, float* out, float* scratch) const {
  const int64_t lq = s_.q_len, lk = s_.kv_len, d = s_.head_dim, dv = s_.v_dim;
  const size_t rank = s_.batch_dims.size();
  const int64_t q_ld = s_.q_strides[rank], k_ld = s_.k_strides[rank], v_ld = s_.v_strides[rank],
                out_ld = s_.out_strides[rank];
  const int64_t row_blocks = (lq + block_rows_ - 1) / block_rows_;
  float* scores = scratch;
  float* inverse = scores + block_rows_ * lk;
  float* kt_copy = inverse + block_rows_;
  int64_t transposed_batch = -1;
  for (int64_t item = first; item < last; ++item) {
    const int64_t b = item / row_blocks, i0 = item % row_blocks * block_rows_;
    const int64_t rows = std::min(block_rows_, lq - i0);
    const float* kb = k + offset(b, s_.k_strides);
    const float* kt = kb;
    int64_t kt_ld = k_ld;
    if (!s_.k_transposed) {
      if (transposed_batch != b) transpose(kb, lk, d, k_ld, kt_copy), transposed_batch = b;
      kt = kt_copy, kt_ld = lk;
    }
    gemm_small_f32(rows, lk, d, scale_, q + offset(b, s_.q_strides) + i0 * q_ld, q_ld, kt, kt_ld, false, scores, lk);
    // Elements into the mask: float32, or bytes for a bool mask.
    const int64_t mask_at = s_.has_mask ? offset(b, s_.mask_strides) : 0;
    for (int64_t r = 0; r < rows; ++r) {
      float* row = scores + r * lk;
      const float peak = mask_row_max(row, mask, mask_at + (i0 + r) * (s_.has_mask ? s_.mask_strides[rank] : 0), lk);
      // A row masked out entirely has no distribution: NaN, like softmax's 0 / 0. No keys at
      // all is an empty sum: zeros.
      if (lk == 0) inverse[r] = 1.f;
      else if (peak == -std::numeric_limits<float>::infinity()) inverse[r] = std::numeric_limits<float>::quiet_NaN();
      else inverse[r] = 1.f / exp_shifted_sum(row, peak, row, lk);
    }
    float* out_block = out + offset(b, s_.out_strides) + i0 * out_ld;
    gemm_small_f32(rows, dv, lk, 1.f, scores, lk, v + offset(b, s_.v_strides), v_ld, false, out_block, out_ld);
    for (int64_t r = 0; r < rows; ++r) scale_row(out_block + r * out_ld, inverse[r], dv);
  }
}

}  // namespace maxc::cpu

// Scaled dot-product attention, the fused "attention" node (compiler/fuse_attention.cc):
//   out = softmax(scale * q @ kᵀ + mask, over the keys) @ v
// with the CPU kernel's rules (kernels/cpu/attention.cc): a row whose scores are all -inf
// (masked out entirely) has no distribution and gives NaNs; no keys at all give zeros.
//
// One block per (batch, query row), grid-stride over them. The row's Lk scores live in
// `scores`, global scratch of Lk floats per block of the grid (any Lk fits, where shared
// memory would cap it): threads take keys for the dot products, the block reduces the
// peak and the sum, then threads take output columns, so the reads of v are coalesced.
// Computed in float (double for float64), whatever q, k, v and the mask store. Each operand
// is read (and out written) through its strides in AttentionParams, so q, k, v and out may
// be the heads of [B, S, H, D] tensors in place (the node's layout "bshd").
#include "common/attention_params.cuh"
#include "common/block_reduce.cuh"
#include "common/cast.cuh"
#include "common/math.cuh"

namespace maxc {
namespace gpu {

// The larger score; a NaN score does not become the peak (the CPU's std::max), it makes the
// row's sum NaN instead.
struct ScorePeak {
  template <class T>
  MAXC_HD T operator()(T a, T b) const {
    return b > a ? b : a;
  }
};

struct ScoreSum {
  template <class T>
  MAXC_HD T operator()(T a, T b) const {
    return a + b;
  }
};

// scale * q_row . k_j, masked (mask_j added, or selecting), for the keys this thread takes,
// into row; returns their peak.
template <class S, class M, class C>
__device__ C attention_scores(const S* __restrict__ q_row, const S* __restrict__ k_batch, const M* mask_row,
                              C* row, const AttentionParams& p) {
  C peak = -math::infinity<C>();
  for (i64 j = threadIdx.x; j < p.kv_len; j += blockDim.x) {
    C dot = C(0);
    if (p.k_transposed) {
      for (i64 t = 0; t < p.head_dim; ++t) dot += load_as<C>(q_row[t]) * load_as<C>(k_batch[t * p.k_row_stride + j]);
    } else {
      const S* k_row = k_batch + j * p.k_row_stride;
      for (i64 t = 0; t < p.head_dim; ++t) dot += load_as<C>(q_row[t]) * load_as<C>(k_row[t]);
    }
    C s = static_cast<C>(p.scale) * dot;
    if (mask_row) {
      const C m = load_as<C>(mask_row[j * p.mask_col_stride]);
      s = p.mask_selects ? (m != C(0) ? s : static_cast<C>(p.mask_fill)) : s + m;
    }
    row[j] = s;
    peak = ScorePeak()(peak, s);
  }
  return block_reduce(peak, ScorePeak(), -math::infinity<C>());
}

// Replaces the thread's scores by exp(score - peak); returns the block's sum of them.
template <class C>
__device__ C attention_exp_sum(C* row, C peak, i64 kv_len) {
  C sum = C(0);
  for (i64 j = threadIdx.x; j < kv_len; j += blockDim.x) {
    const C e = math::exp(row[j] - peak);
    row[j] = e;
    sum += e;
  }
  return block_reduce(sum, ScoreSum(), C(0));
}

template <class S, class M>
__global__ void attention_rows(const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
                               const M* __restrict__ mask, S* __restrict__ out, float* __restrict__ scores,
                               AttentionParams p) {
  typedef typename ComputeOf<S>::type C;
  C* row = reinterpret_cast<C*>(scores) + static_cast<i64>(blockIdx.x) * p.kv_len;
  const i64 items = p.batch * p.q_len;
  for (i64 item = blockIdx.x; item < items; item += gridDim.x) {
    const i64 b = item / p.q_len, i = item - b * p.q_len;
    const M* mask_row = nullptr;
    if (mask) mask_row = mask + offset_of(b, p.batch_shape, p.mask_layout) + i * p.mask_row_stride;
    const S* q_row = q + offset_of(b, p.batch_shape, p.q_layout) + i * p.q_row_stride;
    const C peak = attention_scores(q_row, k + offset_of(b, p.batch_shape, p.k_layout), mask_row, row, p);
    const C sum = attention_exp_sum(row, peak, p.kv_len);
    C inverse = C(1) / sum;
    if (p.kv_len == 0) inverse = C(1);  // an empty sum: zeros
    else if (peak == -math::infinity<C>()) inverse = math::infinity<C>() - math::infinity<C>();  // NaN
    __syncthreads();  // every thread's exp(scores) is in row before any thread reads them all
    const S* vb = v + offset_of(b, p.batch_shape, p.v_layout);
    S* out_row = out + offset_of(b, p.batch_shape, p.out_layout) + i * p.out_row_stride;
    for (i64 c = threadIdx.x; c < p.v_dim; c += blockDim.x) {
      C acc = C(0);
      for (i64 j = 0; j < p.kv_len; ++j) acc += row[j] * load_as<C>(vb[j * p.v_row_stride + c]);
      out_row[c] = store_as<S>(acc * inverse);
    }
    __syncthreads();  // the next item overwrites row
  }
}

}  // namespace gpu
}  // namespace maxc

// Scaled dot-product attention (the "attention" node of compiler/fuse_attention.cc):
//   out = softmax(scale * q @ kᵀ + mask, over the keys) @ v
// for float32 q [..., Lq, D], k [..., Lk, D] (or kᵀ [..., D, Lk]), v [..., Lk, Dv] sharing
// their batch dims, and a mask broadcast to [..., Lq, Lk]: float32 and added, or bool and
// selecting, where(mask, scale * q @ kᵀ, fill) in place of the sum. Each thread takes whole
// (batch, block of query rows) items and keeps only that block's scores, [rows, Lk], in its
// slice of the scratch; the full score matrix is never built.
//
// q, k, v and out need not be dense: each has element strides along the batch dims and its
// rows, with its last dim contiguous. That lets the kernel read the heads of a [B, S, H, D]
// projection in place (batch dims [B, H], rows along S) and write its output the same way,
// where the graph permutes to [B, H, S, D] and back.
#pragma once

#include <cstdint>
#include <vector>

namespace maxc::cpu {

struct AttentionShape {
  std::vector<int64_t> batch_dims;  // of q, k, v and out alike
  int64_t q_len = 0, kv_len = 0, head_dim = 0, v_dim = 0;
  bool k_transposed = false;  // k holds kᵀ, [..., D, Lk]
  bool has_mask = false;
  // A float32 mask is added to the scores. A bool one selects (mask_selects): a score stays
  // where the mask is true and is mask_fill where it is false, as a decoder's
  // where(causal, scores, lowest) has it.
  bool mask_selects = false;
  float mask_fill = 0.f;
  // Element strides of the mask along batch_dims, then Lq and Lk; 0 where it broadcasts.
  std::vector<int64_t> mask_strides;
  // Element strides of each operand along batch_dims, then along its rows (Lq for q and out,
  // Lk for k and v, D for kᵀ); its last dim has stride 1. Empty: dense, [..., rows, cols].
  std::vector<int64_t> q_strides, k_strides, v_strides, out_strides;

  int64_t batch() const;
};

class Attention {
 public:
  // `threads`: the most threads a call may use (the session's team size).
  Attention(const AttentionShape& s, float scale, int64_t threads);

  uint64_t scratch_bytes() const;
  // `mask`: float32, or bool (one byte an element) when the shape's mask_selects.
  void run(const float* q, const float* k, const float* v, const void* mask, float* out, void* scratch) const;

 private:
  void run_items(int64_t first, int64_t last, const float* q, const float* k, const float* v, const void* mask,
                 float* out, float* scratch) const;
  // Applies the mask row starting `at` elements into `mask` to the n scores of `row`;
  // returns their largest.
  float mask_row_max(float* row, const void* mask, int64_t at, int64_t n) const;
  // The element offset of batch item `batch` (row-major over batch_dims) under `strides`.
  int64_t offset(int64_t batch, const std::vector<int64_t>& strides) const;

  AttentionShape s_;
  float scale_;
  int64_t slots_;
  int64_t block_rows_;
  int64_t slot_floats_;
};

}  // namespace maxc::cpu

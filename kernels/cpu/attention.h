// Scaled dot-product attention (the "attention" node of compiler/fuse_attention.cc):
//   out = softmax(scale * q @ kᵀ + mask, over the keys) @ v
// for float32 q [..., Lq, D], k [..., Lk, D] (or kᵀ [..., D, Lk]), v [..., Lk, Dv] sharing
// their batch dims, and a mask broadcast to [..., Lq, Lk]. Each thread takes whole
// (batch, block of query rows) items and keeps only that block's scores, [rows, Lk], in its
// slice of the scratch; the full score matrix is never built.
#pragma once

#include <cstdint>
#include <vector>

namespace maxc::cpu {

struct AttentionShape {
  std::vector<int64_t> batch_dims;  // of q, k, v and out alike
  int64_t q_len = 0, kv_len = 0, head_dim = 0, v_dim = 0;
  bool k_transposed = false;  // k holds kᵀ, [..., D, Lk]
  bool has_mask = false;
  // Element strides of the mask along batch_dims, then Lq and Lk; 0 where it broadcasts.
  std::vector<int64_t> mask_strides;

  int64_t batch() const;
};

class Attention {
 public:
  // `threads`: the most threads a call may use (the session's team size).
  Attention(const AttentionShape& s, float scale, int64_t threads);

  uint64_t scratch_bytes() const;
  void run(const float* q, const float* k, const float* v, const float* mask, float* out, void* scratch) const;

 private:
  void run_items(int64_t first, int64_t last, const float* q, const float* k, const float* v, const float* mask,
                 float* out, float* scratch) const;
  int64_t mask_offset(int64_t batch) const;

  AttentionShape s_;
  float scale_;
  int64_t slots_;
  int64_t block_rows_;
  int64_t slot_floats_;
};

}  // namespace maxc::cpu

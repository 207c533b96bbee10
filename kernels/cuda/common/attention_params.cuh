// The extents of one attention launch (kernels/cuda/attention.cu), passed by value as one
// kernel parameter. Host code fills this very struct (the header compiles on the host too),
// so its layout is the one the kernel reads.
#ifndef MAXC_GPU_ATTENTION_PARAMS_CUH
#define MAXC_GPU_ATTENTION_PARAMS_CUH

#include "indexing.cuh"

namespace maxc {
namespace gpu {

struct AttentionParams {
  i64 batch;     // the product of the batch dims of q, k, v and out
  i64 q_len;     // Lq
  i64 kv_len;    // Lk
  i64 head_dim;  // D
  i64 v_dim;     // Dv
  // Where each operand's elements are: batch_shape holds the batch dims (numel = batch), an
  // operand's Layout its element strides along them, its row stride the one along Lq (q, out,
  // mask), Lk (k, v) or D (kᵀ). The last dim of q, k, v and out is contiguous; the mask's
  // has mask_col_stride. The mask's strides are 0 where it broadcasts.
  Shape batch_shape;
  Layout q_layout, k_layout, v_layout, out_layout, mask_layout;
  i64 q_row_stride, k_row_stride, v_row_stride, out_row_stride, mask_row_stride;
  i64 mask_col_stride;
  float scale;
  i32 k_transposed;  // k holds kᵀ, [..., D, Lk]
  // A bool mask selects: a score stays where it is true and is mask_fill where it is false
  // (kernels/cpu/attention.h). Any other mask is added.
  i32 mask_selects;
  float mask_fill;
};

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_ATTENTION_PARAMS_CUH

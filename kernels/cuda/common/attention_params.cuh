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
  // Element strides of the mask along Lq and Lk (0 where it broadcasts), and along the batch
  // dims: mask_batch holds those dims (numel = batch), mask_layout their strides.
  i64 mask_row_stride;
  i64 mask_col_stride;
  Shape mask_batch;
  Layout mask_layout;
  float scale;
  i32 k_transposed;  // k holds kᵀ, [..., D, Lk]
};

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_ATTENTION_PARAMS_CUH

#include "engine/lower_gpu/lower_gpu.h"

#include "engine/lower/lower.h"

namespace maxc {

void register_gpu_kernels(KernelTable& t) {
  register_gpu_elementwise_kernels(t);
  register_gpu_normalization_kernels(t);
  register_gpu_reduction_kernels(t);
  register_gpu_linalg_kernels(t);
  register_gpu_indexing_kernels(t);
  register_gpu_layout_kernels(t);
  register_gpu_attention_kernels(t);
  register_gpu_scan_sort_kernels(t);
  register_gpu_conv_kernels(t);
  register_gpu_quantized_kernels(t);
  register_gpu_nonzero_kernels(t);
  register_alias_kernels(t);
  register_layout_kernels(t);
  register_control_flow_kernels(t);
}

}  // namespace maxc

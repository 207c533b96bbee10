#include "engine/lower/lower.h"

#include "engine/lowering.h"

namespace maxc {

void register_builtin_kernels(KernelTable& t) {
  register_elementwise_kernels(t);
  register_reduction_kernels(t);
  register_normalization_kernels(t);
  register_linalg_kernels(t);
  register_conv_kernels(t);
  register_alias_kernels(t);
  register_layout_kernels(t);
  register_shape_kernels(t);
  register_indexing_kernels(t);
  register_quantized_kernels(t);
  register_control_flow_kernels(t);
  register_nonzero_kernels(t);
  register_masked_scatter_kernels(t);
}

}  // namespace maxc

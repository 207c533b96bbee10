#include "graph/ops/ops.h"

#include "graph/op_registry.h"

namespace maxc {

void register_builtin_ops(OpRegistry& r) {
  register_unary_ops(r);
  register_binary_ops(r);
  register_comparison_ops(r);
  register_logical_ops(r);
  register_where_ops(r);
  register_cast_ops(r);
  register_clamp_ops(r);
  register_constant_ops(r);
  register_range_ops(r);
  register_reduction_ops(r);
  register_normalization_ops(r);
  register_linalg_ops(r);
  register_shape_ops(r);
  register_indexing_ops(r);
  register_conv_ops(r);
  register_quantized_ops(r);
  register_control_flow_ops(r);
  register_nonzero_ops(r);
  register_bitwise_ops(r);
  register_masked_scatter_ops(r);
}

}  // namespace maxc

// Registration of the built-in ops, one function per op family.
//
// To add a family:
//   1. Write src/graph/ops/<family>.cc defining `void register_<family>_ops(OpRegistry& r)`,
//      which calls r.add(OpSchema{...}) for each op (see unary.cc for the smallest example).
//   2. Declare the function below.
//   3. Call it from register_builtin_ops() in ops.cc.
// Nothing else: no static registrars (a static library drops them), no list elsewhere.
// Shared checks live in graph/ops/checks.h, broadcasting in graph/broadcast.h and dtype
// promotion in graph/promotion.h.
#pragma once

namespace maxc {

class OpRegistry;

// Every family below, in one place; OpRegistry::global() calls it once.
void register_builtin_ops(OpRegistry& r);

void register_unary_ops(OpRegistry& r);       // §5.1: abs ... gelu (20)
void register_binary_ops(OpRegistry& r);      // §5.2: add sub mul div mod pow max min
void register_comparison_ops(OpRegistry& r);  // §5.3: equal ... greater_equal, less, less_equal
void register_logical_ops(OpRegistry& r);     // §5.4: logical_and/or/xor/not, is_inf, is_nan
void register_where_ops(OpRegistry& r);       // §5.5: where
void register_cast_ops(OpRegistry& r);        // §5.12: cast
void register_clamp_ops(OpRegistry& r);       // clamp (max.nn.clamp)
void register_constant_ops(OpRegistry& r);    // §5.14: constant, constant_external
void register_range_ops(OpRegistry& r);       // §5.14: range
// §5.6: sum mean argmax argmin cumsum top_k argsort. The max/min reductions are `max`/`min`
// with one input (binary), as in MAX, so there is no reduce_max/reduce_min.
void register_reduction_ops(OpRegistry& r);
void register_normalization_ops(OpRegistry& r);  // §5.7: softmax logsoftmax layer_norm rms_norm
void register_linalg_ops(OpRegistry& r);         // §5.8: matmul outer band_part
void register_shape_ops(OpRegistry& r);          // §5.11: reshape ... shape_to_tensor (17)
void register_indexing_ops(OpRegistry& r);       // §5.13: slice_tensor gather gather_nd scatter scatter_nd
void register_conv_ops(OpRegistry& r);           // §5.10: conv2d max_pool2d avg_pool2d
void register_quantized_ops(OpRegistry& r);      // §5.9: dequantize qmatmul
void register_control_flow_ops(OpRegistry& r);   // §5.16: cond while_loop call
void register_nonzero_ops(OpRegistry& r);        // §5.14: nonzero
// Extras beyond MAX: bitwise_and/or/xor/not and bitcast (ONNX's bitwise operators).
void register_bitwise_ops(OpRegistry& r);
void register_masked_scatter_ops(OpRegistry& r); // §5.14: masked_scatter

}  // namespace maxc

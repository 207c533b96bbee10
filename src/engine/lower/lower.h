// Registration of the built-in CPU kernels, one function per family (see engine/lowering.h).
#pragma once

#include <cstdint>
#include <span>

#include "base/dtype.h"

namespace maxc {

class KernelTable;
struct Lowered;
struct LowerContext;

void register_builtin_kernels(KernelTable& t);

// reshape squeeze unsqueeze flatten as_interleaved_complex rebind bitcast: aliases, on every
// device.
void register_alias_kernels(KernelTable& t);
// Output 0 is input 0's bytes; INTERNAL unless their element counts and dtypes agree.
Lowered lower_alias(const LowerContext& ctx);
// permute transpose broadcast_to tile: strided copies (lower_strided_copy), on every device.
void register_layout_kernels(KernelTable& t);
// A copy of input 0 into output 0 whose element i (row-major over `dims`) is read at
// src_offset + sum(index_d * src_strides[d]) elements into the input; an alias when that is
// the identity. On the plan's device: the one kernel the layout lowerings need.
Lowered lower_strided_copy(const LowerContext& ctx, std::span<const int64_t> dims, std::span<const int64_t> src_strides,
                           int64_t src_offset);

// slice_tensor: one strided copy (lower_strided_copy), on every device.
Lowered lower_slice_tensor(const LowerContext& ctx);
// count_repeats (compiler/stages.h), on either device: its inputs are repeat_interleave's
// (x, repeats_tensor); d is the length of the repeated axis, num_counts 1 or d (checked:
// INVALID_ARGUMENT otherwise; UNIMPLEMENTED for counts that are not integers).
struct RepeatCounts {
  int64_t d = 0, num_counts = 0;
};
RepeatCounts repeat_counts(const LowerContext& ctx);

// pad's attribute 'value' as the raw bits of one element of `dtype` (numpy's cast of the
// value to the array's dtype; an integer takes the low bytes of its two's complement).
uint64_t pad_fill_pattern(const LowerContext& ctx, double value, DType dtype);

void register_elementwise_kernels(KernelTable& t);    // unary, binary, comparison, logical, where, clamp, cast, fused_elementwise
void register_reduction_kernels(KernelTable& t);      // sum mean max min argmax argmin cumsum top_k argsort
void register_normalization_kernels(KernelTable& t);  // softmax logsoftmax layer_norm rms_norm add_layer_norm
void register_linalg_kernels(KernelTable& t);         // matmul outer band_part fused_matmul attention
void register_conv_kernels(KernelTable& t);           // conv2d fused_conv2d max/avg_pool2d
void register_shape_kernels(KernelTable& t);          // reshape ... shape_to_tensor, constant-free shape ops
void register_indexing_kernels(KernelTable& t);       // slice_tensor gather gather_nd scatter scatter_nd, range
void register_quantized_kernels(KernelTable& t);      // dequantize qmatmul
void register_control_flow_kernels(KernelTable& t);   // cond while_loop, on every device
void register_nonzero_kernels(KernelTable& t);        // nonzero count_nonzero
void register_masked_scatter_kernels(KernelTable& t); // masked_scatter

}  // namespace maxc

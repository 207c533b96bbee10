// Registration of the CUDA kernels (kernels/cuda), one function per family, as the CPU's are
// in engine/lower/lower.h. A GPU lowering compiles what its node needs when the plan is built
// (through the process's kernel cache: each kernel compiles once per machine) and returns a
// closure that only packs arguments and launches on the call's stream.
#pragma once

#include <cstdint>
#include <span>

#include "base/dtype.h"

namespace maxc {

class KernelTable;
struct Lowered;
struct LowerContext;

void register_gpu_kernels(KernelTable& t);

void register_gpu_elementwise_kernels(KernelTable& t);    // every elementwise op, fused_elementwise
void register_gpu_normalization_kernels(KernelTable& t);  // softmax logsoftmax layer_norm rms_norm add_layer_norm
void register_gpu_reduction_kernels(KernelTable& t);      // sum mean
void register_gpu_linalg_kernels(KernelTable& t);         // matmul fused_matmul
void register_gpu_indexing_kernels(KernelTable& t);       // gather gather_nd scatter scatter_nd
// slice_tensor concat stack split chunk pad band_part range outer repeat_interleave shape_to_tensor
void register_gpu_layout_kernels(KernelTable& t);
void register_gpu_attention_kernels(KernelTable& t);      // attention (the fused node)
void register_gpu_scan_sort_kernels(KernelTable& t);      // argmax argmin cumsum top_k argsort
void register_gpu_conv_kernels(KernelTable& t);           // conv2d fused_conv2d max_pool2d avg_pool2d
void register_gpu_quantized_kernels(KernelTable& t);      // dequantize qmatmul
void register_gpu_nonzero_kernels(KernelTable& t);        // nonzero masked_scatter count_nonzero count_repeats

// The one-input max and min (reductions), which the elementwise family hands over.
Lowered lower_gpu_reduce_max_min(const LowerContext& ctx);
// A cast to or from a float8 dtype (float8_cast.cc), which the elementwise family hands over.
Lowered lower_gpu_minifloat_cast(const LowerContext& ctx);
// A cast to or from a sub-byte dtype (packed_cast.cc), which the elementwise family hands
// over before the float8 ones, so that float4 <-> float8 comes here.
bool is_gpu_packed_cast(DType src, DType dst);
Lowered lower_gpu_packed_cast(const LowerContext& ctx);
// lower_strided_copy (engine/lower/lower.h) on a GPU.
Lowered lower_gpu_strided_copy(const LowerContext& ctx, std::span<const int64_t> dims,
                               std::span<const int64_t> src_strides, int64_t src_offset);

}  // namespace maxc

// The kernel instances of kernels/cuda by name: how host code spells the template instance
// it wants compiled ("maxc::gpu::softmax_rows<maxc::gpu::half, false>") for an op and its
// dtypes, and the catalog of every instance the engine may ask of each source, which CI
// compiles with NVRTC for sm_80 and sm_90 (tests/nvrtc) and with hipRTC for gfx90a and
// gfx1030 (tests/hiprtc), so that no kernel breaks unnoticed on a machine without a GPU.
//
// Names are spelled as a demangler prints them: built-in types by their C++ names ("int",
// "unsigned char", "long long"), never by the kernels' typedefs (gpu::i32, gpu::u8). hipRTC
// finds a name expression's symbol by comparing it with the demangled names of the code
// object, so "maxc::gpu::i32" would compile but never be found.
//
// The elementwise ops are the CPU engine's (kernels/cpu/elementwise.h, ElemOp), so one
// lowering can target either device.
#pragma once

#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/quant_encoding.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/matmul_epilogue.h"

namespace maxc::gpu {

// The kernels' storage type of a dtype ("float", "maxc::gpu::half", "maxc::gpu::bool8");
// nullptr for the dtypes they do not handle (float8, float4).
const char* storage_type_name(DType dtype);
// The storage type a cast reads or writes: storage_type_name's, and the float8 types
// ("maxc::gpu::float8_e5m2"), which only casts handle; nullptr for the sub-byte dtypes,
// whose several elements per byte the one-element-per-thread cast cannot write.
const char* cast_storage_type_name(DType dtype);
// The stored byte of a sub-byte dtype (common/packed.cuh: "maxc::gpu::float4_e2m1fn",
// "maxc::gpu::packed_int4"); nullptr for every other dtype.
const char* packed_type_name(DType dtype);
// The raw word moved for a dtype by the dtype-blind kernels (copies, gather, fill, where):
// "unsigned char" .. "unsigned long long"; nullptr for sub-byte dtypes.
const char* word_type_name(DType dtype);
// The compute type of a dtype's values ("float", "double", "long long", "unsigned long long").
const char* compute_type_name(DType dtype);
// The functor of an elementwise op ("maxc::gpu::op::Exp"; Clamp takes its compute type).
std::string elementwise_op_name(cpu::ElemOp op, DType dtype);

// Instances, each with the source that defines it (kernel_source_of).
std::string unary_kernel(cpu::ElemOp op, DType in, DType out);
std::string binary_kernel(cpu::ElemOp op, DType in, DType out);
std::string where_kernel(DType dtype);
// cast.cu's cast<In, Out> (a float8 on either side, or both).
std::string cast_kernel(DType in, DType out);
// cast_packed.cu's cast_packed<In, Out>: a sub-byte dtype on either side, or both, and any
// dtype cast_kernel takes on the other.
std::string cast_packed_kernel(DType in, DType out);
std::string fill_kernel(DType dtype);
std::string copy_strided_kernel(DType dtype);
std::string transpose_tiles_kernel(DType dtype);
std::string gather_kernel(DType dtype, DType index_dtype);
enum class Reduction { kSum, kMean, kMax, kMin };
// rows: the reduced axis is the innermost one (reduce_rows), else reduce_columns.
std::string reduce_kernel(Reduction reduction, DType dtype, bool rows);
std::string softmax_kernel(DType dtype, bool log);
std::string layer_norm_kernel(DType dtype);
std::string add_layer_norm_kernel(DType dtype);  // in layer_norm.cu
std::string rms_norm_kernel(DType dtype);
// The dense layer's activations (kernels/cpu/matmul_epilogue.h), as the matmul's epilogue.
std::string matmul_kernel(DType dtype, cpu::Activation activation);
// Fused attention over q, k, v of `dtype` (float types) and a mask of `mask` (float32 or
// `dtype`, added; bool, selecting; either float when there is no mask).
std::string attention_kernel(DType dtype, DType mask);
// cumsum along an axis (scan.cu), and argmax / argmin (arg_reduce.cu): the CPU's numeric
// dtypes (float types, int32, int64).
std::string cumsum_kernel(DType dtype);
// nonzero.cu: the positions where elements of `dtype` are nonzero (or a mask holds), by the
// word of the dtype's width; count_repeats by int32 or int64 counts.
std::string count_nonzero_kernel(DType dtype);
std::string nonzero_kernel(DType dtype);
std::string masked_scatter_kernel(DType dtype);
std::string count_repeats_kernel(DType count_type);
std::string arg_reduce_kernel(DType dtype, bool max);
// top_k and argsort (sort.cu): the same dtypes; the bytes of one key the kernel sorts (its
// compute type), which sizes the global scratch of long lines (common/sort_params.cuh).
std::string sort_kernel(DType dtype);
int64_t sort_key_bytes(DType dtype);

// conv2d and fused_conv2d (conv.cu): float32, float16, bfloat16 and float64. max_pool2d
// (pool.cu) takes the CPU's numeric dtypes (cpu::max_pool2d_supports), avg_pool2d its floats.
// direct: one thread per output element (conv.cu's conv2d_direct, for few output channels per
// group: depthwise), else the implicit GEMM in tiles (conv2d_tiled).
std::string conv2d_kernel(DType dtype, bool direct);
std::string max_pool2d_kernel(DType dtype);
std::string avg_pool2d_kernel(DType dtype);

// dequantize and qmatmul (quantized.cu) for a GGUF block encoding (not kNone):
// "maxc::gpu::dequantize_rows<maxc::gpu::QuantQ4_K>".
std::string dequantize_kernel(QuantEncoding encoding);
std::string qmatmul_kernel(QuantEncoding encoding);

struct KernelFamily {
  std::string source;                  // "softmax.cu"
  std::vector<std::string> instances;  // name expressions
};

// Every instance the engine may ask for, by source (every .cu of the folder appears).
std::vector<KernelFamily> kernel_catalog();

}  // namespace maxc::gpu

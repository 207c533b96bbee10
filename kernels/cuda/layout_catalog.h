// The instances of the layout and indexing kernels (layout.cu, gather_nd.cu, scatter.cu), by
// name, as kernel_catalog.h names the others: what engine/lower_gpu/layout.cc asks NVRTC for,
// and the families kernel_catalog() lists so CI compiles them for sm_80 and sm_90.
#pragma once

#include <string>
#include <vector>

#include "base/dtype.h"
#include "kernels/cpu/scatter.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc::gpu {

// layout.cu
std::string copy_between_kernel(DType dtype);
std::string pad_constant_kernel(DType dtype);
std::string band_part_kernel(DType dtype);
std::string range_kernel(DType dtype);
std::string outer_kernel(DType dtype);
std::string repeat_starts_kernel(DType count_dtype);
std::string repeat_rows_kernel(DType dtype);
// gather_nd.cu
std::string gather_nd_kernel(DType dtype, DType index_dtype);
// scatter.cu: kNone moves raw words (any dtype of 1 to 8 bytes); the reductions compute in
// the dtype (the floats, int32 and int64, as on the CPU: cpu::scatter_reduction_supports).
std::string scatter_kernel(cpu::ScatterReduction reduction, DType dtype, DType index_dtype);
std::string scatter_nd_kernel(cpu::ScatterReduction reduction, DType dtype, DType index_dtype);

std::vector<KernelFamily> layout_kernel_families();

}  // namespace maxc::gpu

// Generated kernels for fused elementwise chains: the CPU engine's program spec
// (kernels/cpu/elementwise.h: leaves broadcast into one output shape, steps in one compute
// type, narrowing where the unfused graph would have stored a value, several outputs) turned
// into the source of one CUDA/HIP kernel that reads every leaf once per element, keeps the
// chain in registers and writes each output once. The steps call the functors of
// common/elementwise_ops.cuh, so a fused chain computes what the standalone kernels do.
//
// The source depends on the program and on which leaves are scalars, dense (the output's
// shape) or broadcast (anything else, read through a Layout), not on the sizes: shapes are
// parameters, so one compiled kernel serves every shape of the same structure. The kernel
// is extern "C" and named by a digest of its source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cuda/common/indexing.cuh"

namespace maxc::gpu {

struct FusedKernel {
  enum class LeafKind : uint8_t { kScalar, kDense, kBroadcast };
  // The kernel's parameters, in order, for whoever packs the launch arguments.
  enum class ParamKind : uint8_t {
    kShape,       // gpu::Shape of the output (fused_shape)
    kLeaf,        // const pointer to leaf `index`'s data
    kLeafLayout,  // gpu::Layout of broadcast leaf `index` (broadcast_layout)
    kOutput,      // pointer to output `index`'s data
  };
  struct Param {
    ParamKind kind;
    int32_t index;
  };

  std::string name;    // "maxc_fused_0123456789abcdef"
  std::string source;  // a complete kernel source, for kernel_source_from_text
  std::vector<LeafKind> leaf_kinds;
  std::vector<Param> params;
};

// INVALID_ARGUMENT naming the step or leaf for a malformed spec (bad references, an op that
// is not defined on the compute type, dims that do not broadcast, rank above kMaxRank).
FusedKernel generate_fused_elementwise(const cpu::ElemProgramSpec& spec);

// The launch-time structs for a shape: row-major output dims, and the element strides of a
// leaf broadcast into them numpy-style (0 along broadcast dims).
Shape fused_shape(const std::vector<int64_t>& out_dims);
Layout broadcast_layout(const std::vector<int64_t>& leaf_dims, const std::vector<int64_t>& out_dims);

}  // namespace maxc::gpu

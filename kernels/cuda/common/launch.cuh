// Device-side helpers of the launch geometry (device code only: never compiled on the host).
// Kernels loop over their elements grid-stride, so the host may launch fewer blocks than
// elements and one kernel serves every size.
#ifndef MAXC_GPU_LAUNCH_CUH
#define MAXC_GPU_LAUNCH_CUH

#include "platform.cuh"

namespace maxc {
namespace gpu {

__device__ __forceinline__ i64 first_index() {
  return static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ i64 index_step() {
  return static_cast<i64>(gridDim.x) * blockDim.x;
}

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_LAUNCH_CUH

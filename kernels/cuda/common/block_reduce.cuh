// Reductions across a warp and a block (device code only). The warp step uses shuffles,
// spelled per platform: CUDA's take a lane mask, HIP's do not. Blocks must be a whole number
// of warps (launch 256 threads), and the warp width is the device's own (32 on NVIDIA, 32
// or 64 on AMD), read from warpSize.
#ifndef MAXC_GPU_BLOCK_REDUCE_CUH
#define MAXC_GPU_BLOCK_REDUCE_CUH

#include "platform.cuh"

namespace maxc {
namespace gpu {

template <class T>
__device__ __forceinline__ T shuffle_xor(T v, int lane_mask) {
#if defined(MAXC_HIP)
  return __shfl_xor(v, lane_mask);
#else
  return __shfl_xor_sync(0xffffffffu, v, lane_mask);
#endif
}

// Every lane of the warp gets f applied over all lanes' values.
template <class T, class F>
__device__ __forceinline__ T warp_reduce(T v, F f) {
  for (int m = warpSize / 2; m > 0; m >>= 1) v = f(v, shuffle_xor(v, m));
  return v;
}

// Every thread of the block gets f applied over all threads' values. May be called several
// times in a row: the barrier before the shared slots are written keeps a later call from
// overwriting what an earlier one still reads.
template <class T, class F>
__device__ __forceinline__ T block_reduce(T v, F f, T identity) {
  __shared__ T partial[32];  // one slot per warp: 1024 threads of 32 lanes at most
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (blockDim.x + warpSize - 1) / warpSize;
  v = warp_reduce(v, f);
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_reduce(lane < warps ? partial[lane] : identity, f);
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  return partial[0];
}

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_BLOCK_REDUCE_CUH

// The emulator itself: its barriers, warp operations and failure reports behave as the CUDA
// programming guide says the hardware does, so the kernel tests built on it mean something.
#include "gpu_emu/cuda_emulator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace maxc::gpu_emu::testing {
namespace {

__global__ void write_coordinates(unsigned* out) {
  const unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const unsigned thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  out[block * blockDim.x * blockDim.y * blockDim.z + thread] = block * 10000 + thread;
}

TEST(CudaEmulator, EveryThreadOfEveryBlockRunsOnceWithItsCoordinates) {
  const dim3 grid(3, 2, 2), block(4, 3, 2);
  std::vector<unsigned> out(grid.count() * block.count(), ~0u);
  emulate_launch(grid, block, write_coordinates, out.data());
  for (unsigned b = 0; b < grid.count(); ++b)
    for (unsigned t = 0; t < block.count(); ++t) ASSERT_EQ(out[b * block.count() + t], b * 10000 + t);
}

// Each thread writes its slot, and after the barrier reads its neighbour's: without a real
// barrier thread 0 would run ahead and read a slot not yet written.
__global__ void rotate_through_shared(const int* in, int* out) {
  __shared__ int slots[256];
  slots[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = slots[(threadIdx.x + 1) % blockDim.x];
}

TEST(CudaEmulator, SyncthreadsIsABlockWideBarrier) {
  std::vector<int> in(2 * 256), out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i * 7 + 1);
  emulate_launch(2, 256, rotate_through_shared, in.data(), out.data());
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 256; ++t) ASSERT_EQ(out[b * 256 + t], in[b * 256 + (t + 1) % 256]) << b << " " << t;
}

// Threads past `live` return before the barrier; those that stay must still get through it.
__global__ void return_early_then_sync(int live, int* out) {
  if (static_cast<int>(threadIdx.x) >= live) return;
  __syncthreads();
  __syncthreads();
  out[threadIdx.x] = 1;
}

TEST(CudaEmulator, ReturnedThreadsCountAsArrivedAtLaterBarriers) {
  std::vector<int> out(128, 0);
  emulate_launch(1, 128, return_early_then_sync, 40, out.data());
  for (int t = 0; t < 128; ++t) EXPECT_EQ(out[t], t < 40 ? 1 : 0) << t;
}

__global__ void shuffles(int* xor_out, int* down_out, int* up_out, int* idx_out, double* wide_out) {
  const int t = threadIdx.x, lane = t % warpSize;
  xor_out[t] = __shfl_xor_sync(0xffffffffu, t, 5);
  down_out[t] = __shfl_down_sync(0xffffffffu, t, 3, 16);
  up_out[t] = __shfl_up_sync(0xffffffffu, t, 2);
  idx_out[t] = __shfl_sync(0xffffffffu, t, 7 + lane, 8);
  wide_out[t] = __shfl_sync(0xffffffffu, 0.5 * t, 31);
}

TEST(CudaEmulator, ShufflesFollowCudasLaneRules) {
  std::vector<int> x(64), down(64), up(64), idx(64);
  std::vector<double> wide(64);
  emulate_launch(1, 64, shuffles, x.data(), down.data(), up.data(), idx.data(), wide.data());
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32, warp_base = t - lane;
    EXPECT_EQ(x[t], warp_base + (lane ^ 5)) << t;
    // width 16: a source past the lane's 16-lane segment leaves the lane its own value
    EXPECT_EQ(down[t], lane % 16 + 3 < 16 ? t + 3 : t) << t;
    EXPECT_EQ(up[t], lane >= 2 ? t - 2 : t) << t;
    EXPECT_EQ(idx[t], warp_base + (lane & ~7) + ((7 + lane) & 7)) << t;
    EXPECT_EQ(wide[t], 0.5 * (warp_base + 31)) << t;
  }
}

__global__ void votes(unsigned* ballot, int* any, int* all) {
  const int t = threadIdx.x;
  ballot[t] = __ballot_sync(0xffffffffu, t % 3 == 0);
  any[t] = __any_sync(0xffffffffu, t == 40);
  all[t] = __all_sync(0xffffffffu, t < 32);
}

TEST(CudaEmulator, VotesSeeTheirWholeWarp) {
  std::vector<unsigned> ballot(64);
  std::vector<int> any(64), all(64);
  emulate_launch(1, 64, votes, ballot.data(), any.data(), all.data());
  for (int t = 0; t < 64; ++t) {
    unsigned want = 0;
    for (int lane = 0; lane < 32; ++lane)
      if ((t / 32 * 32 + lane) % 3 == 0) want |= 1u << lane;
    EXPECT_EQ(ballot[t], want) << t;
    EXPECT_EQ(any[t], t >= 32) << t;
    EXPECT_EQ(all[t], t < 32) << t;
  }
}

// Shared variables belong to the block: each block's threads see one copy, and blocks do
// not overlap, so a block's total is never mixed with another's.
__global__ void count_in_shared(int* out) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  atomicAdd(&count, 1);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = count;
}

// Thread 0 wrote s before thread 1 overwrote it: thread 0 must read thread 1's value, not
// one the compiler remembered from its own store.
__global__ void overwrite_between_barriers(int* out) {
  __shared__ int s;
  if (threadIdx.x == 0) s = 1;
  __syncthreads();
  if (threadIdx.x == 1) s = 2;
  __syncthreads();
  out[threadIdx.x] = s;
}

TEST(CudaEmulator, SharedWritesOfOtherThreadsAreSeenAfterABarrier) {
  std::vector<int> out(64);
  emulate_launch(1, 64, overwrite_between_barriers, out.data());
  EXPECT_EQ(out, std::vector<int>(64, 2));
}

TEST(CudaEmulator, SharedVariablesAreTheBlocks) {
  std::vector<int> out(3);
  emulate_launch(3, 96, count_in_shared, out.data());
  EXPECT_EQ(out, std::vector<int>({96, 96, 96}));
}

__global__ void sync_in_one_warp_only(int* unused) {
  if (threadIdx.x < 32) {
    __syncthreads();
  } else {
    (void)__shfl_xor_sync(0xffffffffu, 1, 1);
    __syncthreads();
  }
}

__global__ void sync_in_half_a_warp(int* unused) {
  if (threadIdx.x % 32 < 16) __syncthreads();
  (void)__shfl_xor_sync(0xffffffffu, 1, 1);
}

__global__ void sync_divergent_in_warp(int* unused) {
  if (threadIdx.x == 3) {
    __syncthreads();
  } else {
    (void)__shfl_xor_sync(0xffffffffu, 1, 1);
  }
}

std::string launch_error(void (*kernel)(int*), dim3 block) {
  try {
    emulate_launch(2, block, kernel, nullptr);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(CudaEmulator, IncompatibleBarriersAreADeadlockNotAHang) {
  EXPECT_NE(launch_error(sync_divergent_in_warp, 64).find("deadlock in block (0,0,0)"), std::string::npos);
  EXPECT_NE(launch_error(sync_in_half_a_warp, 64).find("deadlock"), std::string::npos);
  // Warps may take different paths to a barrier, as long as each warp's lanes agree.
  EXPECT_EQ(launch_error(sync_in_one_warp_only, 64), "");
  const std::string e = launch_error(sync_divergent_in_warp, 64);
  EXPECT_NE(e.find("3 at __syncthreads"), std::string::npos) << e;
  EXPECT_NE(e.find("0-2 at a warp operation"), std::string::npos) << e;
}

__global__ void shuffle_after_partner_returned(int* unused) {
  if (threadIdx.x == 1) return;
  (void)__shfl_xor_sync(0xffffffffu, 1, 1);
}

TEST(CudaEmulator, ReadingALaneThatIsGoneFailsTheLaunch) {
  const std::string gone = launch_error(shuffle_after_partner_returned, 32);
  EXPECT_NE(gone.find("lane 0 reads lane 1, which has returned"), std::string::npos) << gone;
  // 48 threads: the second warp has 16 lanes, and lane 0's xor-16 partner does not exist.
  const std::string ragged = launch_error(+[](int*) { (void)__shfl_xor_sync(0xffffffffu, 1, 16); }, 48);
  EXPECT_NE(ragged.find("does not exist"), std::string::npos) << ragged;
}

TEST(CudaEmulator, PartialMasksAreRefused) {
  const std::string e = launch_error(+[](int*) { (void)__shfl_xor_sync(0xffffu, 1, 1); }, 32);
  EXPECT_NE(e.find("partial-warp"), std::string::npos) << e;
}

TEST(CudaEmulator, RefusesWhatCudaRefuses) {
  EXPECT_THROW(emulate_launch(1, 1025, write_coordinates, nullptr), std::invalid_argument);
  EXPECT_THROW(emulate_launch(dim3(1, 1, 0), 32, write_coordinates, nullptr), std::invalid_argument);
  EXPECT_THROW(emulate_launch(1, dim3(1, 1, 65), write_coordinates, nullptr), std::invalid_argument);
}

TEST(CudaEmulator, ALaunchAfterAFailedOneRuns) {
  EXPECT_NE(launch_error(sync_divergent_in_warp, 64), "");
  std::vector<unsigned> out(64);
  emulate_launch(2, 32, write_coordinates, out.data());
  EXPECT_EQ(out[63], 10031u);
}

}  // namespace
}  // namespace maxc::gpu_emu::testing

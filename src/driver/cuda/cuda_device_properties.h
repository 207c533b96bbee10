// What a GPU is: its name, architecture (the compiler's target: sm_XY for NVRTC, a gfx target
// for hipRTC), memory and the limits launches must respect, read once through the driver.
#pragma once

#include <cstdint>
#include <string>

#include "driver/cuda/cuda_api.h"

namespace maxc::cuda {

struct CudaDeviceProperties {
  int ordinal = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int compute_major = 0;
  int compute_minor = 0;
  uint64_t total_memory = 0;  // bytes
  int multiprocessors = 0;
  int max_threads_per_block = 0;
  int warp_size = 0;
  int max_shared_memory_per_block = 0;  // bytes
  bool unified_addressing = false;
  bool integrated = false;
  GpuBackend backend = GpuBackend::kCuda;
  std::string arch_name;  // HIP's gcnArchName; empty on CUDA

  // "sm_90" (or "gfx90a:sramecc+:xnack-"): the architecture MAX reports and the kernel
  // compiler targets.
  std::string architecture() const;
  // "CUDA device 0", for messages.
  std::string label() const;
};

// Throws the driver's error naming the property that could not be read.
CudaDeviceProperties query_device_properties(const CudaApi& api, CUdevice device, int ordinal);

}  // namespace maxc::cuda

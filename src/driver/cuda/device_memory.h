// The raw memory under a CUDA device's caching allocators: device memory (cuMemAlloc) and
// pinned, page-locked host memory (cuMemHostAlloc), which copies can stream from without a
// staging copy and which async copies need to be asynchronous at all.
#pragma once

#include <string>

#include "driver/cuda/caching_allocator.h"
#include "driver/cuda/cuda_api.h"

namespace maxc::cuda {

class DeviceMemorySource : public MemorySource {
 public:
  DeviceMemorySource(const CudaApi& api, CUcontext context, std::string description)
      : api_(api), context_(context), description_(std::move(description)) {}
  void* obtain(size_t bytes) override;
  void give_back(void* p, size_t bytes) noexcept override;
  // cuMemFree does not wait for queued kernels that may still read a cached block.
  void quiesce() noexcept override;
  std::string describe() const override { return description_; }

 private:
  const CudaApi& api_;
  CUcontext context_;
  std::string description_;
};

class PinnedMemorySource : public MemorySource {
 public:
  PinnedMemorySource(const CudaApi& api, CUcontext context, std::string description)
      : api_(api), context_(context), description_(std::move(description)) {}
  void* obtain(size_t bytes) override;
  void give_back(void* p, size_t bytes) noexcept override;
  void quiesce() noexcept override;
  std::string describe() const override { return description_; }

 private:
  const CudaApi& api_;
  CUcontext context_;
  std::string description_;
};

}  // namespace maxc::cuda

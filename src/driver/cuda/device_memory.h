// The raw memory under a CUDA device's caching allocators: device memory (cuMemAlloc) and
// pinned, page-locked host memory (cuMemHostAlloc), which copies can stream from without a
// staging copy and which async copies need to be asynchronous at all.
#pragma once

#include <exception>
#include <string>

#include "driver/cuda/caching_allocator.h"
#include "driver/cuda/cuda_context.h"
#include "driver/cuda/cuda_api.h"

namespace maxc::cuda {

// What both sources share: the context their calls run in, and a description for errors.
class ContextMemorySource : public MemorySource {
 public:
  ContextMemorySource(const CudaApi& api, CUcontext context, std::string description)
      : api_(api), context_(context), description_(std::move(description)) {}
  // cuMemFree and cuMemFreeHost do not wait for queued work that may still use a cached block.
  void quiesce() noexcept override;
  std::string describe() const override { return description_; }

 protected:
  // Runs fn with the context current, swallowing the failure to make it current: the
  // process is going down or the device is lost, and the memory goes with the context.
  template <typename Fn>
  void in_context_noexcept(Fn&& fn) const noexcept {
    try {
      ContextScope scope(api_, context_);
      fn();
    } catch (const std::exception&) {
    }
  }

  const CudaApi& api_;
  CUcontext context_;
  std::string description_;
};

class DeviceMemorySource : public ContextMemorySource {
 public:
  using ContextMemorySource::ContextMemorySource;
  void* obtain(size_t bytes) override;
  void give_back(void* p, size_t bytes) noexcept override;
};

class PinnedMemorySource : public ContextMemorySource {
 public:
  using ContextMemorySource::ContextMemorySource;
  void* obtain(size_t bytes) override;
  void give_back(void* p, size_t bytes) noexcept override;
};

}  // namespace maxc::cuda

#include "driver/cuda/device_memory.h"

#include <cstdint>

#include "base/str_cat.h"
#include "driver/cuda/cuda_context.h"
#include "driver/cuda/cuda_error.h"

namespace maxc::cuda {

void* DeviceMemorySource::obtain(size_t bytes) {
  ContextScope scope(api_, context_);
  CUdeviceptr p = 0;
  const CUresult r = api_.cuMemAlloc_v2(&p, bytes);
  if (r == result::kOutOfMemory) return nullptr;
  check_cuda(api_, r, str_cat("cuMemAlloc_v2 of ", bytes, " bytes on ", description_));
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

void DeviceMemorySource::give_back(void* p, size_t) noexcept {
  try {
    ContextScope scope(api_, context_);
    warn_cuda(api_, api_.cuMemFree_v2(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p))), "cuMemFree_v2");
  } catch (const std::exception&) {
    // The context could not be made current: the process is going down or the device is
    // lost, and the memory goes with the context.
  }
}

void DeviceMemorySource::quiesce() noexcept {
  try {
    ContextScope scope(api_, context_);
    warn_cuda(api_, api_.cuCtxSynchronize(), "cuCtxSynchronize before freeing cached blocks");
  } catch (const std::exception&) {
  }
}

void* PinnedMemorySource::obtain(size_t bytes) {
  ContextScope scope(api_, context_);
  void* p = nullptr;
  // Portable: the pages are pinned for every context, so any device copies from them.
  const CUresult r = api_.cuMemHostAlloc(&p, bytes, kMemHostAllocPortable);
  if (r == result::kOutOfMemory) return nullptr;
  check_cuda(api_, r, str_cat("cuMemHostAlloc of ", bytes, " bytes for ", description_));
  return p;
}

void PinnedMemorySource::give_back(void* p, size_t) noexcept {
  try {
    ContextScope scope(api_, context_);
    warn_cuda(api_, api_.cuMemFreeHost(p), "cuMemFreeHost");
  } catch (const std::exception&) {
  }
}

void PinnedMemorySource::quiesce() noexcept {
  try {
    ContextScope scope(api_, context_);
    warn_cuda(api_, api_.cuCtxSynchronize(), "cuCtxSynchronize before freeing cached pinned blocks");
  } catch (const std::exception&) {
  }
}

}  // namespace maxc::cuda

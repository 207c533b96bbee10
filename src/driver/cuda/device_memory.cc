#include "driver/cuda/device_memory.h"

#include <cstdint>

#include "base/str_cat.h"
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
  in_context_noexcept([&] {
    warn_cuda(api_, api_.cuMemFree_v2(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p))), "cuMemFree_v2");
  });
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
  in_context_noexcept([&] { warn_cuda(api_, api_.cuMemFreeHost(p), "cuMemFreeHost"); });
}

void ContextMemorySource::quiesce() noexcept {
  in_context_noexcept([&] {
    const std::string what = str_cat("cuCtxSynchronize before freeing cached blocks of ", description_);
    warn_cuda(api_, api_.cuCtxSynchronize(), what.c_str());
  });
}

}  // namespace maxc::cuda

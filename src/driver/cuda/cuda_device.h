// One CUDA device as the engine uses it: its primary context, its properties, a caching
// allocator of device memory under a memory limit, a caching allocator of pinned host
// memory, and the copies between host and device and between devices. Created once per
// ordinal by CudaPlatform and kept for the life of the process.
//
// Device pointers are plain void* (the driver's CUdeviceptr of the same 64 bits), as
// Storage and DLPack carry them. A copy or fill given no stream runs on the legacy default
// stream and returns when it is done; given a stream it is queued there and returns at once
// (from pinned or device memory; from pageable host memory the driver stages it first).
#pragma once

#include <cstddef>
#include <string>

#include "driver/cuda/caching_allocator.h"
#include "driver/cuda/cuda_api.h"
#include "driver/cuda/cuda_device_properties.h"
#include "driver/cuda/device_memory.h"

namespace maxc::cuda {

class CudaStream;

class CudaDevice {
 public:
  // Retains the device's primary context and reads its properties; throws the driver's error.
  CudaDevice(const CudaApi& api, int ordinal);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const CudaApi& api() const { return api_; }
  CUcontext context() const { return context_; }
  const CudaDeviceProperties& properties() const { return properties_; }
  int ordinal() const { return properties_.ordinal; }
  std::string describe() const;  // "cuda:0 (NVIDIA H100 80GB HBM3, sm_90)"

  // Device memory from the cache, zeroed on request (before this returns).
  void* allocate(size_t bytes, bool zero, const CudaStream* stream = nullptr);
  void deallocate(void* p) noexcept { device_allocator_.deallocate(p); }
  CachingAllocator& allocator() { return device_allocator_; }
  // MAX's device_memory_limit: the most device memory this process keeps (live + cached).
  void set_memory_limit(size_t bytes) { device_allocator_.set_limit(bytes); }

  // Page-locked host memory, portable to every device.
  void* allocate_pinned(size_t bytes) { return pinned_allocator_.allocate(bytes); }
  void deallocate_pinned(void* p) noexcept { pinned_allocator_.deallocate(p); }
  CachingAllocator& pinned_allocator() { return pinned_allocator_; }

  void copy_to_device(void* dst, const void* host_src, size_t bytes, const CudaStream* stream = nullptr) const;
  void copy_to_host(void* host_dst, const void* src, size_t bytes, const CudaStream* stream = nullptr) const;
  void copy_within(void* dst, const void* src, size_t bytes, const CudaStream* stream = nullptr) const;
  // From `src` on device `from` to `dst` on this device (peer copy; staged by the driver
  // when the two cannot reach each other directly).
  void copy_from_peer(void* dst, const CudaDevice& from, const void* src, size_t bytes,
                      const CudaStream* stream = nullptr) const;
  void fill_zero(void* dst, size_t bytes, const CudaStream* stream = nullptr) const;

  // Free and total device memory as the driver sees it (other processes included).
  void memory_info(size_t* free_bytes, size_t* total_bytes) const;
  // Waits for all work queued on the device by this process.
  void synchronize() const;

 private:
  CUstream stream_handle(const CudaStream* stream) const;

  // In this order: nothing after the context is retained may throw, so it is never leaked.
  const CudaApi& api_;
  CUdevice device_ = 0;
  CudaDeviceProperties properties_;
  CUcontext context_ = nullptr;
  DeviceMemorySource device_memory_;
  PinnedMemorySource pinned_memory_;
  CachingAllocator device_allocator_;
  CachingAllocator pinned_allocator_;
};

// The driver's form of a device pointer.
inline CUdeviceptr device_address(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

}  // namespace maxc::cuda

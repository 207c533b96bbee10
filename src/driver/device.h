// A device that holds memory and runs work: the host CPU, or a CUDA or HIP GPU whose driver
// is loaded at run time (DESIGN §8; src/driver/cuda/, src/driver/hip/). One object per (kind, id), for the life
// of the process, so equality of devices is equality of pointers. Where no driver is found
// there are simply no accelerators, and everything on the CPU works as before.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/object.h"

namespace maxc {

namespace cuda {
class CudaDevice;
}

class Device : public Object {
 public:
  // The ABI's MAX_DEVICE_KIND_* values. (The graph layer's DeviceRef has its own cpu/gpu kind.)
  enum class Kind : int32_t { kCpu = 1, kCuda = 2, kHip = 3 };

  // The device of a kind and id (-1: the first). NOT_FOUND when it does not exist, saying
  // why there are no accelerators when there are none (no driver, no device).
  static Ref<Device> get(Kind kind, int32_t id);
  static Ref<Device> cpu();
  // GPUs this process can use, CUDA's and HIP's; 0 without a driver. The first call loads
  // the drivers.
  static int32_t accelerator_count();
  // Accelerator `id` (-1: the first) of the graph layer's gpu:<id>: a CUDA device where the
  // process has any, else a HIP one. NOT_FOUND as get() says it.
  static Ref<Device> accelerator(int32_t id);

  Kind device_kind() const { return kind_; }
  int32_t id() const { return id_; }
  bool is_host() const { return kind_ == Device::Kind::kCpu; }
  const char* label() const { return is_host() ? "cpu" : "gpu"; }
  const char* api() const;
  std::string name() const;  // "cpu:0"

  // The GPU backend of a CUDA or HIP device (null on the host): streams, copies, kernels.
  cuda::CudaDevice* cuda() const { return cuda_; }

  // Memory of `bytes` bytes aligned to kAlignment (device memory on a GPU, from its caching
  // allocator); throws RESOURCE_EXHAUSTED.
  void* allocate(size_t bytes, bool zero) const;
  void deallocate(void* p) const;
  // Waits for the device's queued work (nothing to wait for on the host).
  void synchronize() const;

  static constexpr size_t kAlignment = 64;

 private:
  Device(Kind kind, int32_t id, cuda::CudaDevice* cuda = nullptr)
      : Object(ObjectKind::kDevice), kind_(kind), id_(id), cuda_(cuda) {}
  static Ref<Device> get_gpu(Kind kind, int32_t id);
  Kind kind_;
  int32_t id_;
  cuda::CudaDevice* cuda_;  // lives as long as the process, like the Device
};

}  // namespace maxc

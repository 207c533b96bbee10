#include "driver/device.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "driver/cuda/cuda_platform.h"

namespace maxc {

Ref<Device> Device::cpu() {
  // Never freed: devices live as long as the process, and a handle released after
  // static destruction must still find its device.
  static Device* host = new Device(Device::Kind::kCpu, 0);
  return Ref<Device>::share(host);
}

namespace {

cuda::CudaPlatform& platform_of(Device::Kind kind) {
  return kind == Device::Kind::kHip ? cuda::CudaPlatform::process_hip() : cuda::CudaPlatform::process();
}

// Why neither driver serves, for the message of a missing accelerator.
std::string no_accelerator_reason() {
  return str_cat(cuda::CudaPlatform::process().unavailable_reason(), "; ",
                 cuda::CudaPlatform::process_hip().unavailable_reason());
}

}  // namespace

int32_t Device::accelerator_count() {
  return cuda::CudaPlatform::process().device_count() + cuda::CudaPlatform::process_hip().device_count();
}

Ref<Device> Device::accelerator(int32_t id) {
  const bool hip_only = cuda::CudaPlatform::process().device_count() == 0 &&
                        cuda::CudaPlatform::process_hip().device_count() > 0;
  return get(hip_only ? Kind::kHip : Kind::kCuda, id);
}

Ref<Device> Device::get_gpu(Kind kind, int32_t id) {
  cuda::CudaPlatform& platform = platform_of(kind);
  const int32_t count = platform.device_count();
  const int32_t ordinal = id == -1 ? 0 : id;
  if (ordinal < 0 || ordinal >= count) {
    const char* what = kind == Kind::kHip ? "HIP" : "CUDA";
    const int32_t total = accelerator_count();
    fail(Code::kNotFound, "no ", what, " device with id ", id, ": this process sees ", total, " accelerators, ", count,
         " of them ", what,
         count == 0 ? str_cat(" (", total == 0 ? no_accelerator_reason() : platform.unavailable_reason(), ")")
                    : std::string());
  }
  // Like the host's, never freed.
  static std::mutex mu;
  static auto* devices = new std::vector<Device*>[2];
  std::lock_guard<std::mutex> lock(mu);
  std::vector<Device*>& of_kind = devices[kind == Kind::kHip ? 1 : 0];
  if (of_kind.size() < static_cast<size_t>(count)) of_kind.resize(static_cast<size_t>(count), nullptr);
  Device*& slot = of_kind[static_cast<size_t>(ordinal)];
  if (!slot) slot = new Device(kind, ordinal, &platform.device(ordinal));
  return Ref<Device>::share(slot);
}

Ref<Device> Device::get(Kind kind, int32_t id) {
  switch (kind) {
    case Device::Kind::kCpu:
      if (id != -1 && id != 0) fail(Code::kNotFound, "no CPU device with id ", id, " (use 0 or -1)");
      return cpu();
    case Device::Kind::kCuda:
    case Device::Kind::kHip:
      return get_gpu(kind, id);
  }
  fail(Code::kInvalidArgument, "unknown device kind ", static_cast<int32_t>(kind),
       " (expected 1=cpu, 2=cuda, 3=hip)");
}

const char* Device::api() const {
  switch (kind_) {
    case Device::Kind::kCpu: return "cpu";
    case Device::Kind::kCuda: return "cuda";
    case Device::Kind::kHip: return "hip";
  }
  return "unknown";
}

std::string Device::name() const { return str_cat(label(), ":", id_); }

void* Device::allocate(size_t bytes, bool zero) const {
  if (cuda_) return cuda_->allocate(bytes, zero);
  // aligned_alloc needs a multiple of the alignment, and a non-zero size for a unique pointer.
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes) fail(Code::kResourceExhausted, "allocation of ", bytes, " bytes overflows");
  void* p = std::aligned_alloc(kAlignment, rounded ? rounded : kAlignment);
  if (!p) fail(Code::kResourceExhausted, "out of memory allocating ", bytes, " bytes on ", name());
  if (zero) std::memset(p, 0, bytes);
  return p;
}

void Device::deallocate(void* p) const {
  if (cuda_) {
    cuda_->deallocate(p);
    return;
  }
  std::free(p);
}

void Device::synchronize() const {
  if (cuda_) cuda_->synchronize();
}

}  // namespace maxc

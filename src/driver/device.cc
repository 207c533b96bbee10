#include "driver/device.h"

#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace maxc {

Ref<Device> Device::cpu() {
  // Never freed: devices live as long as the process, and a handle released after
  // static destruction must still find its device.
  static Device* host = new Device(Device::Kind::kCpu, 0);
  return Ref<Device>::share(host);
}

int32_t Device::accelerator_count() { return 0; }

Ref<Device> Device::get(Kind kind, int32_t id) {
  switch (kind) {
    case Device::Kind::kCpu:
      if (id != -1 && id != 0) fail(Code::kNotFound, "no CPU device with id ", id, " (use 0 or -1)");
      return cpu();
    case Device::Kind::kCuda:
    case Device::Kind::kHip:
      fail(Code::kNotFound, "no ", kind == Device::Kind::kCuda ? "CUDA" : "HIP",
           " device with id ", id, ": this process sees ", accelerator_count(), " accelerators");
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
  // aligned_alloc needs a multiple of the alignment, and a non-zero size for a unique pointer.
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes) fail(Code::kResourceExhausted, "allocation of ", bytes, " bytes overflows");
  void* p = std::aligned_alloc(kAlignment, rounded ? rounded : kAlignment);
  if (!p) fail(Code::kResourceExhausted, "out of memory allocating ", bytes, " bytes on ", name());
  if (zero) std::memset(p, 0, bytes);
  return p;
}

void Device::deallocate(void* p) const { std::free(p); }

}  // namespace maxc

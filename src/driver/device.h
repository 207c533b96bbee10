// A device that holds memory and runs work: the host CPU now, accelerators later
// (DESIGN §8 loads their drivers at run time). One object per (kind, id), for the life of
// the process, so equality of devices is equality of pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/object.h"

namespace maxc {

class Device : public Object {
 public:
  // The ABI's MAX_DEVICE_KIND_* values. (The graph layer's DeviceRef has its own cpu/gpu kind.)
  enum class Kind : int32_t { kCpu = 1, kCuda = 2, kHip = 3 };

  // The device of a kind and id (-1: the first). NOT_FOUND when it does not exist.
  static Ref<Device> get(Kind kind, int32_t id);
  static Ref<Device> cpu();
  static int32_t accelerator_count();

  Kind device_kind() const { return kind_; }
  int32_t id() const { return id_; }
  bool is_host() const { return kind_ == Device::Kind::kCpu; }
  const char* label() const { return is_host() ? "cpu" : "gpu"; }
  const char* api() const;
  std::string name() const;  // "cpu:0"

  // Memory of `bytes` bytes aligned to kAlignment; throws RESOURCE_EXHAUSTED.
  void* allocate(size_t bytes, bool zero) const;
  void deallocate(void* p) const;
  void synchronize() const {}

  static constexpr size_t kAlignment = 64;

 private:
  Device(Kind kind, int32_t id) : Object(ObjectKind::kDevice), kind_(kind), id_(id) {}
  Kind kind_;
  int32_t id_;
};

}  // namespace maxc

#include "driver/storage.h"

namespace maxc {

Ref<Storage> Storage::allocate(Ref<Device> device, size_t bytes, bool zero) {
  void* p = device->allocate(bytes, zero);
  Device* dev = device.get();  // kept alive by the storage's own reference
  try {
    return Ref<Storage>::adopt(new Storage(std::move(device), p, [dev, p] { dev->deallocate(p); }));
  } catch (...) {
    dev->deallocate(p);
    throw;
  }
}

Ref<Storage> Storage::borrow(Ref<Device> device, void* data, std::function<void()> release) {
  return Ref<Storage>::adopt(new Storage(std::move(device), data, std::move(release)));
}

Storage::~Storage() {
  if (release_) release_();
}

}  // namespace maxc

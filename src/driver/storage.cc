#include "driver/storage.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

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

Ref<Storage> Storage::deferred(size_t bytes, std::function<void(void* dst)> fill) {
  auto s = Ref<Storage>::adopt(new Storage(Device::cpu(), nullptr, nullptr));
  s->bytes_ = bytes;
  s->fill_ = std::move(fill);
  return s;
}

void* Storage::filled_copy() const {
  void* p = device_->allocate(bytes_, /*zero=*/false);
  try {
    fill_(p);
  } catch (...) {
    device_->deallocate(p);
    throw;
  }
  return p;
}

void* Storage::make() const {
  std::lock_guard lock(make_mu_);
  if (void* p = data_.load(std::memory_order_acquire)) return p;
  void* p = filled_copy();
  Device* dev = device_.get();
  release_ = [dev, p] { dev->deallocate(p); };
  data_.store(p, std::memory_order_release);
  return p;
}

void Storage::read(const std::function<void(const void*)>& fn) const {
  if (void* p = data_.load(std::memory_order_acquire); p || !fill_) return fn(p);
  void* copy = filled_copy();
  try {
    fn(copy);
  } catch (...) {
    device_->deallocate(copy);
    throw;
  }
  device_->deallocate(copy);
}

Storage::~Storage() {
  if (release_) release_();
}

void drop_file_pages(const void* data, size_t bytes) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<uintptr_t>(data);
  const uintptr_t begin = (first + page - 1) & ~(page - 1), end = (first + bytes) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace maxc

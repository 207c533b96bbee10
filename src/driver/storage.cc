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

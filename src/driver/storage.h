// The memory behind one or more tensor views: owned (allocated on a device), borrowed
// (someone else's, given back through a release function exactly once) or deferred (host
// memory made and filled the first time someone asks for its address).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>

#include "base/object.h"
#include "driver/device.h"

namespace maxc {

class Storage : public Object {
 public:
  // Fresh memory on `device`, zero-filled when asked.
  static Ref<Storage> allocate(Ref<Device> device, size_t bytes, bool zero);
  // Someone else's memory; `release` runs once when the last view goes away.
  static Ref<Storage> borrow(Ref<Device> device, void* data, std::function<void()> release);
  // `bytes` of host memory that `fill` writes when data() is first called: an aligned copy
  // of bytes that cannot be viewed in place (a mapped file's misaligned weight), paid for
  // only when something reads it where it is. Bytes read once through read() (a weight
  // the engine packs) never take memory of their own.
  static Ref<Storage> deferred(size_t bytes, std::function<void(void* dst)> fill);

  // The memory's address; for a deferred storage, made and filled on the first call (which
  // may throw RESOURCE_EXHAUSTED) and kept from then on. Thread-safe.
  void* data() const {
    void* p = data_.load(std::memory_order_acquire);
    return p || !fill_ ? p : make();
  }
  // Calls fn with the bytes: data()'s where they are in memory, else a transient copy made
  // for the call and freed after it. Thread-safe.
  void read(const std::function<void(const void*)>& fn) const;
  const Ref<Device>& device() const { return device_; }
  // Drops the release function unrun: for an import that failed after wrapping memory
  // it was never given.
  void disarm() { release_ = nullptr; }

  // The memory is part of a read-only private file mapping (weights/mapped_file.h): its
  // pages may leave the resident set, and a later read brings them back from the file.
  // Set once by whoever borrowed it, before the storage is shared.
  void mark_file_pages() { file_pages_ = true; }
  bool file_pages() const { return file_pages_; }

 private:
  Storage(Ref<Device> device, void* data, std::function<void()> release)
      : Object(ObjectKind::kStorage), device_(std::move(device)), data_(data),
        release_(std::move(release)) {}
  ~Storage() override;
  void* make() const;
  void* filled_copy() const;  // fresh host memory holding fill_'s bytes; the caller frees it

  Ref<Device> device_;
  mutable std::atomic<void*> data_;
  mutable std::function<void()> release_;  // set by make() for a deferred storage
  bool file_pages_ = false;
  size_t bytes_ = 0;                     // deferred: the size to make
  std::function<void(void*)> fill_;      // deferred: writes the bytes
  mutable std::mutex make_mu_;
};

// Drops the pages wholly inside [data, data + bytes) from the resident set. Only for memory
// of a read-only private file mapping, which reads back from the file; anonymous memory would
// read back as zeros. A hint: a failure changes nothing and is ignored. Thread-safe.
void drop_file_pages(const void* data, size_t bytes);

}  // namespace maxc

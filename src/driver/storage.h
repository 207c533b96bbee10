// The memory behind one or more tensor views: owned (allocated on a device) or borrowed
// (someone else's, given back through a release function exactly once).
#pragma once

#include <cstddef>
#include <functional>

#include "base/object.h"
#include "driver/device.h"

namespace maxc {

class Storage : public Object {
 public:
  // Fresh memory on `device`, zero-filled when asked.
  static Ref<Storage> allocate(Ref<Device> device, size_t bytes, bool zero);
  // Someone else's memory; `release` runs once when the last view goes away.
  static Ref<Storage> borrow(Ref<Device> device, void* data, std::function<void()> release);

  void* data() const { return data_; }
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

  Ref<Device> device_;
  void* data_;
  std::function<void()> release_;
  bool file_pages_ = false;
};

// Drops the pages wholly inside [data, data + bytes) from the resident set. Only for memory
// of a read-only private file mapping, which reads back from the file; anonymous memory would
// read back as zeros. A hint: a failure changes nothing and is ignored. Thread-safe.
void drop_file_pages(const void* data, size_t bytes);

}  // namespace maxc

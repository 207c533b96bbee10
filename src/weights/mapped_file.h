// The bytes of one weights file, mapped read-only for as long as any tensor view or parsed
// entry refers to them. Shared through std::shared_ptr<const MappedFile>: a zero-copy weight
// tensor keeps the mapping alive by holding one of those pointers in its release function.
//
// Thread-safety: immutable after construction; any number of threads may read it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "driver/tensor.h"

namespace maxc {

class GuardedMapping;  // base/guarded_mapping.h

class MappedFile {
 public:
  // Maps the whole file read-only. Errors name the path and the system's reason:
  //   NOT_FOUND          no such file (or a path component is not a directory);
  //   PERMISSION_DENIED  the file may not be read;
  //   INVALID_ARGUMENT   a directory or anything else that is not a regular file;
  //   UNAVAILABLE        any other I/O failure (stat, mmap).
  // An empty file maps fine: size() is 0 and data() is null.
  // If the file shrinks while it is mapped, reads past its new end read zeros instead of
  // ending the process (base/guarded_mapping.h), damaged() turns true, and the execute that
  // read them fails with DATA_LOSS naming the file.
  static std::shared_ptr<const MappedFile> open(const std::string& path);
  // The same for a file the caller has opened (and checked: base/file_inside.h); `fd` is
  // only borrowed, `path` names it in messages.
  static std::shared_ptr<const MappedFile> map(int fd, const std::string& path);

  // The same interface over bytes in memory (a buffer the caller hands over, or a test's
  // image of a file). `path` only labels error messages.
  static std::shared_ptr<const MappedFile> from_bytes(std::string path, std::vector<uint8_t> bytes);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::string& path() const { return path_; }
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(size_)}; }
  // Whether [p, p + n) lies inside the file's bytes.
  bool contains(const void* p, uint64_t n) const;
  // Whether the bytes are an mmap of the file (not from_bytes' buffer).
  bool is_mapping() const { return mapped_; }
  // Whether a read found the file shorter than its mapping (its bytes past the end read as
  // zeros since).
  bool damaged() const;

 private:
  MappedFile(std::string path, const uint8_t* data, uint64_t size, bool mapped,
             std::vector<uint8_t> owned);

  std::string path_;
  const uint8_t* data_;
  uint64_t size_;
  bool mapped_;                 // data_ is an mmap to unmap, not owned_'s buffer
  std::vector<uint8_t> owned_;  // the bytes of from_bytes()
  std::unique_ptr<GuardedMapping> guard_;  // a mapping's, registered until it is unmapped
};

// A read-only tensor of the bytes at p in `file` (inside it: the caller checks), holding the
// mapping as long as it lives. Where p is aligned for dtype it is a view of the mapping,
// marked as file pages when the file is mapped, so the engine may release them once it has
// packed a copy (Tensor::drop_file_pages). Elsewhere (protobuf puts an ONNX initializer's
// bytes at any offset) it is a deferred aligned copy (Storage::deferred), made only if
// something reads the tensor in place rather than packing it; a copy drops the file pages
// it read.
Ref<Tensor> mapped_tensor(const std::shared_ptr<const MappedFile>& file, const uint8_t* p, DType dtype,
                          std::vector<int64_t> dims);

}  // namespace maxc

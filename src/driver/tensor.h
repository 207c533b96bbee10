// A typed, shaped, strided view of a Storage (MAX's driver Tensor). Views share storage;
// strides count elements, as in DLPack. Sub-byte dtypes are only ever contiguous.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/dtype.h"
#include "base/object.h"
#include "driver/storage.h"

namespace maxc {

constexpr int32_t kMaxRank = 64;

// Checks a shape (rank bound, no negative dim, no overflow of the element count or of its
// byte size) and returns the element count. Throws INVALID_ARGUMENT or RESOURCE_EXHAUSTED.
int64_t checked_num_elements(DType dtype, const std::vector<int64_t>& dims);
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims);

class Tensor : public Object {
 public:
  // A new contiguous tensor on `device`, zero-filled when asked.
  static Ref<Tensor> create(Ref<Device> device, DType dtype, std::vector<int64_t> dims,
                            bool zero = true);
  // A view of someone else's memory: `release` runs once when the last view goes away, and
  // never if this throws (the memory then stays the caller's).
  static Ref<Tensor> borrow(Ref<Device> device, void* data, uint64_t byte_offset, DType dtype,
                            std::vector<int64_t> dims, std::vector<int64_t> strides,
                            bool read_only, std::function<void()> release);
  // A view of existing storage. Empty strides mean contiguous.
  static Ref<Tensor> view_of(Ref<Storage> storage, uint64_t byte_offset, DType dtype,
                             std::vector<int64_t> dims, std::vector<int64_t> strides,
                             bool read_only);

  DType dtype() const { return dtype_; }
  int32_t rank() const { return static_cast<int32_t>(dims_.size()); }
  const std::vector<int64_t>& dims() const { return dims_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t num_elements() const { return num_elements_; }
  uint64_t byte_size() const { return dtype_bytes_for(dtype_, num_elements_); }
  bool is_contiguous() const;
  // Releases the resident pages of a contiguous view of file-mapped storage (see
  // Storage::mark_file_pages) after its bytes were copied elsewhere; otherwise does nothing.
  void drop_file_pages() const {
    if (storage_->file_pages() && is_contiguous()) maxc::drop_file_pages(data(), byte_size());
  }
  bool read_only() const { return read_only_; }
  const Ref<Device>& device() const { return storage_->device(); }
  const Ref<Storage>& storage() const { return storage_; }
  uint64_t byte_offset() const { return byte_offset_; }
  // Address of element 0 (host tensors).
  uint8_t* data() const { return static_cast<uint8_t*>(storage_->data()) + byte_offset_; }
  // Calls fn with element 0's address without keeping a deferred storage's copy (see
  // Storage::read): for bytes read once, as a weight is to pack it.
  void read(const std::function<void(const uint8_t*)>& fn) const {
    storage_->read([&](const void* base) { fn(static_cast<const uint8_t*>(base) + byte_offset_); });
  }

  // Throws FAILED_PRECONDITION naming `what` when the tensor is read-only.
  void check_writable(const char* what) const;
  // Throws FAILED_PRECONDITION naming `what` when the tensor is not in host memory.
  void check_host(const char* what) const;
  // Row-major copy of the elements into exactly byte_size() bytes at dst.
  void to_host(void* dst, size_t num_bytes) const;
  // A deep contiguous copy on `device` (any device to any device; see copy_from).
  Ref<Tensor> copy(const Ref<Device>& device) const;
  // Copies src's elements over this tensor's (same dtype and dims), between any devices.
  // Returns when the copy is done. UNIMPLEMENTED for a strided view of GPU memory.
  void copy_from(const Tensor& src);
  // The same bytes seen with another dtype and shape (`dims` null: keep the shape).
  Ref<Tensor> view(DType dtype, const std::vector<int64_t>* dims) const;

 private:
  void copy_with_device(const Tensor& src);
  Tensor(Ref<Storage> storage, uint64_t byte_offset, DType dtype, std::vector<int64_t> dims,
         std::vector<int64_t> strides, bool read_only);

  Ref<Storage> storage_;
  uint64_t byte_offset_;
  DType dtype_;
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;
  int64_t num_elements_;
  bool read_only_;
};

// Element-wise copy between two views of one shape, any strides (elements of elem_bytes).
void strided_copy(uint8_t* dst, const std::vector<int64_t>& dst_strides, const uint8_t* src,
                  const std::vector<int64_t>& src_strides, const std::vector<int64_t>& dims,
                  size_t elem_bytes);

// "[2, 3]" for messages.
std::string dims_to_string(const std::vector<int64_t>& dims);

}  // namespace maxc

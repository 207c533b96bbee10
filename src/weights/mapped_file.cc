#include "weights/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/guarded_mapping.h"
#include "driver/device.h"

namespace maxc {
namespace {

Code code_for_open_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Code::kNotFound;
    case EACCES:
    case EPERM:
      return Code::kPermissionDenied;
    case EISDIR:
      return Code::kInvalidArgument;
    default:
      return Code::kUnavailable;
  }
}

// Closes the descriptor on every path out of open(), including the throwing ones.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

MappedFile::MappedFile(std::string path, const uint8_t* data, uint64_t size, bool mapped,
                       std::vector<uint8_t> owned)
    : path_(std::move(path)), data_(data), size_(size), mapped_(mapped), owned_(std::move(owned)) {}

MappedFile::~MappedFile() {
  guard_.reset();  // before the pages go, so no fault there can be taken for ours
  if (mapped_) ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_));
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    fail(code_for_open_errno(err), "cannot open weights file '", path, "': ", std::strerror(err));
  }
  FdCloser closer{fd};
  return map(fd, path);
}

std::shared_ptr<const MappedFile> MappedFile::map(int fd, const std::string& path) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    fail(Code::kUnavailable, "cannot stat weights file '", path, "': ", std::strerror(err));
  }
  if (S_ISDIR(st.st_mode))
    fail(Code::kInvalidArgument, "weights file '", path, "' is a directory: ", std::strerror(EISDIR));
  if (!S_ISREG(st.st_mode))
    fail(Code::kInvalidArgument, "weights file '", path, "' is not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0)
    return std::shared_ptr<const MappedFile>(new MappedFile(path, nullptr, 0, false, {}));
  void* addr = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED) {
    int err = errno;
    fail(Code::kUnavailable, "cannot map weights file '", path, "': ", std::strerror(err));
  }
  try {
    std::shared_ptr<MappedFile> file(new MappedFile(path, static_cast<const uint8_t*>(addr), size, true, {}));
    file->guard_ = std::make_unique<GuardedMapping>(addr, size, path);
    return file;
  } catch (...) {
    ::munmap(addr, static_cast<size_t>(size));
    throw;
  }
}

std::shared_ptr<const MappedFile> MappedFile::from_bytes(std::string path, std::vector<uint8_t> bytes) {
  const uint8_t* data = bytes.empty() ? nullptr : bytes.data();
  const uint64_t size = bytes.size();
  // Moving a vector keeps its buffer, so `data` stays valid inside the object.
  return std::shared_ptr<const MappedFile>(
      new MappedFile(std::move(path), data, size, false, std::move(bytes)));
}

bool MappedFile::damaged() const { return guard_ && guard_->damaged(); }

bool MappedFile::contains(const void* p, uint64_t n) const {
  if (size_ == 0) return n == 0 && p == data_;
  const auto begin = reinterpret_cast<uintptr_t>(data_);
  const auto q = reinterpret_cast<uintptr_t>(p);
  return q >= begin && q - begin <= size_ && n <= size_ - (q - begin);
}

Ref<Tensor> mapped_tensor(const std::shared_ptr<const MappedFile>& file, const uint8_t* p, DType dtype,
                          std::vector<int64_t> dims) {
  if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(dtype_align(dtype)) != 0) {
    const size_t bytes = dtype_bytes_for(dtype, static_cast<uint64_t>(checked_num_elements(dtype, dims)));
    auto copy = Storage::deferred(bytes, [file, p, bytes](void* dst) {
      std::memcpy(dst, p, bytes);
      if (file->is_mapping()) drop_file_pages(p, bytes);
    });
    return Tensor::view_of(std::move(copy), 0, dtype, std::move(dims), {}, /*read_only=*/true);
  }
  Ref<Tensor> t = Tensor::borrow(Device::cpu(), const_cast<uint8_t*>(p), 0, dtype, std::move(dims), {},
                                 /*read_only=*/true, [hold = file]() mutable { hold.reset(); });
  if (file->is_mapping()) t->storage()->mark_file_pages();
  return t;
}

}  // namespace maxc

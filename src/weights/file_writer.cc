#include "weights/file_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/error.h"

namespace maxc {
namespace {

Code code_for_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Code::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return Code::kPermissionDenied;
    case ENOSPC:
    case EDQUOT:
      return Code::kResourceExhausted;
    default:
      return Code::kUnavailable;
  }
}

// Unique per process and call, so concurrent writers of one path do not share a temp file.
std::string temp_name(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

}  // namespace

FileWriter::FileWriter(std::string path) : path_(std::move(path)), temp_path_(temp_name(path_)) {
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail_io("create", errno);
}

FileWriter::~FileWriter() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(temp_path_.c_str());
}

void FileWriter::fail_io(const char* action, int err) const {
  fail(code_for_errno(err), "cannot ", action, " weights file '", path_, "': ", std::strerror(err));
}

void FileWriter::write(std::span<const uint8_t> bytes) {
  const uint8_t* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io("write", errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
    offset_ += static_cast<uint64_t>(n);
  }
}

void FileWriter::pad_to(uint64_t alignment) {
  static constexpr uint8_t kZeros[64] = {};
  uint64_t pad = (alignment - offset_ % alignment) % alignment;
  while (pad > 0) {
    const uint64_t n = pad < sizeof kZeros ? pad : sizeof kZeros;
    write(std::span(kZeros, static_cast<size_t>(n)));
    pad -= n;
  }
}

// No fsync: the rename makes the file appear whole to readers; surviving a power cut is
// the caller's business and would slow every test that writes a file.
void FileWriter::commit() {
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(temp_path_.c_str());
    fail_io("close", err);
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(temp_path_.c_str());
    fail_io("rename the finished", err);
  }
}

}  // namespace maxc

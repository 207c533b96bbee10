// Files beside files: a file that another file names (an ONNX model's external data, a
// sharded safetensors index's shards) is opened only if it lies inside the naming file's
// folder, symlinks included. One implementation for every format, so they refuse alike.
//
// How: the name is opened relative to a descriptor of the folder (openat), and the check is
// made on what was opened, not on the name: the kernel's path of the opened descriptor
// (/proc/self/fd/N) must lie under the kernel's path of the folder's descriptor. The caller
// then reads through the same descriptor, so a symlink swapped in between the check and the
// read cannot redirect it (no time-of-check/time-of-use gap). A symlink whose target stays
// inside the folder is fine, as ONNX Runtime allows it. Why not the alternatives:
// openat2(RESOLVE_BENEATH) does this in one call but needs Linux 5.6 and is refused by many
// container seccomp profiles; an O_NOFOLLOW walk refuses every symlink, even those that stay
// inside; canonicalising the name and opening it again leaves a gap for a swap. Without
// /proc (not Linux) nothing can be checked, and the file is refused (UNAVAILABLE).
//
// Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <string>

namespace maxc {

// An owned file descriptor, closed once.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// A regular file, open for reading, that lies inside the folder it was named from.
struct FileInside {
  UniqueFd fd;
  std::string path;   // where it really is (symlinks resolved), for messages
  uint64_t size = 0;  // at open
};

// Opens `name`, relative to the folder `dir` ("" is the working directory), read-only.
// `what` says who names it, to start every message ("onnx: initializer 'w': external data
// location"); `dir_what` names the folder ("the model's directory"). Errors:
//   INVALID_ARGUMENT  an empty, absolute or NUL-holding name, one with a ".." part, one that
//                     resolves (through symlinks) outside `dir`, or not a regular file;
//   NOT_FOUND / PERMISSION_DENIED  the folder or the file cannot be opened;
//   UNAVAILABLE       /proc/self/fd cannot tell where the descriptor lies, or fstat fails.
FileInside open_file_inside(const std::string& dir, const std::string& name, const std::string& what,
                            const std::string& dir_what);

// Reads `bytes` bytes at `offset` of `file` into `dst`, through its descriptor; DATA_LOSS
// naming the file when it ends first (it shrank since it was opened).
void read_file_range(const FileInside& file, uint64_t offset, uint64_t bytes, void* dst, const std::string& what);

}  // namespace maxc

#include "base/file_inside.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/error.h"

namespace maxc {
namespace {

Code code_for_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR: return Code::kNotFound;
    case EACCES:
    case EPERM: return Code::kPermissionDenied;
    case ELOOP: return Code::kInvalidArgument;
    default: return Code::kUnavailable;
  }
}

// The name alone: refused before anything is opened, with the reason spelled out.
void check_name(const std::string& name, const std::string& what, const std::string& dir_what) {
  if (name.empty()) fail(Code::kInvalidArgument, what, " is empty");
  if (name.find('\0') != std::string::npos)
    fail(Code::kInvalidArgument, what, " \"", name.c_str(), "...\" holds a NUL byte");
  const std::filesystem::path p(name);
  if (p.is_absolute() || p.has_root_name() || p.has_root_directory())
    fail(Code::kInvalidArgument, what, " \"", name, "\" is absolute; a file outside ", dir_what, " is refused");
  for (const auto& part : p)
    if (part == "..")
      fail(Code::kInvalidArgument, what, " \"", name, "\" has a '..' part; a file outside ", dir_what, " is refused");
}

// Where the kernel says an open descriptor lies: the target of /proc/self/fd/N.
std::string path_of(int fd, const std::string& what) {
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  std::string buf(256, '\0');
  for (;;) {
    const ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size());
    if (n < 0) {
      const int err = errno;
      fail(Code::kUnavailable, what, ": cannot tell where the opened file lies (", link, ": ",
           std::strerror(err), "), so it is not read");
    }
    if (static_cast<size_t>(n) < buf.size()) return buf.substr(0, static_cast<size_t>(n));
    buf.resize(buf.size() * 2);
  }
}

bool lies_under(const std::string& path, const std::string& dir) {
  if (dir == "/") return path.size() > 1 && path[0] == '/';
  return path.size() > dir.size() + 1 && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

FileInside open_file_inside(const std::string& dir, const std::string& name, const std::string& what,
                            const std::string& dir_what) {
  check_name(name, what, dir_what);
  const std::string dir_name = dir.empty() ? "." : dir;
  UniqueFd dir_fd(::open(dir_name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() < 0) {
    const int err = errno;
    fail(code_for_errno(err), what, " \"", name, "\": cannot open ", dir_what, " \"", dir_name, "\": ",
         std::strerror(err));
  }
  // O_NONBLOCK: a FIFO planted under the name must not block the open; O_NOCTTY: nor may a
  // terminal become ours. Both are refused below, before any byte is read.
  UniqueFd fd(::openat(dir_fd.get(), name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    fail(code_for_errno(err), what, " \"", name, "\": cannot open it in ", dir_what, ": ", std::strerror(err));
  }
  const std::string base = path_of(dir_fd.get(), what);
  std::string real = path_of(fd.get(), what);
  if (!lies_under(real, base))
    fail(Code::kInvalidArgument, what, " \"", name, "\" resolves outside ", dir_what, " (", base, "): to ", real);
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) {
    const int err = errno;
    fail(Code::kUnavailable, what, " \"", name, "\": cannot stat it: ", std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) fail(Code::kInvalidArgument, what, " \"", name, "\" is not a regular file");
  return FileInside{std::move(fd), std::move(real), static_cast<uint64_t>(st.st_size)};
}

void read_file_range(const FileInside& file, uint64_t offset, uint64_t bytes, void* dst, const std::string& what) {
  auto* out = static_cast<uint8_t*>(dst);
  uint64_t done = 0;
  while (done < bytes) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(bytes - done, uint64_t{1} << 30));
    const ssize_t n = ::pread(file.fd.get(), out + done, chunk, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      fail(Code::kDataLoss, what, ": could not read ", bytes, " bytes at offset ", offset, " of \"", file.path,
           "\" (", err ? std::strerror(err) : "it ends first: it shrank since it was opened", ")");
    }
    done += static_cast<uint64_t>(n);
  }
}

}  // namespace maxc

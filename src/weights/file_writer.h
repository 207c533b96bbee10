// Writes a weights file so that readers never see half of it: the bytes go to a temporary
// file beside `path`, which replaces `path` only in commit(). A writer destroyed without
// commit() (an exception on the way) removes the temporary file and leaves `path` untouched.
//
// Errors name the path and the system's reason: NOT_FOUND (no such directory),
// PERMISSION_DENIED, RESOURCE_EXHAUSTED (disk full), UNAVAILABLE (any other I/O failure).
// Thread-safety: one thread per writer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace maxc {

class FileWriter {
 public:
  explicit FileWriter(std::string path);
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  ~FileWriter();

  void write(std::span<const uint8_t> bytes);
  void write(std::string_view text) {
    write(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  }
  // Zero bytes up to the next multiple of `alignment` (a power of two).
  void pad_to(uint64_t alignment);
  uint64_t offset() const { return offset_; }
  // Closes the temporary file and renames it over `path`.
  void commit();

 private:
  [[noreturn]] void fail_io(const char* action, int err) const;

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  uint64_t offset_ = 0;
};

}  // namespace maxc

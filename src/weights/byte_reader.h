// Bounds-checked little-endian reads through the bytes of a MappedFile, for the parsers of
// binary headers. Every read checks the bytes left first, so a length or count in a hostile
// file can never move the cursor past the end.
//
// Errors: DATA_LOSS "<path>: <context>: truncated at offset N: <what> needs K bytes, M left".
// Thread-safety: one reader per thread; the file itself may be shared.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "weights/mapped_file.h"

namespace maxc {

class ByteReader {
 public:
  explicit ByteReader(const MappedFile& file, uint64_t offset = 0) : file_(file), offset_(offset) {}

  const MappedFile& file() const { return file_; }
  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return offset_ < file_.size() ? file_.size() - offset_ : 0; }
  // What the bytes being read belong to ("tensor 'w' info"), for messages; empty: nothing.
  void set_context(std::string context) { context_ = std::move(context); }
  const std::string& context() const { return context_; }

  template <typename T>
  T read(const char* what) {
    static_assert(std::is_arithmetic_v<T>);
    T value;
    std::memcpy(&value, take(sizeof(T), what), sizeof(T));
    if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) value = swap_bytes(value);
    return value;
  }

  // `n` bytes as a view into the file.
  std::string_view read_bytes(uint64_t n, const char* what) {
    return {reinterpret_cast<const char*>(take(n, what)), static_cast<size_t>(n)};
  }
  void skip(uint64_t n, const char* what) { take(n, what); }

  // Throws DATA_LOSS naming the file, the context, the offset and `what`.
  [[noreturn]] void fail_at(uint64_t offset, std::string_view what) const;

 private:
  const uint8_t* take(uint64_t n, const char* what) {
    if (n > remaining()) fail_truncated(n, what);
    const uint8_t* p = file_.data() + offset_;
    offset_ += n;
    return p;
  }
  [[noreturn]] void fail_truncated(uint64_t n, const char* what) const;

  template <typename T>
  static T swap_bytes(T v) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    for (size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
    std::memcpy(&v, b, sizeof(T));
    return v;
  }

  const MappedFile& file_;
  uint64_t offset_;
  std::string context_;
};

}  // namespace maxc

// Helpers shared by the weights tests: a scratch directory, byte patterns, little-endian
// builders for hand-made files (error expectations: driver/test_util.h).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"
#include "driver/test_util.h"  // EXPECT_MAXC_ERROR
#include "weights/mapped_file.h"

namespace maxc::testing {

// A fresh directory, removed with everything in it at the end of the scope.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = ::testing::TempDir() + "maxc_weights_XXXXXX";
    char* made = ::mkdtemp(tmpl.data());
    if (!made) throw std::runtime_error("mkdtemp failed");
    dir_ = made;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline std::shared_ptr<const MappedFile> in_memory(const std::vector<uint8_t>& bytes, std::string name = "mem.bin") {
  return MappedFile::from_bytes(std::move(name), bytes);
}

// `n` bytes counting up from `seed`.
inline std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return out;
}

// Appends little-endian fields, for files written by hand.
class Bytes {
 public:
  template <typename T>
  Bytes& put(T v) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
    return *this;
  }
  Bytes& u32(uint32_t v) { return put(v); }
  Bytes& u64(uint64_t v) { return put(v); }
  Bytes& str(const std::string& s) { return u64(s.size()).raw(s); }
  Bytes& raw(const std::string& s) { return append(s.data(), s.size()); }
  Bytes& raw(const std::vector<uint8_t>& b) { return append(b.data(), b.size()); }
  Bytes& pad_to(size_t alignment) {
    while (bytes_.size() % alignment) bytes_.push_back(0);
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  // resize + memcpy rather than insert, which trips a false GCC 12 -Wstringop-overread.
  Bytes& append(const void* p, size_t n) {
    if (n == 0) return *this;
    const size_t at = bytes_.size();
    bytes_.resize(at + n);
    std::memcpy(bytes_.data() + at, p, n);
    return *this;
  }

  std::vector<uint8_t> bytes_;
};

// A safetensors image from a header text and data bytes.
inline std::vector<uint8_t> safetensors_image(const std::string& header, const std::vector<uint8_t>& data) {
  return Bytes().u64(header.size()).raw(header).raw(data).bytes();
}

}  // namespace maxc::testing

// Helpers shared by the serialization tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graph/test_util.h"
#include "serialize/format.h"
#include "serialize/reader.h"
#include "serialize/writer.h"

namespace maxc::testing {

inline TensorType f32(std::vector<Dim> dims) { return tensor(DType::kFloat32, std::move(dims)); }

// `n` bytes counting up from `seed`.
inline std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return out;
}

inline maxg::Header header_of(const std::vector<uint8_t>& file) { return maxg::decode_header(file.data()); }
inline void set_header(std::vector<uint8_t>& file, const maxg::Header& h) { maxg::encode_header(h, file.data()); }

// Runs `f`, which must throw maxc::Error with one of `codes`; returns the code it threw, or
// kOk when it did not throw.
template <typename F>
Code error_code(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return Code::kOk;
}

// A temporary file path removed at the end of the scope.
class TempPath {
 public:
  explicit TempPath(const std::string& name) {
    path_ = ::testing::TempDir() + "maxc_serialize_" + std::to_string(::getpid()) + "_" + name;
  }
  ~TempPath() { std::remove(path_.c_str()); }
  const std::string& str() const { return path_; }

 private:
  std::string path_;
};

}  // namespace maxc::testing

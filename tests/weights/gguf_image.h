// GGUF files built byte by byte from the format's description, independent of our writer.
#pragma once

#include <string>
#include <vector>

#include "test_util.h"

namespace maxc::testing {

class GgufImage {
 public:
  GgufImage& version(uint32_t v) {
    version_ = v;
    return *this;
  }
  GgufImage& alignment(size_t a) {
    alignment_ = a;
    return *this;
  }
  // One metadata pair whose value bytes the caller writes through `value`.
  template <typename F>
  GgufImage& kv(const std::string& key, uint32_t type, F&& value) {
    kv_.str(key).u32(type);
    value(kv_);
    ++n_kv_;
    return *this;
  }
  GgufImage& kv_u32(const std::string& key, uint32_t v) {
    return kv(key, 4, [&](Bytes& b) { b.u32(v); });
  }
  GgufImage& kv_str(const std::string& key, const std::string& v) {
    return kv(key, 8, [&](Bytes& b) { b.str(v); });
  }
  // ne in GGUF order (innermost first).
  GgufImage& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    ti_.str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t n : ne) ti_.u64(n);
    ti_.u32(type).u64(offset);
    ++n_t_;
    return *this;
  }
  GgufImage& data(std::vector<uint8_t> d) {
    data_ = std::move(d);
    return *this;
  }
  // Overrides the counts written in the header (for lying headers).
  GgufImage& counts(uint64_t tensors, uint64_t kvs) {
    n_t_ = tensors;
    n_kv_ = kvs;
    return *this;
  }

  std::vector<uint8_t> build() const {
    Bytes b;
    b.raw("GGUF").u32(version_).u64(n_t_).u64(n_kv_).raw(kv_.bytes()).raw(ti_.bytes()).pad_to(alignment_).raw(data_);
    return b.bytes();
  }

 private:
  uint32_t version_ = 3;
  size_t alignment_ = 32;
  Bytes kv_, ti_;
  uint64_t n_kv_ = 0, n_t_ = 0;
  std::vector<uint8_t> data_;
};

}  // namespace maxc::testing

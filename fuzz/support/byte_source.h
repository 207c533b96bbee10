// Choices drawn from the fuzzer's bytes, front to back; zeros once they run out, so every
// input is a complete recipe. (libFuzzer's FuzzedDataProvider is clang-only; the replay
// tests build with gcc.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace maxfuzz {

class ByteSource {
 public:
  ByteSource(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  uint8_t byte() { return p_ == end_ ? 0 : *p_++; }
  // A number in [0, n) (0 for n == 0).
  size_t below(size_t n) {
    if (n <= 1) return 0;
    size_t v = 0;
    for (size_t range = n - 1; range; range >>= 8) v = (v << 8) | byte();
    return v % n;
  }
  bool coin() { return byte() & 1; }
  template <typename T, size_t N>
  const T& one_of(const T (&values)[N]) { return values[below(N)]; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace maxfuzz

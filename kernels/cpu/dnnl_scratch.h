// How one kernel call carves the per-call scratch it asked for (KernelArgs::scratch, 64-byte
// aligned) into its pieces: converted copies of operands, reordered filters and oneDNN's own
// scratchpad (we run oneDNN in user scratchpad mode so that concurrent calls never share it).
#pragma once

#include <cstdint>
#include <optional>

#include "base/checked_math.h"
#include "base/error.h"

namespace maxc::cpu {

class ScratchLayout {
 public:
  static constexpr uint64_t kAlign = 64;

  // Reserves `bytes` and returns the piece's offset; zero bytes reserve nothing. Each piece
  // fits the element limit, their sum may not: RESOURCE_EXHAUSTED rather than a size that wraps.
  uint64_t add(uint64_t bytes) {
    const uint64_t offset = size_;
    const std::optional<uint64_t> padded = checked_add(bytes, kAlign - 1);
    const std::optional<uint64_t> end = padded ? checked_add(size_, *padded / kAlign * kAlign) : std::nullopt;
    if (!end) fail(Code::kResourceExhausted, "a kernel's scratch needs more than 2^64 bytes");
    size_ = *end;
    return offset;
  }
  uint64_t size() const { return size_; }

  template <typename T>
  static T* at(void* scratch, uint64_t offset) {
    return reinterpret_cast<T*>(static_cast<char*>(scratch) + offset);
  }

 private:
  uint64_t size_ = 0;
};

}  // namespace maxc::cpu

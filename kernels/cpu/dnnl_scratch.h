// How one kernel call carves the per-call scratch it asked for (KernelArgs::scratch, 64-byte
// aligned) into its pieces: converted copies of operands, reordered filters and oneDNN's own
// scratchpad (we run oneDNN in user scratchpad mode so that concurrent calls never share it).
#pragma once

#include <cstdint>

namespace maxc::cpu {

class ScratchLayout {
 public:
  static constexpr uint64_t kAlign = 64;

  // Reserves `bytes` and returns the piece's offset; zero bytes reserve nothing.
  uint64_t add(uint64_t bytes) {
    const uint64_t offset = size_;
    size_ += (bytes + kAlign - 1) / kAlign * kAlign;
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

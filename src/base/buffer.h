// Immutable owned bytes (the ABI's max_buffer_t): serialized graphs, printed text. The
// bytes are always followed by a NUL that size() does not count, so text buffers can be
// read as C strings.
#pragma once

#include <cstdint>
#include <vector>

#include "base/object.h"

namespace maxc {

class Buffer : public Object {
 public:
  explicit Buffer(std::vector<uint8_t> bytes) : Object(ObjectKind::kBuffer), bytes_(std::move(bytes)) {
    bytes_.push_back(0);
  }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size() - 1; }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace maxc

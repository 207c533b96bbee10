// Immutable owned bytes (the ABI's max_buffer_t): serialized graphs and the like.
#pragma once

#include <cstdint>
#include <vector>

#include "base/object.h"

namespace maxc {

class Buffer : public Object {
 public:
  explicit Buffer(std::vector<uint8_t> bytes)
      : Object(ObjectKind::kBuffer), bytes_(std::move(bytes)) {}
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace maxc

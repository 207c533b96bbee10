// The data of a constant tensor. The bytes are shared and never copied by the graph: `data`
// is an aliasing shared_ptr, so its owner may be a std::vector, an mmap'd file segment or a
// buffer the serializer read, and copies of a graph share one copy of every weight.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "graph/type.h"

namespace maxc {

struct Constant {
  TensorType type;  // always static: the bytes fix the element count
  std::shared_ptr<const uint8_t> data;
  size_t size = 0;  // bytes

  std::span<const uint8_t> bytes() const { return {data.get(), size}; }

  // An owning copy of `bytes`.
  static Constant copy_of(TensorType type, std::span<const uint8_t> bytes);

  // INVALID_ARGUMENT unless the type is valid and static and `size` is exactly the bytes its
  // elements take. `what` names the constant in the message.
  void validate(const std::string& what) const;

  // The single element of a one-element integer, bool, float32 or float64 constant, when it
  // converts exactly; nullopt otherwise (ops then ask for the value as an attribute).
  std::optional<int64_t> scalar_int() const;
  std::optional<double> scalar_float() const;
};

}  // namespace maxc

// An ordered list of tensors (the ABI's max_tensor_list_t): a model's outputs, say.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/object.h"
#include "driver/tensor.h"

namespace maxc {

class TensorList : public Object {
 public:
  TensorList() : Object(ObjectKind::kTensorList) {}
  std::vector<Ref<Tensor>> items;
};

// Tensors by name, in a caller's order: weights to bind, inputs to execute by name.
using NamedTensors = std::vector<std::pair<std::string, Ref<Tensor>>>;

}  // namespace maxc

// A compiled model with its weights bound (MAX's Model). Thread-safe: concurrent executes
// share the weights through a snapshot, so a reload swaps them without disturbing calls
// already running.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/object.h"
#include "driver/tensor.h"
#include "driver/tensor_list.h"
#include "engine/bound_weights.h"
#include "engine/compiled_model.h"
#include "weights/registry.h"

namespace maxc {

class Model : public Object {
 public:
  // Binds every weight the graph declares: from `weights` first, then from the weights that
  // came with the compiled model's file (ONNX initializers). NOT_FOUND names a weight neither
  // has; INVALID_ARGUMENT an unknown name, a repeat, or a dtype or shape that differs from
  // the declaration. A weight on another device than the model's is copied to it, once.
  static Ref<Model> create(Ref<CompiledModel> compiled, const NamedTensors& weights);

  // As above, each declared weight taken by name from `registry` where it has one; the
  // registry's other tensors are ignored.
  static Ref<Model> create(Ref<CompiledModel> compiled, const WeightsRegistry& registry);

  const Ref<CompiledModel>& compiled() const { return compiled_; }

  // Inputs by position, on the model's device. Checks them all before any kernel runs (see
  // bind_inputs). The outputs are on the model's device, their values final.
  std::vector<Ref<Tensor>> execute(std::span<const Ref<Tensor>> inputs) const;
  // Inputs by name, in any order.
  std::vector<Ref<Tensor>> execute_named(const NamedTensors& inputs) const;
  // Replaces the named weights; the others stay. All-or-nothing.
  void reload(const NamedTensors& weights);
  // Replaces every declared weight that `registry` has. All-or-nothing.
  void reload(const WeightsRegistry& registry);

 private:
  using Weights = std::vector<Ref<Tensor>>;  // in the program's weight order
  Model(Ref<CompiledModel> compiled, std::shared_ptr<const BoundWeights> weights);
  // `base` plus `updates`, checked; with `require_all`, every weight must be named.
  Weights merge(const Weights& base, const NamedTensors& updates, bool require_all) const;
  std::shared_ptr<const BoundWeights> snapshot() const;

  Ref<CompiledModel> compiled_;
  mutable std::mutex mu_;
  std::shared_ptr<const BoundWeights> weights_;
};

}  // namespace maxc

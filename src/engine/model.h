// A compiled model with its weights bound (MAX's Model). Thread-safe: concurrent executes
// share the weights through a snapshot, so a reload swaps them without disturbing calls
// already running.
#pragma once

#include <map>
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
#include "engine/captured_graph.h"
#include "engine/compiled_model.h"
#include "engine/lru_cache.h"
#include "engine/plan_binding.h"
#include "weights/registry.h"

namespace maxc {

class Model : public Object {
 public:
  // Binds every weight the graph declares: from `weights` first, then from the weights that
  // came with the compiled model's file (ONNX initializers). NOT_FOUND names a weight neither
  // has; INVALID_ARGUMENT an unknown name, a repeat, or a dtype or shape that differs from
  // the declaration. A weight on another device than the model's is copied to it, once.
  // A compiled model that specializes on input values binds its weights to the model of
  // each set of values, when that is first run.
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

  // MAX's device graphs (engine/captured_graph.h). `keys` holds one key per device of the
  // model, so one; the caller picks it. capture runs the model on `inputs` as execute does,
  // recording the run under the key (replacing what it held), and returns the outputs, which
  // every replay of the key rewrites in place. The graph keeps the weights it was captured
  // with: a reload applies to graphs captured after it.
  std::vector<Ref<Tensor>> capture(std::span<const uint64_t> keys, std::span<const Ref<Tensor>> inputs);
  // Runs the graph of the key on `inputs`, which must have the shapes it was captured with
  // (INVALID_ARGUMENT otherwise); FAILED_PRECONDITION when nothing is captured under the key.
  void replay(std::span<const uint64_t> keys, std::span<const Ref<Tensor>> inputs) const;
  // Runs the model eagerly on `inputs` and checks that it launches what the graph of the key
  // recorded, in order: FAILED_PRECONDITION naming the first difference, or when nothing is
  // captured under the key.
  void debug_verify_replay(std::span<const uint64_t> keys, std::span<const Ref<Tensor>> inputs) const;

 private:
  using Weights = std::vector<Ref<Tensor>>;  // in the program's weight order
  Model(Ref<CompiledModel> compiled, std::shared_ptr<const BoundWeights> weights);
  // `base` plus `updates`, checked; with `require_all`, every weight must be named.
  Weights merge(const Weights& base, const NamedTensors& updates, bool require_all) const;
  std::shared_ptr<const BoundWeights> snapshot() const;
  // The plan for these symbols bound to the current weights: made once per shape and
  // snapshot (planning, packing weights), then found under the one lock an execute takes.
  std::shared_ptr<const PlanBinding> binding_for(const SymbolValues& symbols) const;
  // The graph captured under `keys`, its inputs checked against the capture's shapes.
  std::shared_ptr<const CapturedGraph> captured(std::span<const uint64_t> keys, std::span<const Ref<Tensor>> inputs,
                                                std::vector<Ref<Tensor>>& dense) const;
  // The position of weight `name` among the compiled model's; INVALID_ARGUMENT listing them
  // when it has no such weight.
  size_t weight_index(const std::string& name) const;
  // Checks `tensor` against weight `name`'s declaration (name, dtype, shape).
  void check_given_weight(const std::string& name, const Ref<Tensor>& tensor) const;
  // A specializing model's weights checked against its signature, `base` updated by them.
  NamedTensors checked_weights(NamedTensors base, const NamedTensors& updates) const;
  // The model of a specializing compiled model for these inputs' values; *rest gets the
  // inputs it takes.
  Ref<Model> specialized(std::span<const Ref<Tensor>> inputs, std::vector<Ref<Tensor>>* rest) const;
  void refuse_capture() const;
  // execute without the check below.
  std::vector<Ref<Tensor>> execute_unchecked(std::span<const Ref<Tensor>> inputs) const;
  // DATA_LOSS naming the file when a file this model reads in place (a weight's, a MAXG
  // constant's) shrank under its mapping: ever, or during this call (faults_before).
  void check_mapped_files(uint64_t faults_before) const;
  // A staged compiled model (CompiledModel::stages): each stage planned for the symbols the
  // inputs and the earlier stages' counts bind.
  std::vector<Ref<Tensor>> execute_in_stages(std::span<const Ref<Tensor>> inputs) const;

  Ref<CompiledModel> compiled_;
  mutable std::mutex mu_;
  std::shared_ptr<const BoundWeights> weights_;
  // The bindings of weights_ to the plans of the shapes run since it was installed, as many
  // as the compiled model keeps plans; a reload clears them.
  mutable LruCache<SymbolValues, std::shared_ptr<const PlanBinding>> bindings_;  // under mu_
  std::map<uint64_t, std::shared_ptr<const CapturedGraph>> graphs_;  // under mu_
  // A specializing model's: the weights given, and the model of each compiled specialization.
  NamedTensors given_;                                                       // under mu_
  mutable std::map<const CompiledModel*, std::pair<Ref<CompiledModel>, Ref<Model>>> specialized_;  // under mu_
};

}  // namespace maxc

#include "engine/model.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "base/guarded_mapping.h"
#include "base/str_cat.h"
#include "driver/device.h"
#include "engine/executor.h"
#include "engine/input_binding.h"
#include "engine/launch_trace.h"
#include "engine/plan_binding.h"

namespace maxc {

namespace {

// A dense tensor on `device` for `t`: itself when it already is one, else a packed copy.
Ref<Tensor> dense_on(const Ref<Tensor>& t, const Ref<Device>& device) {
  if (t->device().get() == device.get() && t->is_contiguous()) return t;
  return t->copy(device);
}

void check_weight(const std::string& name, const TensorType& want, const Tensor& t) {
  std::vector<int64_t> dims;
  for (const Dim& d : want.dims) dims.push_back(d.static_value());
  if (t.dtype() != want.dtype || t.dims() != dims)
    fail(Code::kInvalidArgument, "weight '", name, "' is ", dtype_name(t.dtype()), dims_to_string(t.dims()),
         " but the graph declares ", dtype_name(want.dtype), dims_to_string(dims));
}

// The declared weights that `registry` has, by name.
NamedTensors declared_in(const CompiledModel& c, const WeightsRegistry& registry) {
  NamedTensors result;
  for (const auto& w : c.weights())
    if (registry.contains(w->name())) result.emplace_back(w->name(), registry.tensor(w->name()));
  return result;
}

// The entries of `weights` that `c` declares.
NamedTensors declared_by(const CompiledModel& c, const NamedTensors& weights) {
  NamedTensors result;
  for (const auto& [name, t] : weights)
    for (const auto& w : c.weights())
      if (w->name() == name) result.emplace_back(name, t);
  return result;
}

// What a run reads of the caller's inputs, checked (bind_inputs) and dense on the model's
// device. Where the compiled model copies inputs, one on another device is copied there
// first; otherwise bind_inputs refuses it by name. When every input is dense on the device
// already, `dense` is the caller's list itself: the common call copies nothing.
class CheckedInputs {
 public:
  CheckedInputs(std::span<const Ref<Tensor>> given, const CompiledModel& c);
  // `dense` may point into `copies_`.
  CheckedInputs(const CheckedInputs&) = delete;
  CheckedInputs& operator=(const CheckedInputs&) = delete;

  SymbolValues symbols;
  std::span<const Ref<Tensor>> dense;

 private:
  std::vector<Ref<Tensor>> copies_;  // every input as read, once some had to be copied
};

CheckedInputs::CheckedInputs(std::span<const Ref<Tensor>> given, const CompiledModel& c) : dense(given) {
  auto elsewhere = [&c](const Ref<Tensor>& t) { return t && t->device().get() != c.device().get(); };
  if (c.copies_inputs() && std::any_of(given.begin(), given.end(), elsewhere)) {
    copies_.assign(given.begin(), given.end());
    for (auto& t : copies_)
      if (elsewhere(t)) t = t->copy(c.device());
    dense = copies_;
  }
  symbols = bind_inputs(c.program(), dense, *c.device());
  if (std::all_of(dense.begin(), dense.end(), [](const Ref<Tensor>& t) { return t->is_contiguous(); })) return;
  std::vector<Ref<Tensor>> packed;
  for (const auto& t : dense) packed.push_back(dense_on(t, c.device()));
  copies_ = std::move(packed);
  dense = copies_;
}

std::vector<const void*> addresses_of(std::span<const Ref<Tensor>> tensors) {
  std::vector<const void*> addresses;
  for (const auto& t : tensors) addresses.push_back(t->data());
  return addresses;
}

// Each symbol whose source the stages have computed (or the program's inputs and constants
// hold), read on the host.
void bind_computed_symbols(const Program& p, const std::map<ValueId, Ref<Tensor>>& computed, SymbolValues& symbols) {
  for (const SymbolSource& source : p.symbol_sources) {
    if (symbols.contains(source.symbol)) continue;
    const size_t offset = static_cast<size_t>(source.element) * sizeof(int64_t);
    int64_t value = 0;
    if (auto it = computed.find(source.value); it != computed.end()) {
      std::memcpy(&value, it->second->copy(Device::cpu())->data() + offset, sizeof value);
    } else {
      auto c = std::find_if(p.constants.begin(), p.constants.end(),
                            [&](const ProgramConstant& k) { return k.value == source.value; });
      if (c == p.constants.end()) continue;
      std::memcpy(&value, c->data.bytes().data() + offset, sizeof value);
    }
    if (value < 0)
      fail(Code::kInvalidArgument, "dim '", source.symbol, "' is computed as ", value,
           " when the model runs; a dim must be >= 0");
    symbols.emplace(source.symbol, value);
  }
}

uint64_t graph_key(std::span<const uint64_t> keys, const Device& device) {
  if (keys.size() != 1)
    fail(Code::kInvalidArgument, "graph_keys has ", keys.size(), " keys but the model runs on one device (",
         device.name(), "), which takes one");
  return keys[0];
}

std::string symbols_text(const SymbolValues& symbols) {
  std::string text;
  for (const auto& [name, value] : symbols) text += str_cat(text.empty() ? "" : ", ", name, "=", value);
  return text;
}

}  // namespace

Model::Model(Ref<CompiledModel> compiled, std::shared_ptr<const BoundWeights> weights)
    : Object(ObjectKind::kModel), compiled_(std::move(compiled)), weights_(std::move(weights)) {}

size_t Model::weight_index(const std::string& name) const {
  const std::vector<Ref<TensorSpec>>& specs = compiled_->weights();
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i]->name() == name) return i;
  std::string known;
  for (const auto& w : specs) known += (known.empty() ? "" : ", ") + w->name();
  fail(Code::kInvalidArgument, "weight '", name, "' is not a weight of this model (it has: ",
       known.empty() ? "none" : known, ")");
}

void Model::check_given_weight(const std::string& name, const Ref<Tensor>& tensor) const {
  const TensorSpec& spec = *compiled_->weights()[weight_index(name)];
  if (!tensor) fail(Code::kInvalidArgument, "weight '", name, "' is NULL");
  check_weight(name, spec.type(), *tensor);
}

Model::Weights Model::merge(const Weights& base, const NamedTensors& updates, bool require_all) const {
  const std::vector<Ref<TensorSpec>>& specs = compiled_->weights();
  Weights result = base;
  result.resize(specs.size());
  std::vector<bool> given(specs.size(), false);
  for (const auto& [name, tensor] : updates) {
    const size_t i = weight_index(name);
    if (given[i]) fail(Code::kInvalidArgument, "weight '", name, "' is given twice");
    check_given_weight(name, tensor);
    given[i] = true;
    // A weight from any device is copied to the model's once, here: the caller keeps theirs.
    result[i] = dense_on(tensor, compiled_->device());
  }
  if (require_all)
    for (size_t i = 0; i < given.size(); ++i)
      if (!given[i])
        fail(Code::kNotFound, "weight '", specs[i]->name(), "' (", specs[i]->type(),
             ") is declared by the graph but was not given");
  return result;
}

NamedTensors Model::checked_weights(NamedTensors base, const NamedTensors& updates) const {
  for (const auto& [name, tensor] : updates) {
    check_given_weight(name, tensor);
    const std::string& wanted = name;  // clang 14 cannot capture a structured binding
    auto same = std::find_if(base.begin(), base.end(), [&](const auto& w) { return w.first == wanted; });
    if (same != base.end()) same->second = tensor;
    else base.emplace_back(name, tensor);
  }
  return base;
}

Ref<Model> Model::specialized(std::span<const Ref<Tensor>> inputs, std::vector<Ref<Tensor>>* rest) const {
  Ref<CompiledModel> compiled = compiled_->specialized(inputs, rest);
  std::lock_guard lock(mu_);
  auto it = specialized_.find(compiled.get());
  if (it != specialized_.end()) return it->second.second;
  // No more than the compiled model keeps specializations: past that, start over.
  if (specialized_.size() >= static_cast<size_t>(compiled_->settings().plan_cache_capacity)) specialized_.clear();
  Ref<Model> model = create(compiled, declared_by(*compiled, given_));
  specialized_.emplace(compiled.get(), std::make_pair(compiled, model));
  return model;
}

void Model::refuse_capture() const {
  if (!compiled_->stages().empty())
    fail(Code::kUnimplemented, "a model whose dims depend on data (a nonzero's count, a shape computed from ",
                               "values) runs in stages, planned as each count is known, and is not captured as one ",
                               "device graph");
  if (compiled_->specializes())
    fail(Code::kUnimplemented, "a model whose graph depends on input values is compiled per set of them, and is "
                               "not captured as one device graph");
  if (compiled_->device()->is_host()) return;
  for (const Node& n : compiled_->program().nodes)
    if (!n.regions.empty())
      fail(Code::kUnimplemented, "op '", n.op, "' reads its predicate on the host between device steps, so a model "
                                 "that holds it is not captured as one device graph");
}

Ref<Model> Model::create(Ref<CompiledModel> compiled, const NamedTensors& weights) {
  if (compiled->specializes()) {
    auto model = Ref<Model>::adopt(new Model(std::move(compiled), nullptr));
    model->given_ = model->checked_weights({}, weights);
    return model;
  }
  NamedTensors all = weights;
  for (const auto& bundled : compiled->bundled_weights()) {
    bool given = false;
    for (const auto& w : weights) given = given || w.first == bundled.first;
    if (!given) all.push_back(bundled);
  }
  auto model = Ref<Model>::adopt(new Model(std::move(compiled), nullptr));
  model->weights_ = std::make_shared<const BoundWeights>(model->merge({}, all, /*require_all=*/true));
  return model;
}

Ref<Model> Model::create(Ref<CompiledModel> compiled, const WeightsRegistry& registry) {
  NamedTensors weights = declared_in(*compiled, registry);
  return create(std::move(compiled), weights);
}

void Model::reload(const WeightsRegistry& registry) { reload(declared_in(*compiled_, registry)); }

void Model::reload(const NamedTensors& weights) {
  if (compiled_->specializes()) {
    std::lock_guard lock(mu_);
    given_ = checked_weights(given_, weights);
    specialized_.clear();  // each is bound again, with these, when next run
    return;
  }
  // Merged outside the lock (it may copy weights to the device) onto the snapshot it read;
  // installed only if that is still the model's, else merged again onto the newer one, so
  // two reloads of different weights at once both take effect, in some order.
  for (;;) {
    const std::shared_ptr<const BoundWeights> base = snapshot();
    auto next = std::make_shared<const BoundWeights>(merge(base->tensors(), weights, /*require_all=*/false));
    std::lock_guard lock(mu_);
    if (weights_ != base) continue;
    weights_ = std::move(next);
    bindings_ = {};  // bound to the old weights; calls running on them hold their own
    return;
  }
}

std::shared_ptr<const BoundWeights> Model::snapshot() const {
  std::lock_guard lock(mu_);
  return weights_;
}

std::shared_ptr<const PlanBinding> Model::binding_for(const SymbolValues& symbols) const {
  std::shared_ptr<const BoundWeights> weights;
  {
    std::lock_guard lock(mu_);
    if (const std::shared_ptr<const PlanBinding>* cached = bindings_.find(symbols)) return *cached;
    weights = weights_;
  }
  // Planned and packed outside the lock, which every execute takes: two threads meeting a new
  // shape at once may both bind it, and one binding is kept.
  auto binding = std::make_shared<const PlanBinding>(compiled_, compiled_->plan_for(symbols), weights);
  std::lock_guard lock(mu_);
  // A reload since the weights were read: this binding serves this call only.
  if (weights_ == weights && !bindings_.find(symbols))
    bindings_.put(symbols, binding, static_cast<size_t>(compiled_->settings().plan_cache_capacity));
  return binding;
}

std::vector<Ref<Tensor>> Model::execute(std::span<const Ref<Tensor>> given) const {
  const uint64_t faults_before = mapping_fault_count();
  std::vector<Ref<Tensor>> outputs = execute_unchecked(given);
  check_mapped_files(faults_before);
  return outputs;
}

// A weights file that shrank under its mapping read as zeros (base/guarded_mapping.h): the
// call fails rather than return what it computed from them. One atomic load when no mapped
// file ever shrank.
void Model::check_mapped_files(uint64_t faults_before) const {
  if (mapping_fault_count() == 0) return;
  const std::vector<Ref<Tensor>>& weights = snapshot()->tensors();
  const auto& declared = compiled_->program().weights;
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::string error = mapping_damage_error(weights[i]->data(), weights[i]->byte_size());
    if (!error.empty())
      fail(Code::kDataLoss, "weight '", i < declared.size() ? declared[i].name : std::to_string(i), "': ", error);
  }
  // A MAXG file's data segment: its constants are read in place on the host.
  const auto& constants = compiled_->program().constants;
  const std::span<const void* const> addresses = compiled_->constant_addresses();
  for (size_t i = 0; i < constants.size() && i < addresses.size(); ++i) {
    const std::string error = mapping_damage_error(addresses[i], constants[i].data.size);
    if (!error.empty()) fail(Code::kDataLoss, "constant ", i, " of the model: ", error);
  }
  if (mapping_fault_count() != faults_before) {
    const std::string error = any_mapping_damage_error();
    if (!error.empty()) fail(Code::kDataLoss, "a file this model reads in place: ", error);
  }
}

std::vector<Ref<Tensor>> Model::execute_unchecked(std::span<const Ref<Tensor>> given) const {
  if (compiled_->specializes()) {
    std::vector<Ref<Tensor>> rest;
    Ref<Model> model = specialized(given, &rest);
    return model->execute(rest);
  }
  if (!compiled_->stages().empty()) return execute_in_stages(given);
  const CheckedInputs inputs(given, *compiled_);
  const std::shared_ptr<const PlanBinding> binding = binding_for(inputs.symbols);
  return run_plan(*binding->plan, compiled_->program(), binding->args({}), inputs.dense);
}

std::vector<Ref<Tensor>> Model::execute_in_stages(std::span<const Ref<Tensor>> given) const {
  CheckedInputs inputs(given, *compiled_);
  const Program& whole = compiled_->program();
  const std::shared_ptr<const BoundWeights> weights = snapshot();
  std::map<ValueId, Ref<Tensor>> computed;  // the stages' outputs so far, and the inputs
  for (size_t i = 0; i < whole.inputs.size(); ++i) computed[whole.inputs[i].value] = inputs.dense[i];
  for (size_t k = 0; k < compiled_->stages().size(); ++k) {
    const Program& stage = compiled_->stages()[k];
    std::vector<const void*> in = addresses_of(inputs.dense);
    for (size_t i = whole.inputs.size(); i < stage.inputs.size(); ++i) in.push_back(computed.at(stage.inputs[i].value)->data());
    const PlanBinding binding(compiled_, compiled_->plan_for(inputs.symbols, k), weights);
    std::vector<Ref<Tensor>> outs = run_plan(*binding.plan, stage, binding.args(in));
    for (size_t j = 0; j < outs.size(); ++j) computed[stage.outputs[j].value] = std::move(outs[j]);
    bind_computed_symbols(whole, computed, inputs.symbols);
  }
  std::vector<Ref<Tensor>> outputs;
  for (const auto& out : whole.outputs) outputs.push_back(computed.at(out.value));
  return outputs;
}

std::vector<Ref<Tensor>> Model::capture(std::span<const uint64_t> keys, std::span<const Ref<Tensor>> given) {
  refuse_capture();
  const uint64_t key = graph_key(keys, *compiled_->device());
  CheckedInputs inputs(given, *compiled_);
  PlanBinding binding(compiled_, compiled_->plan_for(inputs.symbols), snapshot());
  std::shared_ptr<const CapturedGraph> graph =
      CapturedGraph::capture(std::move(binding), std::move(inputs.symbols), inputs.dense);
  std::lock_guard lock(mu_);
  graphs_[key] = graph;
  return graph->outputs();
}

std::shared_ptr<const CapturedGraph> Model::captured(std::span<const uint64_t> keys,
                                                     std::span<const Ref<Tensor>> given,
                                                     std::vector<Ref<Tensor>>& dense) const {
  refuse_capture();
  const uint64_t key = graph_key(keys, *compiled_->device());
  std::shared_ptr<const CapturedGraph> graph;
  {
    std::lock_guard lock(mu_);
    auto it = graphs_.find(key);
    if (it == graphs_.end()) fail(Code::kFailedPrecondition, "nothing is captured under graph key ", key);
    graph = it->second;
  }
  const CheckedInputs inputs(given, *compiled_);
  if (inputs.symbols != graph->symbols())
    fail(Code::kInvalidArgument, "the inputs bind ", symbols_text(inputs.symbols), " but graph key ", key,
         " was captured with ", symbols_text(graph->symbols()));
  dense.assign(inputs.dense.begin(), inputs.dense.end());
  return graph;
}

void Model::replay(std::span<const uint64_t> keys, std::span<const Ref<Tensor>> inputs) const {
  std::vector<Ref<Tensor>> dense;
  captured(keys, inputs, dense)->replay(dense);
}

void Model::debug_verify_replay(std::span<const uint64_t> keys, std::span<const Ref<Tensor>> inputs) const {
  std::vector<Ref<Tensor>> dense;
  std::shared_ptr<const CapturedGraph> graph = captured(keys, inputs, dense);
  LaunchTrace trace;
  execute(dense);
  expect_same_launches(trace.entries(), graph->trace(), str_cat("graph key ", keys[0]));
}

std::vector<Ref<Tensor>> Model::execute_named(const NamedTensors& inputs) const {
  const std::vector<Ref<TensorSpec>>& specs = compiled_->inputs();
  std::vector<Ref<Tensor>> ordered(specs.size());
  for (const auto& [name, tensor] : inputs) {
    size_t k = 0;
    while (k < specs.size() && specs[k]->name() != name) ++k;
    if (k == specs.size()) fail(Code::kNotFound, "the model has no input named '", name, "'");
    if (ordered[k]) fail(Code::kInvalidArgument, "input '", name, "' is given twice");
    if (!tensor) fail(Code::kInvalidArgument, "input '", name, "' is NULL");
    ordered[k] = tensor;
  }
  for (size_t k = 0; k < specs.size(); ++k)
    if (!ordered[k]) fail(Code::kInvalidArgument, "input '", specs[k]->name(), "' is missing");
  return execute(ordered);
}

}  // namespace maxc

#include "engine/model.h"

#include <map>

#include "driver/device.h"
#include "engine/executor.h"
#include "engine/input_binding.h"
#include "kernels/cpu/parallel.h"

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
NamedTensors declared_in(const Program& p, const WeightsRegistry& registry) {
  NamedTensors result;
  for (const auto& w : p.weights)
    if (registry.contains(w.name)) result.emplace_back(w.name, registry.tensor(w.name));
  return result;
}

}  // namespace

Model::Model(Ref<CompiledModel> compiled, std::shared_ptr<const BoundWeights> weights)
    : Object(ObjectKind::kModel), compiled_(std::move(compiled)), weights_(std::move(weights)) {}

Model::Weights Model::merge(const Weights& base, const NamedTensors& updates, bool require_all) const {
  const Program& p = compiled_->program();
  std::map<std::string_view, size_t> index;
  for (size_t i = 0; i < p.weights.size(); ++i) index[p.weights[i].name] = i;
  Weights result = base;
  result.resize(p.weights.size());
  std::vector<bool> given(p.weights.size(), false);
  for (const auto& [name, tensor] : updates) {
    auto it = index.find(name);
    if (it == index.end()) {
      std::string known;
      for (const auto& w : p.weights) known += (known.empty() ? "" : ", ") + w.name;
      fail(Code::kInvalidArgument, "weight '", name, "' is not a weight of this model (it has: ",
           known.empty() ? "none" : known, ")");
    }
    if (given[it->second]) fail(Code::kInvalidArgument, "weight '", name, "' is given twice");
    if (!tensor) fail(Code::kInvalidArgument, "weight '", name, "' is NULL");
    check_weight(name, p.types[p.weights[it->second].value], *tensor);
    given[it->second] = true;
    // A weight from any device is copied to the model's once, here: the caller keeps theirs.
    result[it->second] = dense_on(tensor, compiled_->device());
  }
  if (require_all)
    for (size_t i = 0; i < given.size(); ++i)
      if (!given[i])
        fail(Code::kNotFound, "weight '", p.weights[i].name, "' (", p.types[p.weights[i].value],
             ") is declared by the graph but was not given");
  return result;
}

Ref<Model> Model::create(Ref<CompiledModel> compiled, const NamedTensors& weights) {
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
  NamedTensors weights = declared_in(compiled->program(), registry);
  return create(std::move(compiled), weights);
}

void Model::reload(const WeightsRegistry& registry) { reload(declared_in(compiled_->program(), registry)); }

void Model::reload(const NamedTensors& weights) {
  auto next = std::make_shared<const BoundWeights>(merge(snapshot()->tensors(), weights, /*require_all=*/false));
  std::lock_guard lock(mu_);
  weights_ = std::move(next);
}

std::shared_ptr<const BoundWeights> Model::snapshot() const {
  std::lock_guard lock(mu_);
  return weights_;
}

std::vector<Ref<Tensor>> Model::execute(std::span<const Ref<Tensor>> inputs) const {
  const Program& p = compiled_->program();
  const Ref<Device>& device = compiled_->device();
  const SymbolValues symbols = bind_inputs(p, inputs, *device);
  std::shared_ptr<ExecPlan> plan = compiled_->plan_for(symbols);
  std::shared_ptr<const BoundWeights> weights = snapshot();
  std::vector<Ref<Tensor>> dense;  // keeps packed copies of strided inputs alive
  std::vector<const void*> in_ptrs, w_ptrs;
  for (const auto& t : inputs) {
    dense.push_back(dense_on(t, device));
    in_ptrs.push_back(dense.back()->data());
  }
  for (const auto& w : weights->tensors()) w_ptrs.push_back(w->data());
  const int32_t threads = compiled_->context()->num_threads();
  cpu::size_team(threads);  // before packing, which runs on the team too
  const std::vector<const void*> packed = weights->packed_for(*plan);
  return run_plan(*plan, p, ExecuteArgs{in_ptrs, w_ptrs, compiled_->constant_addresses(), packed, threads});
}

std::vector<Ref<Tensor>> Model::execute_named(const NamedTensors& inputs) const {
  const Program& p = compiled_->program();
  std::vector<Ref<Tensor>> ordered(p.inputs.size());
  for (const auto& [name, tensor] : inputs) {
    size_t k = 0;
    while (k < p.inputs.size() && p.inputs[k].name != name) ++k;
    if (k == p.inputs.size()) fail(Code::kNotFound, "the model has no input named '", name, "'");
    if (ordered[k]) fail(Code::kInvalidArgument, "input '", name, "' is given twice");
    if (!tensor) fail(Code::kInvalidArgument, "input '", name, "' is NULL");
    ordered[k] = tensor;
  }
  for (size_t k = 0; k < p.inputs.size(); ++k)
    if (!ordered[k]) fail(Code::kInvalidArgument, "input '", p.inputs[k].name, "' is missing");
  return execute(ordered);
}

}  // namespace maxc

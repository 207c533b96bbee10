#include "engine/compiled_model.h"

#include <algorithm>

#include "base/log.h"
#include "base/str_cat.h"
#include "compiler/stages.h"
#include "engine/executor.h"
#include "engine/placement.h"
#include "engine/program_constants.h"
#include "onnx/input_values_needed.h"

namespace maxc {

namespace {

std::vector<Ref<TensorSpec>> specs(const Program& p, const auto& named) {
  std::vector<Ref<TensorSpec>> result;
  for (const auto& n : named) result.push_back(make_ref<TensorSpec>(n.name, p.types[n.value]));
  return result;
}

void check_weights_static(const Program& p) {
  for (const auto& w : p.weights)
    if (!p.types[w.value].is_static())
      fail(Code::kUnimplemented, "weight '", w.name, "' has the symbolic type ", p.types[w.value],
           "; weights need static shapes");
}

void check_settings(const CompileSettings& settings) {
  if (settings.plan_cache_capacity < 1)
    fail(Code::kInvalidArgument, "plan_cache_capacity is ", settings.plan_cache_capacity, "; it must be at least 1");
}

}  // namespace

CompiledModel::CompiledModel(Ref<Context> context, Ref<Device> device, Program program,
                             const CompileSettings& settings)
    : Object(ObjectKind::kCompiledModel),
      context_(std::move(context)),
      device_(std::move(device)),
      program_(std::move(program)),
      settings_(settings) {
  inputs_ = specs(program_, program_.inputs);
  outputs_ = specs(program_, program_.outputs);
  weights_ = specs(program_, program_.weights);
  constants_ = place_constants(program_, device_);
}

Ref<CompiledModel> CompiledModel::compile(Ref<Context> context, const Graph& graph, const CompileSettings& settings,
                                          NamedTensors bundled) {
  check_settings(settings);
  CompileOptions opts;
  opts.fuse = settings.fuse;
  opts.fold_constants = settings.fold_constants;
  opts.fold_limit_bytes = settings.fold_limit_bytes;
  opts.evaluate = evaluate_node;
  Program program = prepare_program(graph, opts);
  Ref<Device> device = placement_device(program, *context);
  const KernelTable& kernels = KernelTable::for_device(*device);
  opts.has_kernel = [&kernels](std::string_view op) { return kernels.find(op) != nullptr; };
  opts.convs_channels_last = device->is_host();
  fuse_program(program, opts);
  MAXC_LOG(kDebug, "compiled graph '", graph.name(), "' for ", device->name(), ":\n", program.to_string());
  check_weights_static(program);
  auto model = Ref<CompiledModel>::adopt(
      new CompiledModel(std::move(context), std::move(device), std::move(program), settings));
  model->bundled_ = std::move(bundled);
  if (!model->program_.symbol_sources.empty()) model->stages_ = split_stages(model->program_);
  bool all_static = true;
  for (const auto& in : model->program_.inputs) all_static = all_static && model->program_.types[in.value].is_static();
  if (all_static) model->plan_for({});
  return model;
}

Ref<CompiledModel> CompiledModel::compile_specializing(Ref<Context> context, Ref<Device> device,
                                                       std::shared_ptr<const ValueSpecializer> specializer,
                                                       const CompileSettings& settings) {
  check_settings(settings);
  auto model = Ref<CompiledModel>::adopt(new CompiledModel(std::move(context), std::move(device), Program{}, settings));
  for (const auto& [name, type] : specializer->inputs) model->inputs_.push_back(make_ref<TensorSpec>(name, type));
  for (const auto& [name, type] : specializer->outputs) model->outputs_.push_back(make_ref<TensorSpec>(name, type));
  const DeviceRef placed = device_ref_of(*model->device_);
  for (const auto& [name, t] : specializer->initializers) {
    TensorType type{t->dtype(), {t->dims().begin(), t->dims().end()}, placed};
    model->weights_.push_back(make_ref<TensorSpec>(name, std::move(type)));
  }
  model->bundled_ = specializer->initializers;
  model->value_inputs_ = specializer->value_inputs;
  model->specializer_ = std::move(specializer);
  return model;
}

Ref<CompiledModel> CompiledModel::compile_file(Ref<Context> context, ModelFile file, const CompileSettings& settings,
                                               std::optional<DeviceRef> placement) {
  if (!file.specializer) return compile(std::move(context), file.graph, settings, std::move(file.weights));
  Ref<Device> device = context_device(*context, placement.value_or(DeviceRef::cpu()), "the model file");
  return compile_specializing(std::move(context), std::move(device), std::move(file.specializer), settings);
}

std::string CompiledModel::value_key(std::span<const Ref<Tensor>> inputs, const std::vector<std::string>& names,
                                     NamedTensors* values, std::vector<Ref<Tensor>>* rest) const {
  if (inputs.size() != inputs_.size())
    fail(Code::kInvalidArgument, "the model takes ", inputs_.size(), " inputs, got ", inputs.size());
  std::string key;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& name = inputs_[i]->name();
    if (!inputs[i]) fail(Code::kInvalidArgument, "input '", name, "' is NULL");
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      rest->push_back(inputs[i]);
      continue;
    }
    // Read on the host: these values shape the graph.
    Ref<Tensor> host = inputs[i]->copy(Device::cpu());
    key += str_cat(name, ":", dtype_name(host->dtype()), dims_to_string(host->dims()), "=");
    key.append(reinterpret_cast<const char*>(host->data()), host->byte_size());
    key += '\n';
    values->emplace_back(name, std::move(host));
  }
  return key;
}

Ref<CompiledModel> CompiledModel::specialized(std::span<const Ref<Tensor>> inputs, std::vector<Ref<Tensor>>* rest) const {
  if (!specializer_) fail(Code::kInternal, "specialized() of a model that does not specialize");
  std::vector<std::string> names;
  {
    std::lock_guard lock(mu_);
    names = value_inputs_;
  }
  for (;;) {
    NamedTensors values;
    rest->clear();
    const std::string key = value_key(inputs, names, &values, rest);
    {
      std::lock_guard lock(mu_);
      if (const Ref<CompiledModel>* cached = specialized_.find(key)) return *cached;
    }
    try {
      // Read and compiled outside the lock, as plans are built.
      ModelFile file = specializer_->read(values);
      Ref<CompiledModel> compiled = compile(context_, file.graph, settings_, std::move(file.weights));
      std::lock_guard lock(mu_);
      specialized_.put(key, compiled, static_cast<size_t>(settings_.plan_cache_capacity));
      return compiled;
    } catch (const onnx::InputValuesNeeded& e) {
      // The bound values made further shape operands computable but not all: those need
      // the values of more inputs, which every call gives.
      size_t before = names.size();
      for (const std::string& more : e.inputs())
        if (std::find(names.begin(), names.end(), more) == names.end()) names.push_back(more);
      if (names.size() == before) throw;
      std::lock_guard lock(mu_);
      value_inputs_ = names;
    }
  }
}

std::shared_ptr<ExecPlan> CompiledModel::plan_for(const SymbolValues& symbols, size_t stage) const {
  std::pair<size_t, SymbolValues> key{stage, symbols};
  {
    std::lock_guard lock(mu_);
    if (const std::shared_ptr<ExecPlan>* cached = plans_.find(key)) return *cached;
  }
  // Built outside the lock: two threads meeting a new shape at once may both build it,
  // which costs time but never correctness.
  const Program& program = stages_.empty() ? program_ : stages_.at(stage);
  std::shared_ptr<ExecPlan> plan = build_plan(program, symbols, context_->num_threads(), device_);
  MAXC_LOG(kDebug, "planned ", plan->steps.size(), " steps, arena ", plan->arena_bytes, " bytes of ",
           plan->intermediate_bytes, " intermediate");
  const size_t capacity = static_cast<size_t>(settings_.plan_cache_capacity) * std::max<size_t>(1, stages_.size());
  std::lock_guard lock(mu_);
  plans_.put(std::move(key), plan, capacity);
  return plan;
}

// ---- the constant folder's evaluator -----------------------------------------------------------

namespace {

Constant constant_of(Ref<Tensor> t, const TensorType& type) {
  const uint8_t* bytes = t->data();
  const size_t size = t->byte_size();
  // The constant's bytes keep the tensor alive: no copy.
  std::shared_ptr<const uint8_t> data(bytes, [t](const uint8_t*) mutable { t = Ref<Tensor>(); });
  return Constant{type, std::move(data), size};
}

}  // namespace

std::vector<Constant> evaluate_node(const Node& node, const Program& p, std::span<const Constant* const> inputs) {
  if (!KernelTable::builtin().find(node.op)) return {};
  // A program of this one node: its inputs become constants 0..n-1.
  Program mini;
  Node copy = node;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    mini.constants.push_back({mini.new_value(inputs[i]->type), *inputs[i]});
    copy.inputs[i] = mini.constants.back().value;
  }
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    copy.outputs[o] = mini.new_value(p.types[node.outputs[o]]);
    mini.outputs.push_back({str_cat("output", o), copy.outputs[o]});
  }
  mini.nodes.push_back(std::move(copy));
  std::unique_ptr<ExecPlan> plan;
  try {
    plan = build_plan(mini, {}, 1, Device::cpu());
  } catch (const Error& e) {
    // No kernel, or a dim that needs the symbols of a call (shape_to_tensor of "batch"):
    // the node stays to run with the plan.
    if (e.code() == Code::kUnimplemented || e.code() == Code::kNotFound) return {};
    throw;
  }
  const std::vector<const void*> constants = place_constants(mini, Device::cpu()).addresses;
  std::vector<Ref<Tensor>> outs = run_plan(*plan, mini, ExecuteArgs{{}, {}, constants, {}, 1});
  std::vector<Constant> result;
  for (size_t o = 0; o < outs.size(); ++o) result.push_back(constant_of(outs[o], mini.types[mini.outputs[o].value]));
  return result;
}

}  // namespace maxc

// A graph compiled for one of the context's devices (MAX's InferenceSession.load, before weights): the
// optimized Program, its signature, and the plans made for the input shapes seen so far.
// Immutable once made, apart from the plan cache, which has its own lock: thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <span>
#include <vector>

#include "base/object.h"
#include "compiler/passes.h"
#include "driver/tensor_list.h"
#include "engine/context.h"
#include "engine/exec_plan.h"
#include "engine/lru_cache.h"
#include "engine/model_file.h"
#include "engine/program_constants.h"
#include "engine/tensor_spec.h"

namespace maxc {

struct CompileSettings {
  bool fuse = true;
  bool fold_constants = true;
  uint64_t fold_limit_bytes = 1 << 20;
  int64_t plan_cache_capacity = 16;
  // Inputs on another device than the model's are copied to it per call instead of refused.
  bool copy_inputs = false;
};

class CompiledModel : public Object {
 public:
  // Verifies and compiles `graph` (which is not kept) for the device it is placed on (see
  // placement_device for the errors). A graph without symbolic dims gets its one plan now,
  // so a missing kernel is reported here rather than at execute.
  // `bundled` are weights that came with the graph's file (an ONNX model's initializers):
  // a Model binds them for every weight it is not given.
  static Ref<CompiledModel> compile(Ref<Context> context, const Graph& graph, const CompileSettings& settings,
                                    NamedTensors bundled = {});
  // A model file whose graph depends on the values of some inputs (ModelFile::specializer),
  // on `device`: its signature now, and a compiled model per set of those values later
  // (specialized). Every initializer of the file is a weight of its signature.
  static Ref<CompiledModel> compile_specializing(Ref<Context> context, Ref<Device> device,
                                                 std::shared_ptr<const ValueSpecializer> specializer,
                                                 const CompileSettings& settings);
  // The model compiled for a file as it reads (no specialization), or per input values.
  static Ref<CompiledModel> compile_file(Ref<Context> context, ModelFile file, const CompileSettings& settings,
                                         std::optional<DeviceRef> placement);

  bool specializes() const { return specializer_ != nullptr; }
  // For a specializing model: the model compiled for the values of `inputs` (every input,
  // in signature order; the value inputs are read on the host), cached per distinct values
  // (plan_cache_capacity of them) or read and compiled now; *rest gets the inputs it takes.
  // The errors of reading and compiling the file with those values.
  Ref<CompiledModel> specialized(std::span<const Ref<Tensor>> inputs, std::vector<Ref<Tensor>>* rest) const;

  const Program& program() const { return program_; }
  const Ref<Context>& context() const { return context_; }
  // The context's device the graph is placed on (engine/placement.h).
  const Ref<Device>& device() const { return device_; }
  const std::vector<Ref<TensorSpec>>& inputs() const { return inputs_; }
  const std::vector<Ref<TensorSpec>>& outputs() const { return outputs_; }
  const std::vector<Ref<TensorSpec>>& weights() const { return weights_; }
  const NamedTensors& bundled_weights() const { return bundled_; }
  bool copies_inputs() const { return settings_.copy_inputs; }
  const CompileSettings& settings() const { return settings_; }

  // A program whose dims depend on data runs in stages (compiler/stages.h): their programs,
  // which share the program's weights and constants. Empty for every other program.
  const std::vector<Program>& stages() const { return stages_; }

  // The plan of the program, or of stage `stage`, for these symbol values: cached (least
  // recently used goes first) or built now.
  std::shared_ptr<ExecPlan> plan_for(const SymbolValues& symbols, size_t stage = 0) const;
  // The program's constants in the device's memory, by constant number (copied there once,
  // at compile, when the device is not the host).
  std::span<const void* const> constant_addresses() const { return constants_.addresses; }

 private:
  CompiledModel(Ref<Context> context, Ref<Device> device, Program program, const CompileSettings& settings);
  // The values of the value inputs, as a cache key; the inputs that are not value inputs.
  std::string value_key(std::span<const Ref<Tensor>> inputs, const std::vector<std::string>& names,
                        NamedTensors* values, std::vector<Ref<Tensor>>* rest) const;

  Ref<Context> context_;
  Ref<Device> device_;
  Program program_;
  CompileSettings settings_;
  std::vector<Ref<TensorSpec>> inputs_, outputs_, weights_;
  NamedTensors bundled_;
  ProgramConstants constants_;
  mutable std::mutex mu_;
  std::vector<Program> stages_;
  mutable LruCache<std::pair<size_t, SymbolValues>, std::shared_ptr<ExecPlan>> plans_;  // under mu_, by stage
  std::shared_ptr<const ValueSpecializer> specializer_;
  mutable std::vector<std::string> value_inputs_;  // under mu_: grows as reads need more
  mutable LruCache<std::string, Ref<CompiledModel>> specialized_;  // under mu_
};

// Runs one node on constant inputs at compile time: the constant folder's evaluator.
// Returns nothing (declining) when the node has no CPU kernel.
std::vector<Constant> evaluate_node(const Node& node, const Program& p, std::span<const Constant* const> inputs);

}  // namespace maxc

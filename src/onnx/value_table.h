// The ONNX names in scope while a graph is imported, and how each becomes a graph value:
// graph inputs are values already; an initializer becomes a weight and a known value a
// constant the first time an op needs it as a tensor (a Reshape's shape never does).
#pragma once

#include <map>
#include <string>

#include "driver/tensor_list.h"
#include "graph/graph.h"
#include "onnx/node_context.h"

namespace maxc::onnx {

class ValueTable {
 public:
  explicit ValueTable(Graph& graph) : graph_(graph) {}

  // ALREADY_EXISTS-like INVALID_ARGUMENT when `name` is defined twice (ONNX graphs are SSA).
  void define(const std::string& name, Operand operand, std::string_view what);
  void add_initializer(const std::string& name, Ref<Tensor> data);

  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }
  // The operand; INVALID_ARGUMENT naming `user` when the name is undefined.
  const Operand& get(const std::string& name, std::string_view user) const;
  // Its graph value, made now if needed.
  ValueId value(const std::string& name, std::string_view user);

  // The initializers that became weights, for the model to bind.
  NamedTensors used_weights() const;

 private:
  Graph& graph_;
  std::map<std::string, Operand, std::less<>> values_;
  std::map<std::string, Ref<Tensor>, std::less<>> initializers_;
};

// A graph value for a known value: a constant when static, else the symbolic elements
// through shape_to_tensor.
ValueId materialize_known(Graph& graph, const KnownValue& k);

}  // namespace maxc::onnx

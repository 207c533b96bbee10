// The ONNX names in scope while a graph is imported, and how each becomes a graph value:
// graph inputs are values already; an initializer becomes a weight and a known value a
// constant the first time an op needs it as a tensor (a Reshape's shape never does).
//
// A table may be nested in an enclosing one that builds the same graph: a subgraph inlined
// where it stands (an If whose condition is known, an unrolled Loop iteration). Its names
// are its own; every other name is the enclosing scope's, as ONNX scoping has it.
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
  // A scope nested in `enclosing`, building enclosing's graph.
  explicit ValueTable(ValueTable& enclosing) : graph_(enclosing.graph_), enclosing_(&enclosing) {}

  // ALREADY_EXISTS-like INVALID_ARGUMENT when `name` is defined twice (ONNX graphs are SSA).
  void define(const std::string& name, Operand operand, std::string_view what);
  void add_initializer(const std::string& name, Ref<Tensor> data);

  bool has(std::string_view name) const;
  // The operand; INVALID_ARGUMENT naming `user` when the name is undefined.
  const Operand& get(const std::string& name, std::string_view user) const;
  // Its graph value, made now if needed.
  ValueId value(const std::string& name, std::string_view user);
  // The operand, for use under another name: an initializer as its weight's value (another
  // name must not declare another weight).
  Operand as_operand(const std::string& name, std::string_view user);

  // The initializers that became weights of the graph or of its subgraphs (at any depth),
  // for the model to bind.
  NamedTensors used_weights() const;

  // Whether dims computed from data are bound when the model runs (bound_dims.h) rather
  // than asked for at import (InputValuesNeeded). Only the model's graph binds: a subgraph
  // of ours (a cond or while_loop region) is planned whole with its op. A nested scope
  // builds its enclosing one's graph, and binds as it does.
  bool binds_dims() const { return enclosing_ ? enclosing_->binds_dims() : binds_dims_; }
  void set_binds_dims(bool binds) { binds_dims_ = binds; }

 private:
  // The operand of `name` in this scope or an enclosing one; nullptr when none defines it.
  Operand* find(std::string_view name);
  const Operand* find(std::string_view name) const;

  Graph& graph_;
  ValueTable* enclosing_ = nullptr;
  bool binds_dims_ = false;
  std::map<std::string, Operand, std::less<>> values_;
  std::map<std::string, Ref<Tensor>, std::less<>> initializers_;
};

// A graph value for a known value: a constant when static, else the symbolic elements
// through shape_to_tensor.
ValueId materialize_known(Graph& graph, const KnownValue& k);

}  // namespace maxc::onnx

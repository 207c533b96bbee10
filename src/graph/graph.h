// A computation graph: typed named inputs, ops in topological order, constants, named
// weights, named outputs, and subgraphs for control flow and `call`.
//
// Values are numbered in creation order and only add_input/add_op create them, so every op's
// inputs precede it: the op list is a topological order by construction. Every mutation is
// transactional: when it throws, the graph is as it was. A Graph needs external
// synchronization; the registry it reads is immutable and shared.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/attrs.h"
#include "graph/constant.h"
#include "graph/op_registry.h"
#include "graph/op_schema.h"
#include "graph/type.h"

namespace maxc {

using ValueId = uint32_t;

struct Value {
  TensorType type;
  int64_t op = -1;     // index of the producing op in ops(), or -1 for a graph input
  uint32_t index = 0;  // which output of that op, or which graph input
};

struct Op {
  const OpSchema* schema = nullptr;  // owned by the registry, which outlives every graph
  std::vector<ValueId> inputs;
  Attrs attrs;  // complete: defaults are filled in
  std::vector<ValueId> outputs;
};

struct NamedValue {
  std::string name;
  ValueId value = 0;
};

class Graph {
 public:
  // Ops resolve against `registry` (which must outlive the graph): the built-in ops unless a
  // caller, such as a test or a custom-op library, brings its own.
  explicit Graph(std::string name = "main", const OpRegistry& registry = OpRegistry::global())
      : name_(std::move(name)), registry_(&registry) {}

  const std::string& name() const { return name_; }
  const OpRegistry& registry() const { return *registry_; }

  // ---- building ----------------------------------------------------------------------------

  // A typed input. ALREADY_EXISTS when the name is taken; INVALID_ARGUMENT for an empty
  // name or an invalid type.
  ValueId add_input(std::string name, TensorType type);

  // Looks the op up (NOT_FOUND if unknown; version 0 = the newest), checks the inputs exist,
  // types it through its schema and appends it. Returns its output values.
  std::vector<ValueId> add_op(std::string_view op, int32_t version, std::span<const ValueId> inputs,
                              const Attrs& attrs = {});
  std::vector<ValueId> add_op(std::string_view op, std::initializer_list<ValueId> inputs, const Attrs& attrs = {}) {
    return add_op(op, 0, std::span<const ValueId>(inputs.begin(), inputs.size()), attrs);
  }

  // The output types add_op would give, without changing the graph (same errors).
  std::vector<TensorType> infer_op_types(std::string_view op, int32_t version,
                                         std::span<const ValueId> inputs, const Attrs& attrs) const;

  // Stores `constant` in the constant table and adds the `constant` op that yields it.
  ValueId add_constant(Constant constant);

  // Moves a graph whose every value is on the host onto `device`: the values' types, the
  // constants', and the ops' device attributes. For model files that carry no placement of
  // their own (ONNX). FAILED_PRECONDITION naming the first value already placed elsewhere;
  // the graph is then unchanged.
  void place_on(DeviceRef device);

  // Declares the external weight `name` (a `constant_external` op). Declaring it again with
  // the same type returns the same value; with another type it is INVALID_ARGUMENT.
  // add_op("constant_external", ...) behaves the same.
  ValueId add_weight(std::string name, TensorType type);

  // Replaces the outputs. An empty name becomes "output<i>"; names must be unique.
  void set_outputs(std::vector<NamedValue> outputs);

  // Appends a subgraph and returns its index, which a graph attribute (GraphRef) refers to.
  int64_t add_subgraph(Graph subgraph);

  // ---- reading -----------------------------------------------------------------------------

  const std::vector<NamedValue>& inputs() const { return inputs_; }
  const std::vector<NamedValue>& outputs() const { return outputs_; }
  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<Constant>& constants() const { return constants_; }
  // Weight name -> the value of its constant_external op.
  const std::map<std::string, ValueId, std::less<>>& weights() const { return weights_; }
  const std::vector<Graph>& subgraphs() const { return subgraphs_; }

  size_t num_values() const { return values_.size(); }
  // INVALID_ARGUMENT when `id` is not a value of this graph.
  const Value& value(ValueId id) const;
  const TensorType& type(ValueId id) const { return value(id).type; }

  // Re-checks every invariant and re-infers every op, comparing with the recorded types.
  // INVALID_ARGUMENT naming the graph, the op (index and name) and what is wrong. The
  // deserializer runs it on every loaded graph.
  void verify() const;

  // Readable text, one op per line:
  //   graph main(%0 x: tensor<[batch, 10], float32, cpu:0>) {
  //     %1 = exp(%0) : tensor<[batch, 10], float32, cpu:0>
  //     output(y = %1)
  //   }
  std::string to_string() const;

 private:
  struct Prepared;  // an op typed and checked, not yet appended
  Prepared prepare_op(const OpSchema& schema, std::span<const ValueId> inputs, const Attrs& attrs) const;
  void check_against_graph(const OpSchema& schema, const Attrs& attrs) const;
  std::vector<ValueId> append(const OpSchema& schema, std::span<const ValueId> inputs, Prepared prepared);
  void check_on_host() const;
  void move_to(DeviceRef device);
  void verify_op(size_t k, std::vector<bool>& defined, std::map<std::string, ValueId, std::less<>>& weights) const;

  std::string name_;
  const OpRegistry* registry_;
  std::vector<Value> values_;
  std::vector<NamedValue> inputs_;
  std::vector<Op> ops_;
  std::vector<Constant> constants_;
  std::map<std::string, ValueId, std::less<>> weights_;
  std::vector<NamedValue> outputs_;
  std::vector<Graph> subgraphs_;
};

std::ostream& operator<<(std::ostream& out, const Graph& g);

}  // namespace maxc

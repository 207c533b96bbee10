// ONNX subgraphs: the GRAPH attributes of If, Loop and Scan.
//
// An ONNX subgraph sees every name of the scopes around it; a subgraph of ours sees only its
// inputs, each of which the cond or while_loop passes as an operand. So the names a subgraph
// takes from outside (its nested subgraphs' included) are resolved when it is built:
//   a static value known at import -> known inside too (a constant where used as a tensor)
//   an initializer                 -> the same named weight, declared inside
//   any other value                -> captured: a subgraph input the op passes it to (a known
//                                     value with symbols too, as its symbols bind only from
//                                     the subgraph's inputs; it stays known inside)
// A subgraph that runs once, at a place known at import (the branch of an If whose
// condition is known, an unrolled Loop iteration), is inlined instead: imported into the
// node's own graph in a scope nested in the node's (import_inline).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "onnx/model_proto.h"
#include "onnx/node_context.h"
#include "onnx/value_table.h"

namespace maxc::onnx {

// The GraphProto of c's graph attribute `attr`; INVALID_ARGUMENT when it is missing or holds
// no graph.
const GraphProto& graph_attr(const NodeContext& c, std::string_view attr);

// The names `g` uses (as node inputs or graph outputs) without defining them (as inputs,
// initializers or node outputs), its nested subgraphs' included, in order of first use.
std::vector<std::string> outer_names(const GraphProto& g);

// Defines formal input `i` of `g` in `scope` as `op`, checking the element type g declares.
void define_formal_input(const NodeContext& c, const GraphProto& g, size_t i, ValueTable& scope, Operand op);

// Imports g's initializers (as known values) and nodes into c's graph, in `scope` (nested in
// c's table, its formal inputs already defined). `where` names the subgraph in messages
// ("body 'loop_body', iteration 2").
void import_inline(NodeContext& c, const GraphProto& g, const std::string& where, ValueTable& scope);

// A subgraph imported into a graph of its own, to become a subgraph of c's graph.
class Subgraph {
 public:
  Subgraph(NodeContext& c, std::string_view attr);
  Subgraph(const Subgraph&) = delete;
  Subgraph& operator=(const Subgraph&) = delete;

  const GraphProto& proto() const { return proto_; }
  Graph& graph() { return graph_; }
  // Builds in this subgraph's graph (for the ops around the imported nodes).
  NodeContext& ctx() { return ctx_; }

  // A new input of the subgraph, to which the op will pass `operand` (a value of c's graph);
  // it has operand's type. `name` is made unique among the inputs.
  ValueId add_input(std::string name, ValueId operand);
  // What the op passes, one per input, in order.
  const std::vector<ValueId>& operands() const { return operands_; }

  // Formal input i of the ONNX subgraph is `op` (a value of this graph, or a known value).
  void define_input(size_t i, Operand op);
  void define_input(size_t i, ValueId v);
  // Resolves `names` (outer_names) against c's scope, as the file comment says.
  void capture(const std::vector<std::string>& names);
  // Imports the initializers and nodes.
  void import();

  // Formal output i: its operand, and its value in this graph.
  const Operand& output(size_t i);
  ValueId output_value(size_t i);

  // Sets the graph's outputs and hands the graph to c's graph: the attribute to refer to it.
  GraphRef attach(const std::vector<ValueId>& outputs);

  // "body 'loop_body'": the attribute and the graph's name, for messages.
  const std::string& where() const { return where_; }

 private:
  NodeContext& outer_;
  const GraphProto& proto_;
  std::string where_;
  Graph graph_;
  ValueTable values_;
  NodeContext ctx_;
  std::vector<ValueId> operands_;
};

// A rank-0 value of `v`, which must hold one element (INVALID_ARGUMENT naming `what`).
ValueId as_scalar(NodeContext& c, ValueId v, std::string_view what);

}  // namespace maxc::onnx

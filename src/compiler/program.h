// The compiler's IR: a graph flattened into what execution needs. Every graph value keeps
// its id and type; graph inputs, weights and constants become leaves; every other op becomes
// a Node. Passes rewrite the node list (removing, merging, fusing), never the value ids of
// the leaves, so a Program stays a topologically ordered list a planner can walk.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace maxc {

struct Program;

// A program a control-flow node runs (cond's branches, while_loop's predicate and body). Its
// weights arrive as inputs: region input j is the node's input feeds[j]. A while_loop feeds
// its loop values (its first inputs) anew on every iteration, its weights unchanged.
struct Region {
  std::shared_ptr<Program> program;
  std::vector<uint32_t> feeds;
};

struct Node {
  // A registry op ("add"), or a fused op the compiler made: "fused_elementwise",
  // "fused_matmul", "add_layer_norm", "attention". The KernelTable lowers either kind.
  std::string op;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attrs attrs;  // complete for registry ops; what the fusing pass documents for fused ones
  // fused_elementwise only: the fused ops in order, each over this node's inputs and the
  // earlier steps' outputs. The node's outputs are the steps' values used outside.
  std::vector<Node> steps;
  // cond: {then, else}; while_loop: {predicate, body}. Passes treat the node as opaque and
  // optimize each region as a program of its own (for_each_region).
  std::vector<Region> regions;
};

struct ProgramInput {
  std::string name;
  ValueId value = 0;
};

struct ProgramWeight {
  std::string name;
  ValueId value = 0;
};

struct ProgramConstant {
  ValueId value = 0;
  Constant data;
};

// A symbol whose value is data rather than a dim of an input: element `element` of the int64
// tensor `value`, once computed (how many elements a nonzero finds, an entry of a shape a
// bind_dims names). See compiler/stages.h.
struct SymbolSource {
  std::string symbol;
  ValueId value = 0;
  int64_t element = 0;
};

struct Program {
  std::vector<TensorType> types;  // by ValueId; the ids of the source graph, plus new ones
  std::vector<ProgramInput> inputs;
  std::vector<ProgramWeight> weights;
  std::vector<ProgramConstant> constants;
  std::vector<Node> nodes;          // topological order
  std::vector<NamedValue> outputs;
  std::vector<SymbolSource> symbol_sources;

  // A fresh value id of type `t` (passes that introduce values).
  ValueId new_value(TensorType t) {
    types.push_back(std::move(t));
    return static_cast<ValueId>(types.size() - 1);
  }
  // Readable text for tests and MAX_C_LOG_LEVEL=debug.
  std::string to_string() const;
};

// The program of the graph's main body: inputs, weights (constant_external), constants and
// one node per remaining op. A `call` is inlined (its graph's weights named with its prefix);
// cond and while_loop become nodes with regions, whose weights are lifted into this
// program's weights and passed to the node as inputs. Main-body values keep their ids.
Program program_from_graph(const Graph& graph);

// Calls fn on the program of every region of p's nodes (not recursively: fn recurses).
void for_each_region(Program& p, const std::function<void(Program&)>& fn);

// For each value: the index of the node that produces it, or -1 for a leaf.
std::vector<int64_t> producers(const Program& p);
// For each value: how many node inputs, program outputs and symbol sources read it.
std::vector<int32_t> use_counts(const Program& p);

}  // namespace maxc

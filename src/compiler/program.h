// The compiler's IR: a graph flattened into what execution needs. Every graph value keeps
// its id and type; graph inputs, weights and constants become leaves; every other op becomes
// a Node. Passes rewrite the node list (removing, merging, fusing), never the value ids of
// the leaves, so a Program stays a topologically ordered list a planner can walk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace maxc {

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

struct Program {
  std::vector<TensorType> types;  // by ValueId; the ids of the source graph, plus new ones
  std::vector<ProgramInput> inputs;
  std::vector<ProgramWeight> weights;
  std::vector<ProgramConstant> constants;
  std::vector<Node> nodes;          // topological order
  std::vector<NamedValue> outputs;

  // A fresh value id of type `t` (passes that introduce values).
  ValueId new_value(TensorType t) {
    types.push_back(std::move(t));
    return static_cast<ValueId>(types.size() - 1);
  }
  // Readable text for tests and MAX_C_LOG_LEVEL=debug.
  std::string to_string() const;
};

// The program of the graph's main body: inputs, weights (constant_external), constants and
// one node per remaining op. Subgraphs (control flow) are UNIMPLEMENTED for now.
Program program_from_graph(const Graph& graph);

// For each value: the index of the node that produces it, or -1 for a leaf.
std::vector<int64_t> producers(const Program& p);
// For each value: how many node inputs and program outputs read it.
std::vector<int32_t> use_counts(const Program& p);

}  // namespace maxc

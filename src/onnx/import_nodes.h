// Importing a graph's nodes in order: the main graph's, and each subgraph's (If, Loop and
// Scan import theirs through the same path, in a scope of their own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "onnx/model_proto.h"
#include "onnx/value_table.h"

namespace maxc::onnx {

bool is_default_domain(const std::string& domain);

// Imports `nodes` into `graph`, reading and defining names in `values`. An output the
// mapping did not produce is defined as missing, so only a use of it fails.
void import_nodes(const std::vector<NodeProto>& nodes, int64_t opset, ValueTable& values, Graph& graph);

}  // namespace maxc::onnx

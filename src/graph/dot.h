// Graphviz DOT export of a graph, for looking at it (`dot -Tsvg`). The readable text form is
// Graph::to_string().
//
// Inputs are ovals, ops boxes (labelled with the op name and its attributes), constants
// box3d shapes, weights (constant_external) cylinders, outputs double octagons; an edge runs
// from a value's producer to each user and is labelled with the value's id and type.
// Subgraphs are clusters, with a dashed edge from each op that refers to one.
#pragma once

#include <string>

#include "graph/graph.h"

namespace maxc {

std::string to_dot(const Graph& graph);

}  // namespace maxc

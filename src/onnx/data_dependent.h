// Counts that data decides. A nonzero whose out_dim is a symbol that nothing else binds makes
// the engine count at run time and plan what follows for that count (compiler/stages.h), so
// the importers of operators whose output sizes depend on values (NonZero, Compress, Unique)
// mint such symbols here.
#pragma once

#include <string_view>

#include "onnx/node_context.h"

namespace maxc::onnx {

// A symbol that no value of c's graph mentions yet, made from `stem` (a C identifier) and the
// node's first output. The node's name alone would not do: an unrolled Loop imports its body's
// nodes once per iteration into one graph.
Dim fresh_count_symbol(NodeContext& c, std::string_view stem);

// The positions of the nonzero elements of the rank-1 `mask`, as int64 [n], n a fresh symbol
// made from `stem`: numpy's flatnonzero, its length known only when the model runs.
ValueId nonzero_positions(NodeContext& c, ValueId mask, std::string_view stem);

}  // namespace maxc::onnx

// Pieces of the while_loops that Loop and Scan become: the loop bound as a value, the
// predicate graph, and the accumulators that collect a scan output one row per iteration.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "onnx/node_context.h"

namespace maxc::onnx {

// A rank-0 int64 holding `d`: a constant, or read from the shapes at run time.
ValueId count_value(NodeContext& c, const Dim& d);

// The predicate of a while_loop over `body` (added to c's graph): it takes body's inputs and
// decides input[counter] < input[limit] (when given) and input[condition] (when given).
GraphRef add_predicate(NodeContext& c, const Graph& body, size_t counter, std::optional<size_t> limit,
                       std::optional<size_t> condition);

// The body's next value of a carried one: `next`, which must have the type `entered` has,
// as a while_loop carries each value with one type (UNIMPLEMENTED naming `what` otherwise).
ValueId carried_next(NodeContext& b, ValueId entered, ValueId next, std::string_view what);

// An accumulator of a scan output: zeros of the row type with `lead` axes in front.
ValueId zero_rows(NodeContext& c, const TensorType& row, std::vector<Dim> lead);

// `acc` with the row at `position` (int64 [k], an index per leading axis) replaced by `row`.
ValueId write_row(NodeContext& c, ValueId acc, ValueId row, ValueId position);

}  // namespace maxc::onnx

// Shapes computed when the model runs. A Reshape's shape, an Expand's, a Tile's repeats or a
// ConstantOfShape's input computed from data (not from shapes alone) has no value at import:
// its entries become fresh symbols that a bind_dims names. The compiler ends a stage where
// the shape is computed (compiler/stages.h), the engine reads it, binds the symbols and plans
// what follows for them, one plan per distinct binding: the model is imported and compiled
// once, whatever the shape turns out to be.
#pragma once

#include <string_view>
#include <vector>

#include "onnx/node_context.h"

namespace maxc::onnx {

// Whether input i's value is known only at run time and can be bound there: an integer
// tensor of one static axis, in a graph that binds dims (ValueTable::binds_dims: the
// model's, when the import is asked to; a cond or while_loop region is planned whole with
// its op, so its dims must follow from its inputs).
bool bindable(NodeContext& c, size_t i);

// The entries of `shape` (integer [N], N static) as N fresh symbols made from `stem`, which a
// bind_dims binds when the model runs (a negative entry fails there, INVALID_ARGUMENT).
std::vector<Dim> bind_dims(NodeContext& c, ValueId shape, std::string_view stem);

// Input i's entries as dims: its known value's at import, else (bindable) the symbols
// bind_dims names, else what known_dims says (InputValuesNeeded naming the graph inputs it
// is computed from).
std::vector<Dim> input_dims(NodeContext& c, size_t i, std::string_view what, std::string_view stem);

}  // namespace maxc::onnx

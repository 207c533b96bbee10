// ONNX -> Graph. Imports a model's main graph (opset 7 or newer of the default domain) into
// our op set, with the initializers as named weights whose data comes back beside the graph.
//
//   graph inputs      -> add_input; dim_param becomes a symbol, an unnamed dim a fresh one
//   initializers      -> add_weight (when used as tensors), data in `weights`
//   shape operands    -> read at import time (a Reshape's shape, Slice's starts, axes, ...)
//   each node         -> one or a few of our ops (ops_*.cc, looked up by op_type)
//
// Errors: UNIMPLEMENTED naming the node and operator (or the opset, or the attribute value)
// for what our op set cannot express; DATA_LOSS for a malformed file (with the byte offset);
// INVALID_ARGUMENT for a model ONNX itself forbids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "driver/tensor_list.h"
#include "graph/graph.h"
#include "onnx/input_values_needed.h"

namespace maxc::onnx {

// The oldest default-domain opset we import: opset 7 brought numpy-style broadcasting, which
// every binary operator's mapping assumes. From 7 to 12, operators that took as attributes
// what is now an input (Squeeze's axes, Pad's pads, Slice's starts, Clip's bounds, TopK's k,
// Split's sizes) and Softmax's 2-D coercion are mapped in their old forms too; the few
// operators whose older versions we do not map say so (oldest_mapped_opset).
constexpr int64_t kMinOpset = 7;

// The oldest opset whose version of `op_type` (default domain) the importer maps: kMinOpset
// for most; later for an operator whose earlier versions mean something else (Resize-10).
int64_t oldest_mapped_opset(std::string_view op_type);

struct ImportedModel {
  Graph graph;
  NamedTensors weights;  // the initializers the graph declares as weights
};

// Reads the file; external data resolves relative to its directory. The graph inputs named
// in `input_values` are bound to those values: known at import, they are no inputs of the
// graph. InputValuesNeeded (an UNIMPLEMENTED error) names the graph inputs whose values the
// import needs where a shape operand is computed from them (a Reshape's shape fed as an
// input); INVALID_ARGUMENT for a value whose name is no graph input or whose type differs.
// With `bind_dims`, a shape computed from data in the model's graph (a Reshape's, an
// Expand's, Tile's repeats, ConstantOfShape's input) is bound when the model runs instead
// (bound_dims.h), which needs no input values.
ImportedModel import_onnx_file(const std::string& path, const NamedTensors& input_values = {}, bool bind_dims = true);
// A model image in memory; `base_dir` is where external data resolves ("" refuses it).
ImportedModel import_onnx_bytes(const uint8_t* data, size_t size, const std::string& base_dir,
                                const NamedTensors& input_values = {}, bool bind_dims = true);

// What a model takes and gives as its file declares it, and its initializers: the signature
// of a model compiled per set of input values, before any is given.
struct OnnxSignature {
  std::vector<std::pair<std::string, TensorType>> inputs, outputs;
  NamedTensors initializers;
};
OnnxSignature onnx_file_signature(const std::string& path);

}  // namespace maxc::onnx

// A model on disk, whatever its format: our MAXG graph files (serialize/) or an ONNX model
// (onnx/), told apart by the extension. An ONNX file brings its weights (initializers) with
// it; a MAXG file brings none.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/tensor_list.h"
#include "graph/graph.h"

namespace maxc {

struct ValueSpecializer;

struct ModelFile {
  Graph graph;
  NamedTensors weights;
  // Set, with `graph` left empty, for a file whose graph depends on the values of some of
  // its inputs (an ONNX Reshape whose shape is a graph input): the graph is read per
  // distinct set of those values, when they are given.
  std::shared_ptr<const ValueSpecializer> specializer;
};

// What a model compiled per set of input values needs: the signature its file declares,
// its initializers (each may be a weight of some specialization), and a reader.
struct ValueSpecializer {
  std::vector<std::pair<std::string, TensorType>> inputs, outputs;
  NamedTensors initializers;
  // The inputs whose values the first read needed; a later read may need more.
  std::vector<std::string> value_inputs;
  // The file read with these inputs' values bound. Throws onnx::InputValuesNeeded naming
  // further inputs whose values it needs.
  std::function<ModelFile(const NamedTensors& values)> read;
};

// A path ending in ".onnx" is imported as ONNX; anything else is read as MAXG. With
// `placement`, the graph is moved onto that device (Graph::place_on: FAILED_PRECONDITION when
// the file places a value elsewhere already). Errors are the reader's: NOT_FOUND, DATA_LOSS,
// INVALID_ARGUMENT, UNIMPLEMENTED (an ONNX operator).
ModelFile read_model_file(const std::string& path, std::optional<DeviceRef> placement = std::nullopt);

}  // namespace maxc

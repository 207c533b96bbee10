// A model on disk, whatever its format: our MAXG graph files (serialize/) or an ONNX model
// (onnx/), told apart by the extension. An ONNX file brings its weights (initializers) with
// it; a MAXG file brings none.
#pragma once

#include <optional>
#include <string>

#include "driver/tensor_list.h"
#include "graph/graph.h"

namespace maxc {

struct ModelFile {
  Graph graph;
  NamedTensors weights;
};

// A path ending in ".onnx" is imported as ONNX; anything else is read as MAXG. With
// `placement`, the graph is moved onto that device (Graph::place_on: FAILED_PRECONDITION when
// the file places a value elsewhere already). Errors are the reader's: NOT_FOUND, DATA_LOSS,
// INVALID_ARGUMENT, UNIMPLEMENTED (an ONNX operator).
ModelFile read_model_file(const std::string& path, std::optional<DeviceRef> placement = std::nullopt);

}  // namespace maxc

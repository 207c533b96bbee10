// The error of an import that needs values computed at run time from graph inputs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/error.h"

namespace maxc::onnx {

// Thrown, as UNIMPLEMENTED, where the import needs a value that is computed at run time
// from graph inputs (a Reshape's shape fed as an input): with those inputs' values bound
// (import_onnx_file's input_values), the import can go on.
class InputValuesNeeded : public Error {
 public:
  InputValuesNeeded(std::string message, std::vector<std::string> inputs)
      : Error(Code::kUnimplemented, std::move(message)), inputs_(std::move(inputs)) {}
  // The graph inputs, sorted.
  const std::vector<std::string>& inputs() const { return inputs_; }

 private:
  std::vector<std::string> inputs_;
};

}  // namespace maxc::onnx

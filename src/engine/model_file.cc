#include "engine/model_file.h"

#include "onnx/importer.h"
#include "serialize/reader.h"

namespace maxc {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

ModelFile read_file(const std::string& path) {
  if (ends_with(path, ".onnx")) {
    onnx::ImportedModel imported = onnx::import_onnx_file(path);
    return {std::move(imported.graph), std::move(imported.weights)};
  }
  return {load(path), {}};
}

}  // namespace

ModelFile read_model_file(const std::string& path, std::optional<DeviceRef> placement) {
  ModelFile file = read_file(path);
  if (placement) file.graph.place_on(*placement);
  return file;
}

}  // namespace maxc

#include "engine/model_file.h"

#include "onnx/importer.h"
#include "serialize/reader.h"

namespace maxc {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

ModelFile read_onnx(const std::string& path, std::optional<DeviceRef> placement, const NamedTensors& values,
                    bool bind_dims = false) {
  onnx::ImportedModel imported = onnx::import_onnx_file(path, values, bind_dims);
  ModelFile file{std::move(imported.graph), std::move(imported.weights), nullptr};
  if (placement) file.graph.place_on(*placement);
  return file;
}

// The ONNX file as a model compiled per set of values of `value_inputs`.
ModelFile specializing(const std::string& path, std::optional<DeviceRef> placement,
                       std::vector<std::string> value_inputs) {
  onnx::OnnxSignature sig = onnx::onnx_file_signature(path);
  auto s = std::make_shared<ValueSpecializer>();
  s->inputs = std::move(sig.inputs);
  s->outputs = std::move(sig.outputs);
  for (auto* list : {&s->inputs, &s->outputs})
    for (auto& [name, type] : *list) type.device = placement.value_or(DeviceRef::cpu());
  s->initializers = std::move(sig.initializers);
  s->value_inputs = std::move(value_inputs);
  s->read = [path, placement](const NamedTensors& values) { return read_onnx(path, placement, values); };
  return ModelFile{Graph("main"), {}, std::move(s)};
}

}  // namespace

ModelFile read_model_file(const std::string& path, std::optional<DeviceRef> placement) {
  if (ends_with(path, ".onnx")) {
    // Shapes computed from data are bound when the model runs, so it compiles once. Where
    // the ops after such a shape need it static (a GatherElements' indices, the branches of
    // an If that must agree), the file is read again asking for the values it is computed
    // from, and the model compiles per set of them.
    try {
      return read_onnx(path, placement, {}, /*bind_dims=*/true);
    } catch (const onnx::InputValuesNeeded& e) {
      return specializing(path, placement, e.inputs());
    } catch (const Error& e) {
      if (e.code() != Code::kUnimplemented) throw;
    }
    try {
      return read_onnx(path, placement, {});
    } catch (const onnx::InputValuesNeeded& e) {
      return specializing(path, placement, e.inputs());
    }
  }
  ModelFile file{load(path), {}, nullptr};
  if (placement) file.graph.place_on(*placement);
  return file;
}

}  // namespace maxc

// Shared helpers of the ONNX tests: importing a model built with proto_writer.h, compiling
// it with the engine and running it on float tensors.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/device.h"
#include "engine/compiled_model.h"
#include "engine/model.h"
#include "onnx/importer.h"

namespace maxc::onnx::testing {

inline Ref<Tensor> f32_tensor(std::vector<int64_t> dims, const std::vector<float>& v) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat32, std::move(dims));
  std::copy(v.begin(), v.end(), reinterpret_cast<float*>(t->data()));
  return t;
}

inline std::vector<float> floats_of(const Ref<Tensor>& t) {
  const float* p = reinterpret_cast<const float*>(t->data());
  return {p, p + t->num_elements()};
}

inline ImportedModel import_string(const std::string& bytes, const std::string& dir = "") {
  return import_onnx_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), dir);
}

inline Ref<Model> compile_imported(ImportedModel m) {
  auto compiled = CompiledModel::compile(Context::create({}), m.graph, CompileSettings{}, m.weights);
  return Model::create(compiled, NamedTensors{});
}

// Imports, compiles and runs; returns the outputs.
inline std::vector<Ref<Tensor>> run_model(const std::string& bytes, const std::vector<Ref<Tensor>>& inputs) {
  auto model = compile_imported(import_string(bytes));
  return model->execute(inputs);
}

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// The error an import raises (code kOk when it succeeds).
inline Error import_error(const std::string& bytes, const std::string& dir = "") {
  try {
    import_string(bytes, dir);
  } catch (const Error& e) {
    return e;
  }
  return Error(Code::kOk, "");
}

// Importing `bytes` is UNIMPLEMENTED and the message mentions each of `mentions` (the node's
// label, what it lacks).
inline void expect_unimplemented_naming(const std::string& bytes, const std::vector<std::string>& mentions) {
  Error e = import_error(bytes);
  EXPECT_EQ(e.code(), Code::kUnimplemented) << e.what();
  for (const std::string& m : mentions) EXPECT_NE(std::string(e.what()).find(m), std::string::npos) << e.what();
}
inline void expect_unimplemented_naming(const std::string& bytes, const std::string& node, const std::string& what) {
  expect_unimplemented_naming(bytes, std::vector<std::string>{node, what});
}

}  // namespace maxc::onnx::testing

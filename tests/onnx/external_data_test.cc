// Initializers stored in a file beside the model: read relative to the model's directory,
// checked against the file's size, and never from outside that directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

namespace fs = std::filesystem;

Msg external_tensor(const std::string& name, const std::vector<int64_t>& dims, const std::string& location,
                    const std::string& offset, const std::string& length) {
  Msg t;
  t.packed_varints(1, dims).varint(2, kFloat).bytes(8, name);
  auto entry = [&](const std::string& k, const std::string& v) {
    Msg e;
    e.bytes(1, k).bytes(2, v);
    t.msg(13, e);
  };
  entry("location", location);
  if (!offset.empty()) entry("offset", offset);
  if (!length.empty()) entry("length", length);
  t.varint(14, 1);
  return t;
}

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("max_c_onnx_ext_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "model");
    std::vector<float> data = {0, 0, 1, 2, 3, 4};  // two floats of padding, then the weight
    std::ofstream(dir_ / "model" / "weights.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
    std::ofstream(dir_ / "outside.bin", std::ios::binary) << std::string(64, '\0');
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_model(const Msg& weight) {
    GraphSpec g;
    g.inputs = {value_info("x", kFloat, {int64_t{4}})};
    g.outputs = {value_info("y", kFloat, {})};
    g.initializers = {weight};
    g.nodes = {node("Add", {"x", "w"}, {"y"})};
    std::string path = (dir_ / "model" / "m.onnx").string();
    std::ofstream(path, std::ios::binary) << model(g);
    return path;
  }

  Error error_of(const Msg& weight) {
    std::string path = write_model(weight);
    try {
      import_onnx_file(path);
    } catch (const Error& e) {
      return e;
    }
    return Error(Code::kOk, "");
  }

  fs::path dir_;
};

TEST_F(ExternalData, ReadsTheRangeRelativeToTheModel) {
  std::string path = write_model(external_tensor("w", {4}, "weights.bin", "8", "16"));
  ImportedModel m = import_onnx_file(path);
  ASSERT_EQ(m.weights.size(), 1u);
  expect_near(floats_of(m.weights[0].second), {1, 2, 3, 4});
  auto out = compile_imported(std::move(m))->execute({{f32_tensor({4}, {1, 1, 1, 1})}});
  expect_near(floats_of(out[0]), {2, 3, 4, 5});
}

TEST_F(ExternalData, RefusesPathsOutsideTheModelDirectory) {
  EXPECT_EQ(error_of(external_tensor("w", {4}, "../outside.bin", "", "")).code(), Code::kInvalidArgument);
  EXPECT_EQ(error_of(external_tensor("w", {4}, (dir_ / "outside.bin").string(), "", "")).code(),
            Code::kInvalidArgument);
  fs::create_symlink(dir_ / "outside.bin", dir_ / "model" / "link.bin");
  EXPECT_EQ(error_of(external_tensor("w", {4}, "link.bin", "", "")).code(), Code::kInvalidArgument);
}

TEST_F(ExternalData, ChecksTheRangeAgainstTheFile) {
  EXPECT_EQ(error_of(external_tensor("w", {4}, "weights.bin", "16", "")).code(), Code::kDataLoss);
  EXPECT_EQ(error_of(external_tensor("w", {4}, "weights.bin", "0", "12")).code(), Code::kDataLoss);
  EXPECT_EQ(error_of(external_tensor("w", {4}, "weights.bin", "x", "")).code(), Code::kInvalidArgument);
  EXPECT_EQ(error_of(external_tensor("w", {4}, "missing.bin", "", "")).code(), Code::kNotFound);
}

TEST_F(ExternalData, BytesWithoutADirectoryRefuseExternalData) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{4}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {external_tensor("w", {4}, "weights.bin", "", "")};
  g.nodes = {node("Add", {"x", "w"}, {"y"})};
  EXPECT_EQ(import_error(model(g)).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace maxc::onnx::testing

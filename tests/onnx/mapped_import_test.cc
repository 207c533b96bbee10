// import_onnx_file maps the model: initializers whose raw_data sits aligned in the file become
// read-only views of the mapping, the others deferred copies of it (made when first read in
// place), and both give the same values; both keep the mapping alive after the file is gone.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

namespace fs = std::filesystem;

class MappedImport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("max_c_onnx_map_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // y = x + w; the name's length moves raw_data's offset in the file, hence its alignment.
  std::string write_model(const std::string& name, const std::vector<float>& w) {
    GraphSpec g;
    g.inputs = {value_info("x", kFloat, {int64_t{4}})};
    g.outputs = {value_info("y", kFloat, {})};
    g.initializers = {tensor_f32(name, {4}, w)};
    g.nodes = {node("Add", {"x", name}, {"y"})};
    std::string path = (dir_ / (name + ".onnx")).string();
    std::ofstream(path, std::ios::binary) << model(g);
    return path;
  }

  fs::path dir_;
};

TEST_F(MappedImport, AlignedInitializersAreViewsOthersDeferredCopies) {
  const std::vector<float> w = {1.5f, -2.f, 3.25f, 4.f};
  int views = 0, copies = 0;
  for (std::string name : {"w", "ww", "www", "wwww"}) {  // four consecutive offsets: both kinds
    std::string path = write_model(name, w);
    ImportedModel m = import_onnx_file(path);
    ASSERT_EQ(m.weights.size(), 1u);
    const Ref<Tensor> t = m.weights[0].second;
    EXPECT_TRUE(t->read_only());
    (t->storage()->file_pages() ? views : copies) += 1;
    fs::remove(path);  // the tensors hold the mapping, not the path
    auto out = compile_imported(std::move(m))->execute({{f32_tensor({4}, {1, 1, 1, 1})}});
    expect_near(floats_of(out[0]), {2.5f, -1.f, 4.25f, 5.f}, 0.f);
    expect_near(floats_of(t), w, 0.f);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % alignof(float), 0u);
  }
  EXPECT_GE(views, 1);
  EXPECT_GE(copies, 1);
}

TEST_F(MappedImport, MissingFileOrDirectoryIsRefused) {
  try {
    import_onnx_file((dir_ / "none.onnx").string());
    FAIL() << "imported a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound);
  }
  try {
    import_onnx_file(dir_.string());
    FAIL() << "imported a directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace maxc::onnx::testing

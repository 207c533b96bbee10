// Type inference of softmax, logsoftmax, layer_norm and rms_norm.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/op_test_util.h"

namespace maxc {
namespace {

using testing::axis;
using testing::expect_error;
using testing::infer1;
using testing::tensor;
using D = DType;

TEST(Softmax, KeepsTheType) {
  for (const char* op : {"softmax", "logsoftmax"}) {
    for (auto dims : std::vector<std::vector<Dim>>{{2, 3}, {"b", "vocab"}, {Dim("b") * 4, Dim("s") - 1}}) {
      TensorType x = tensor(D::kBFloat16, dims);
      EXPECT_EQ(infer1(op, {x}), x) << op;
      EXPECT_EQ(infer1(op, {x}, axis(0)), x) << op;
    }
    std::string name = std::string("op '") + op + "'";
    expect_error([&] { infer1(op, {tensor(D::kFloat32, {2, 3})}, axis(2)); }, Code::kInvalidArgument,
                 {name, "attribute 'axis' is 2", "rank 2"});
    expect_error([&] { infer1(op, {tensor(D::kInt32, {3})}); }, Code::kInvalidArgument,
                 {name, "input 0 'value' must have a float dtype, got int32"});
  }
}

TEST(LayerNorm, ParamsMatchTheLastDim) {
  Attrs eps{{"epsilon", 1e-5}};
  TensorType x = tensor(D::kFloat32, {"batch", "seq", 768});
  TensorType p = tensor(D::kFloat32, {768});
  EXPECT_EQ(infer1("layer_norm", {x, p, p}, eps), x);
  TensorType xs = tensor(D::kFloat16, {"b", Dim("h") * 64});
  TensorType ps = tensor(D::kFloat16, {Dim("h") * 64});
  EXPECT_EQ(infer1("layer_norm", {xs, ps, ps}, eps), xs);
}

TEST(LayerNorm, Errors) {
  Attrs eps{{"epsilon", 1e-5}};
  TensorType x = tensor(D::kFloat32, {"batch", 768});
  TensorType p = tensor(D::kFloat32, {768});
  expect_error([&] { infer1("layer_norm", {x, tensor(D::kFloat32, {512}), p}, eps); }, Code::kInvalidArgument,
               {"op 'layer_norm'", "input 1 'gamma' has shape [512] but must be [768]", "last dim of input 0 'input'"});
  expect_error([&] { infer1("layer_norm", {x, p, tensor(D::kFloat32, {1, 768})}, eps); }, Code::kInvalidArgument,
               {"op 'layer_norm'", "input 2 'beta' has shape [1, 768] but must be [768]"});
  expect_error([&] { infer1("layer_norm", {x, p, tensor(D::kFloat16, {768})}, eps); }, Code::kInvalidArgument,
               {"op 'layer_norm'", "input 2 'beta' has dtype float16", "input 0 'input' has float32"});
  expect_error([&] { infer1("layer_norm", {x, p, p}, Attrs{{"epsilon", 0.0}}); }, Code::kInvalidArgument,
               {"op 'layer_norm'", "attribute 'epsilon' is 0", "> 0"});
  expect_error([&] { infer1("layer_norm", {x, p, p}); }, Code::kInvalidArgument,
               {"op 'layer_norm'", "missing required attribute 'epsilon'"});
  expect_error([&] { infer1("layer_norm", {tensor(D::kFloat32, {}), p, p}, eps); }, Code::kInvalidArgument,
               {"op 'layer_norm'", "input 0 'input' must have rank >= 1"});
  expect_error([&] { infer1("layer_norm", {x, p}, eps); }, Code::kInvalidArgument,
               {"op 'layer_norm'", "expected 3 inputs", "got 2"});
}

TEST(RmsNorm, DefaultsAndChecks) {
  TensorType x = tensor(D::kBFloat16, {"b", "s", 4096}, DeviceRef::gpu());
  TensorType w = tensor(D::kBFloat16, {4096}, DeviceRef::gpu());
  EXPECT_EQ(infer1("rms_norm", {x, w}), x);
  EXPECT_EQ(infer1("rms_norm", {x, w},
                   Attrs{{"epsilon", 1e-5}, {"weight_offset", 1.0}, {"multiply_before_cast", false}}),
            x);
  expect_error([&] { infer1("rms_norm", {x, tensor(D::kBFloat16, {4096})}); }, Code::kInvalidArgument,
               {"op 'rms_norm'", "input 1 'weight' is on cpu:0", "input 0 'input' is on gpu:0"});
  expect_error([&] { infer1("rms_norm", {x, tensor(D::kBFloat16, {"d"}, DeviceRef::gpu())}); },
               Code::kInvalidArgument, {"op 'rms_norm'", "input 1 'weight' has shape [d] but must be [4096]"});
  expect_error([&] { infer1("rms_norm", {x, w}, Attrs{{"epsilon", -1.0}}); }, Code::kInvalidArgument,
               {"op 'rms_norm'", "attribute 'epsilon' is -1"});
  expect_error([&] { infer1("rms_norm", {x, w}, Attrs{{"weight_offset", std::nan("")}}); }, Code::kInvalidArgument,
               {"op 'rms_norm'", "attribute 'weight_offset' is nan"});
}

}  // namespace
}  // namespace maxc

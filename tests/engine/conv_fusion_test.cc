// A convolution followed by BatchNormalization's per-channel affine and a ReLU becomes one
// fused_conv2d (oneDNN post-ops, or our loop where a path has none), for NCHW (ONNX's
// layout, where the filter is a bound weight packed once) and NHWC; results stay the same.
#include <gtest/gtest.h>

#include <random>

#include "engine_test_util.h"

namespace maxc {
namespace {

using engine_test::f32;
using engine_test::random_tensor;

struct Case {
  bool nchw;
  int64_t kernel, stride;
  bool relu;
};

constexpr int64_t kIn = 5, kOut = 12, kSize = 9;

// y = [relu](conv2d(x, f, b) * scale + shift), scale and shift per output channel.
Graph conv_bn(const Case& c) {
  Graph g("conv_bn");
  const std::vector<Dim> x_dims = c.nchw ? std::vector<Dim>{"n", kIn, kSize, kSize} : std::vector<Dim>{"n", kSize, kSize, kIn};
  ValueId x = g.add_input("x", f32(x_dims));
  const std::vector<Dim> f_dims = c.nchw ? std::vector<Dim>{kOut, kIn, c.kernel, c.kernel}
                                         : std::vector<Dim>{c.kernel, c.kernel, kIn, kOut};
  ValueId f = g.add_weight("f", f32(f_dims));
  ValueId b = g.add_weight("b", f32({kOut}));
  const std::vector<Dim> channel = c.nchw ? std::vector<Dim>{kOut, 1, 1} : std::vector<Dim>{kOut};
  ValueId scale = g.add_weight("scale", f32(channel));
  ValueId shift = g.add_weight("shift", f32(channel));
  const int64_t pad = c.kernel / 2;
  Attrs attrs{{"stride", std::vector<int64_t>{c.stride, c.stride}},
              {"padding", std::vector<int64_t>{pad, pad, pad, pad}},
              {"input_layout", std::string(c.nchw ? "NCHW" : "NHWC")},
              {"filter_layout", std::string(c.nchw ? "FCRS" : "RSCF")}};
  ValueId y = g.add_op("conv2d", {x, f, b}, attrs)[0];
  y = g.add_op("add", {g.add_op("mul", {y, scale})[0], shift})[0];
  if (c.relu) y = g.add_op("relu", {y})[0];
  g.set_outputs({{"y", y}});
  return g;
}

NamedTensors weights(const Case& c) {
  const std::vector<int64_t> f = c.nchw ? std::vector<int64_t>{kOut, kIn, c.kernel, c.kernel}
                                        : std::vector<int64_t>{c.kernel, c.kernel, kIn, kOut};
  const std::vector<int64_t> channel = c.nchw ? std::vector<int64_t>{kOut, 1, 1} : std::vector<int64_t>{kOut};
  return {{"f", random_tensor(f, 1)},
          {"b", random_tensor({kOut}, 2)},
          {"scale", random_tensor(channel, 3)},
          {"shift", random_tensor(channel, 4)}};
}

TEST(ConvFusion, BatchNormAndReluJoinTheConvolution) {
  for (const Case& c : {Case{true, 3, 1, true}, Case{true, 7, 2, true}, Case{true, 1, 1, false},
                        Case{false, 3, 1, true}, Case{false, 1, 1, true}}) {
    SCOPED_TRACE(testing::Message() << (c.nchw ? "NCHW" : "NHWC") << " k" << c.kernel << " s" << c.stride);
    Graph g = conv_bn(c);
    auto ctx = Context::create({});
    CompileSettings plain;
    plain.fuse = false;
    auto fused = Model::create(CompiledModel::compile(ctx, g, {}), weights(c));
    auto reference = Model::create(CompiledModel::compile(ctx, g, plain), weights(c));
    const auto& nodes = fused->compiled()->program().nodes;
    ASSERT_EQ(nodes.size(), 1u);
    EXPECT_EQ(nodes[0].op, "fused_conv2d");
    EXPECT_EQ(std::get<std::string>(*nodes[0].attrs.find("activation")), c.relu ? "relu" : "none");
    for (int64_t batch : {1, 3}) {
      const std::vector<int64_t> dims = c.nchw ? std::vector<int64_t>{batch, kIn, kSize, kSize}
                                               : std::vector<int64_t>{batch, kSize, kSize, kIn};
      std::vector<Ref<Tensor>> in = {random_tensor(dims, 10 + static_cast<uint32_t>(batch))};
      const auto a = fused->execute(in)[0], b = reference->execute(in)[0];
      ASSERT_EQ(a->num_elements(), b->num_elements());
      const auto* pa = reinterpret_cast<const float*>(a->data());
      const auto* pb = reinterpret_cast<const float*>(b->data());
      for (int64_t i = 0; i < a->num_elements(); ++i) ASSERT_NEAR(pa[i], pb[i], 1e-4f) << "batch " << batch << " at " << i;
    }
  }
}

// The mul's result read elsewhere too: the conv stays alone (the ops run as written).
TEST(ConvFusion, SharedIntermediatesStayUnfused) {
  Graph g("shared");
  ValueId x = g.add_input("x", f32({1, kIn, kSize, kSize}));
  ValueId f = g.add_weight("f", f32({kOut, kIn, 3, 3}));
  ValueId scale = g.add_weight("scale", f32({kOut, 1, 1}));
  Attrs attrs{{"padding", std::vector<int64_t>{1, 1, 1, 1}},
              {"input_layout", std::string("NCHW")},
              {"filter_layout", std::string("FCRS")}};
  ValueId y = g.add_op("conv2d", {x, f}, attrs)[0];
  g.set_outputs({{"y", y}, {"z", g.add_op("mul", {y, scale})[0]}});
  auto cm = CompiledModel::compile(Context::create({}), g, {});
  for (const Node& n : cm->program().nodes) EXPECT_NE(n.op, "fused_conv2d");
}

}  // namespace
}  // namespace maxc

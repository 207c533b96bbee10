// A convolution followed by BatchNormalization's per-channel affine and a ReLU becomes one
// fused_conv2d (oneDNN post-ops, or our loop where a path has none), for NCHW (ONNX's
// layout, where the filter is a bound weight packed once; the convolution then runs NHWC,
// compiler/channels_last.cc) and NHWC; results stay the same.
#include <gtest/gtest.h>

#include <random>
#include <span>
#include <string_view>

#include "compiler/passes.h"
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
    // NCHW: the convolution between the permutes into NHWC and back.
    const auto& nodes = fused->compiled()->program().nodes;
    ASSERT_EQ(nodes.size(), c.nchw ? 3u : 1u);
    const Node& conv = nodes[c.nchw ? 1 : 0];
    EXPECT_EQ(conv.op, "fused_conv2d");
    EXPECT_EQ(std::get<std::string>(*conv.attrs.find("activation")), c.relu ? "relu" : "none");
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

// The mul's result read elsewhere too: the conv stays alone (the ops run as written), a
// fused_conv2d with no scale.
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
  for (const Node& n : cm->program().nodes)
    if (n.op == "fused_conv2d") EXPECT_FALSE(std::get<bool>(*n.attrs.find("has_scale")));
}

// A mul by one value for every channel is no per-channel scale: the conv stays unfused
// with it, and the result is still right.
TEST(ConvFusion, ScalarScaleStaysAMul) {
  Graph g("scalar_scale");
  ValueId x = g.add_input("x", f32({1, kIn, kSize, kSize}));
  ValueId f = g.add_weight("f", f32({kOut, kIn, 3, 3}));
  ValueId s = g.add_weight("s", f32({1, 1, 1}));
  Attrs attrs{{"padding", std::vector<int64_t>{1, 1, 1, 1}},
              {"input_layout", std::string("NCHW")},
              {"filter_layout", std::string("FCRS")}};
  g.set_outputs({{"y", g.add_op("mul", {g.add_op("conv2d", {x, f}, attrs)[0], s})[0]}});
  const NamedTensors w = {{"f", random_tensor({kOut, kIn, 3, 3}, 1)}, {"s", random_tensor({1, 1, 1}, 2)}};
  auto ctx = Context::create({});
  CompileSettings plain;
  plain.fuse = false;
  auto fused = Model::create(CompiledModel::compile(ctx, g, {}), w);
  auto reference = Model::create(CompiledModel::compile(ctx, g, plain), w);
  const std::vector<Ref<Tensor>> in = {random_tensor({1, kIn, kSize, kSize}, 3)};
  const auto a = fused->execute(in)[0], b = reference->execute(in)[0];
  for (int64_t i = 0; i < a->num_elements(); ++i)
    ASSERT_NEAR(reinterpret_cast<const float*>(a->data())[i], reinterpret_cast<const float*>(b->data())[i], 1e-4f);
}

// ---- channels-last (compiler/channels_last.cc) ----

Attrs nchw_conv(int64_t kernel, int64_t groups = 1) {
  const int64_t pad = kernel / 2;
  return {{"padding", std::vector<int64_t>{pad, pad, pad, pad}},
          {"groups", groups},
          {"input_layout", std::string("NCHW")},
          {"filter_layout", std::string("FCRS")}};
}

ValueId constant_channels(Graph& g, int64_t c, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(c));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  for (float& x : v) x = u(rng);
  const auto* bytes = reinterpret_cast<const uint8_t*>(v.data());
  return g.add_constant(Constant::copy_of(f32({c, 1, 1}), std::span(bytes, v.size() * sizeof(float))));
}

// The graph compiled as the engine does, and with no fusion at all: the reference.
std::pair<Ref<Model>, Ref<Model>> fused_and_plain(const Graph& g, const NamedTensors& w) {
  auto ctx = Context::create({});
  CompileSettings plain;
  plain.fuse = false;
  return {Model::create(CompiledModel::compile(ctx, g, {}), w), Model::create(CompiledModel::compile(ctx, g, plain), w)};
}

void expect_same_outputs(Model& a, Model& b, const std::vector<Ref<Tensor>>& in) {
  const auto ya = a.execute(in)[0], yb = b.execute(in)[0];
  ASSERT_EQ(ya->dims(), yb->dims());
  const auto* pa = reinterpret_cast<const float*>(ya->data());
  const auto* pb = reinterpret_cast<const float*>(yb->data());
  for (int64_t i = 0; i < ya->num_elements(); ++i) ASSERT_NEAR(pa[i], pb[i], 1e-4f) << "at " << i;
}

int count_ops(const Program& p, std::string_view op) {
  int n = 0;
  for (const Node& node : p.nodes) n += node.op == op;
  return n;
}

void expect_nhwc_convs(const Program& p) {
  for (const Node& n : p.nodes)
    if (n.op == "fused_conv2d") EXPECT_EQ(std::get<std::string>(*n.attrs.find("input_layout")), "NHWC") << p.to_string();
}

// A residual block over c channels: every convolution, the residual add and the ReLUs run
// on NHWC activations, entered once at the input and left once at the output, and the
// add + ReLU join the last convolution. Constant batch-norm affines fold into the packed
// filters and biases (the residual is then a sum post-op, in the residual's own buffer);
// bound-weight ones stay binary post-ops, before a binary add.
Graph residual_block(int64_t c, bool constant_bn) {
  Graph g("residual");
  ValueId x = g.add_input("x", f32({"n", c, 7, 7}));
  auto conv_bn_relu = [&](ValueId in, const char* filter, int64_t c_in, int64_t c_out, int64_t kernel, bool relu) {
    ValueId y = g.add_op("conv2d", {in, g.add_weight(filter, f32({c_out, c_in, kernel, kernel}))}, nchw_conv(kernel))[0];
    const std::string name(filter);
    ValueId scale = constant_bn ? constant_channels(g, c_out, 1) : g.add_weight(name + "_scale", f32({c_out, 1, 1}));
    ValueId shift = constant_bn ? constant_channels(g, c_out, 2) : g.add_weight(name + "_shift", f32({c_out, 1, 1}));
    y = g.add_op("add", {g.add_op("mul", {y, scale})[0], shift})[0];
    return relu ? g.add_op("relu", {y})[0] : y;
  };
  ValueId a = conv_bn_relu(x, "f0", c, c, 1, true);
  ValueId y = conv_bn_relu(conv_bn_relu(a, "f1", c, 2 * c, 1, true), "f2", 2 * c, c, 3, false);
  g.set_outputs({{"y", g.add_op("relu", {g.add_op("add", {y, a})[0]})[0]}});
  return g;
}

TEST(ChannelsLast, ResidualBlockStaysNhwc) {
  for (const auto& [c, constant_bn] : {std::pair{int64_t{16}, true}, std::pair{int64_t{16}, false},
                                       std::pair{int64_t{5}, true}, std::pair{int64_t{5}, false}}) {
    SCOPED_TRACE(str_cat(c, " channels, ", constant_bn ? "constant batch norm" : "batch norm from weights"));
    const Graph g = residual_block(c, constant_bn);
    NamedTensors w = {{"f0", random_tensor({c, c, 1, 1}, 1)},
                      {"f1", random_tensor({2 * c, c, 1, 1}, 2)},
                      {"f2", random_tensor({c, 2 * c, 3, 3}, 3)}};
    if (!constant_bn)
      for (auto [name, channels] : {std::pair{"f0", c}, {"f1", 2 * c}, {"f2", c}}) {
        w.emplace_back(std::string(name) + "_scale", random_tensor({channels, 1, 1}, 4, 0.5f, 1.5f));
        w.emplace_back(std::string(name) + "_shift", random_tensor({channels, 1, 1}, 5));
      }
    auto [fused, reference] = fused_and_plain(g, w);
    const Program& p = fused->compiled()->program();
    EXPECT_EQ(count_ops(p, "permute"), 2) << p.to_string();
    EXPECT_EQ(count_ops(p, "fused_conv2d"), 3) << p.to_string();
    EXPECT_EQ(count_ops(p, "fused_elementwise"), 0) << p.to_string();
    expect_nhwc_convs(p);
    const Node& last = p.nodes[p.nodes.size() - 2];
    EXPECT_TRUE(last.attrs.has("has_residual")) << p.to_string();
    for (int64_t batch : {1, 2}) expect_same_outputs(*fused, *reference, {random_tensor({batch, c, 7, 7}, 9)});
  }
}

// A network's stem and head: a convolution over 3 channels, a pool (imported from ONNX as
// NHWC between two permutes), a depthwise and a pointwise convolution, and a global average
// pool (means over H and W). All of it runs NHWC: the input is permuted once, the pool reads
// the stem's output as it is, the means reduce the NHWC form, and one permute leaves at the
// end, for max and average pools alike.
TEST(ChannelsLast, StemPoolDepthwiseAndGlobalMeanStayNhwc) {
  for (const char* pool : {"max_pool2d", "avg_pool2d"}) {
    SCOPED_TRACE(pool);
    Graph g("stem");
    ValueId x = g.add_input("x", f32({"n", 3, 12, 12}));
    ValueId y = g.add_op("conv2d", {x, g.add_weight("f0", f32({16, 3, 3, 3}))}, nchw_conv(3))[0];
    y = g.add_op("permute", {g.add_op("relu", {y})[0]}, {{"dims", std::vector<int64_t>{0, 2, 3, 1}}})[0];
    y = g.add_op(pool, {y}, {{"kernel_size", std::vector<int64_t>{3, 3}}, {"stride", std::vector<int64_t>{2, 2}},
                           {"padding", std::vector<int64_t>{1, 1}}})[0];
    y = g.add_op("permute", {y}, {{"dims", std::vector<int64_t>{0, 3, 1, 2}}})[0];
    y = g.add_op("conv2d", {y, g.add_weight("f1", f32({16, 1, 3, 3}))}, nchw_conv(3, 16))[0];
    y = g.add_op("conv2d", {y, g.add_weight("f2", f32({8, 16, 1, 1}))}, nchw_conv(1))[0];
    y = g.add_op("mean", {g.add_op("mean", {y}, {{"axis", int64_t{2}}})[0]}, {{"axis", int64_t{3}}})[0];
    g.set_outputs({{"y", y}});
    const NamedTensors w = {{"f0", random_tensor({16, 3, 3, 3}, 1)},
                            {"f1", random_tensor({16, 1, 3, 3}, 2)},
                            {"f2", random_tensor({8, 16, 1, 1}, 3)}};
    auto [fused, reference] = fused_and_plain(g, w);
    const Program& p = fused->compiled()->program();
    EXPECT_EQ(count_ops(p, "permute"), 2) << p.to_string();
    EXPECT_EQ(count_ops(p, "fused_conv2d"), 3) << p.to_string();
    EXPECT_EQ(count_ops(p, pool), 1) << p.to_string();
    EXPECT_EQ(count_ops(p, "mean"), 2) << p.to_string();
    expect_nhwc_convs(p);
    EXPECT_EQ(p.nodes.front().op, "permute") << p.to_string();
    EXPECT_EQ(p.nodes.back().op, "permute") << p.to_string();
    for (int64_t batch : {1, 3}) expect_same_outputs(*fused, *reference, {random_tensor({batch, 3, 12, 12}, 3)});
  }
}

// SqueezeNet's fire module and its mirror: two branches joined by a concat along the
// channels, then split apart again along them (and a concat along W, with a negative
// axis). The joins run on the NHWC forms too: one permute in, one out.
TEST(ChannelsLast, ConcatAndSplitStayNhwc) {
  Graph g("fire");
  ValueId x = g.add_input("x", f32({"n", 4, 6, 6}));
  ValueId s = g.add_op("relu", {g.add_op("conv2d", {x, g.add_weight("f0", f32({3, 4, 1, 1}))}, nchw_conv(1))[0]})[0];
  ValueId a = g.add_op("conv2d", {s, g.add_weight("f1", f32({5, 3, 1, 1}))}, nchw_conv(1))[0];
  ValueId b = g.add_op("conv2d", {s, g.add_weight("f2", f32({6, 3, 3, 3}))}, nchw_conv(3))[0];
  ValueId y = g.add_op("concat", {a, b}, {{"axis", int64_t{1}}})[0];
  auto parts = g.add_op("split", {y}, {{"split_sizes", std::vector<Dim>{Dim(7), Dim(4)}}, {"axis", int64_t{1}}});
  ValueId c = g.add_op("conv2d", {parts[0], g.add_weight("f3", f32({4, 7, 1, 1}))}, nchw_conv(1))[0];
  ValueId d = g.add_op("conv2d", {parts[1], g.add_weight("f4", f32({4, 4, 1, 1}))}, nchw_conv(1))[0];
  g.set_outputs({{"y", g.add_op("concat", {c, d}, {{"axis", int64_t{-1}}})[0]}});
  const NamedTensors w = {{"f0", random_tensor({3, 4, 1, 1}, 1)}, {"f1", random_tensor({5, 3, 1, 1}, 2)},
                          {"f2", random_tensor({6, 3, 3, 3}, 3)}, {"f3", random_tensor({4, 7, 1, 1}, 4)},
                          {"f4", random_tensor({4, 4, 1, 1}, 5)}};
  auto [fused, reference] = fused_and_plain(g, w);
  const Program& p = fused->compiled()->program();
  EXPECT_EQ(count_ops(p, "permute"), 2) << p.to_string();
  EXPECT_EQ(count_ops(p, "concat"), 2) << p.to_string();
  expect_nhwc_convs(p);
  for (int64_t batch : {1, 2}) expect_same_outputs(*fused, *reference, {random_tensor({batch, 4, 6, 6}, 9)});
}

// A squeeze-and-excitation block (MobileNetV3, PP-OCR): a [N, C, 1, 1] scale computed from
// the map's means multiplies the [N, C, H, W] map. The broadcasting multiply runs on the
// NHWC forms of both, so the block never leaves NHWC.
TEST(ChannelsLast, SqueezeExcitationStaysNhwc) {
  Graph g("se");
  ValueId x = g.add_input("x", f32({"n", 8, 5, 7}));
  ValueId y = g.add_op("conv2d", {x, g.add_weight("f0", f32({8, 8, 3, 3}))}, nchw_conv(3))[0];
  ValueId s = g.add_op("mean", {g.add_op("mean", {y}, {{"axis", int64_t{2}}})[0]}, {{"axis", int64_t{3}}})[0];
  s = g.add_op("sigmoid", {g.add_op("conv2d", {s, g.add_weight("f1", f32({8, 8, 1, 1}))}, nchw_conv(1))[0]})[0];
  y = g.add_op("mul", {y, s})[0];
  g.set_outputs({{"y", g.add_op("conv2d", {y, g.add_weight("f2", f32({4, 8, 1, 1}))}, nchw_conv(1))[0]}});
  const NamedTensors w = {{"f0", random_tensor({8, 8, 3, 3}, 1)}, {"f1", random_tensor({8, 8, 1, 1}, 2)},
                          {"f2", random_tensor({4, 8, 1, 1}, 3)}};
  auto [fused, reference] = fused_and_plain(g, w);
  const Program& p = fused->compiled()->program();
  EXPECT_EQ(count_ops(p, "permute"), 2) << p.to_string();
  expect_nhwc_convs(p);
  for (int64_t batch : {1, 2}) expect_same_outputs(*fused, *reference, {random_tensor({batch, 8, 5, 7}, 9)});
}

// Two convolutions read one weight with different constant scales: each packs its own
// scaled copy (the layout key names the scale), and neither sees the other's.
TEST(ChannelsLast, OneWeightScaledTwoWays) {
  Graph g("shared_filter");
  ValueId f = g.add_weight("f", f32({8, 8, 3, 3}));
  auto conv_bn = [&](const char* input, uint32_t seed) {
    ValueId y = g.add_op("conv2d", {g.add_input(input, f32({1, 8, 5, 5})), f}, nchw_conv(3))[0];
    return g.add_op("mul", {y, constant_channels(g, 8, seed)})[0];
  };
  g.set_outputs({{"y", g.add_op("sub", {conv_bn("a", 5), conv_bn("b", 6)})[0]}});
  const NamedTensors w = {{"f", random_tensor({8, 8, 3, 3}, 7)}};
  auto [fused, reference] = fused_and_plain(g, w);
  EXPECT_EQ(count_ops(fused->compiled()->program(), "fused_conv2d"), 2);
  expect_same_outputs(*fused, *reference, {random_tensor({1, 8, 5, 5}, 8), random_tensor({1, 8, 5, 5}, 9)});
}

// Without convs_channels_last (the engine clears it for a GPU), convolutions keep the
// graph's NCHW and no permute is added.
TEST(ChannelsLast, OnlyWhereTheOptionAsks) {
  Graph g("conv");
  ValueId x = g.add_input("x", f32({1, 8, 5, 5}));
  g.set_outputs({{"y", g.add_op("relu", {g.add_op("conv2d", {x, g.add_weight("f", f32({8, 8, 3, 3}))}, nchw_conv(3))[0]})[0]}});
  CompileOptions opts;
  opts.convs_channels_last = false;
  const Program p = compile_program(g, opts);
  EXPECT_EQ(count_ops(p, "permute"), 0) << p.to_string();
  ASSERT_EQ(count_ops(p, "fused_conv2d"), 1) << p.to_string();
  for (const Node& n : p.nodes)
    if (n.op == "fused_conv2d") EXPECT_EQ(std::get<std::string>(*n.attrs.find("input_layout")), "NCHW");
  EXPECT_EQ(count_ops(compile_program(g, {}), "permute"), 2);
}

}  // namespace
}  // namespace maxc

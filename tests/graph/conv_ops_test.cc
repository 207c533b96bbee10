// Type inference of conv2d, max_pool2d and avg_pool2d, with static and symbolic spatial dims.
#include <gtest/gtest.h>

#include <climits>

#include "graph/op_test_util.h"

namespace maxc {
namespace {

using testing::expect_error;
using testing::infer1;
using testing::ints;
using testing::tensor;
using D = DType;

TensorType f32(std::vector<Dim> d) { return tensor(D::kFloat32, std::move(d)); }

TEST(Conv2d, StaticShapes) {
  // 3x3 filter, no padding: 32 -> 30.
  EXPECT_EQ(infer1("conv2d", {f32({1, 32, 32, 3}), f32({3, 3, 3, 16})}), f32({1, 30, 30, 16}));
  // stride 2, padding 1 on each side: (224 + 2 - 7) // 2 + 1 = 110.
  Attrs a{{"stride", ints({2, 2})}, {"padding", ints({1, 1, 1, 1})}};
  EXPECT_EQ(infer1("conv2d", {f32({8, 224, 224, 3}), f32({7, 7, 3, 64}), f32({64})}, a), f32({8, 110, 110, 64}));
  // dilation 2: effective kernel 5; asymmetric padding on W.
  Attrs b{{"dilation", ints({2, 2})}, {"padding", ints({0, 0, 2, 0})}};
  EXPECT_EQ(infer1("conv2d", {f32({1, 9, 9, 4}), f32({3, 3, 4, 4})}, b), f32({1, 5, 7, 4}));
  // groups: 8 channels in 4 groups of 2 (a depthwise-like filter).
  EXPECT_EQ(infer1("conv2d", {f32({1, 5, 5, 8}), f32({1, 1, 2, 8})}, Attrs{{"groups", int64_t{4}}}), f32({1, 5, 5, 8}));
}

TEST(Conv2d, SymbolicSpatialDims) {
  Attrs a{{"stride", ints({2, 2})}, {"padding", ints({1, 1, 1, 1})}};
  EXPECT_EQ(infer1("conv2d", {f32({"n", "h", "w", 3}), f32({3, 3, 3, 16})}, a),
            f32({"n", floordiv(Dim("h") - 1, 2) + 1, floordiv(Dim("w") - 1, 2) + 1, 16}));
  // Same padding, stride 1: the size stays.
  Attrs same{{"padding", ints({1, 1, 1, 1})}};
  EXPECT_EQ(infer1("conv2d", {f32({"n", "h", Dim("w") * 2, 3}), f32({3, 3, 3, 8})}, same),
            f32({"n", "h", Dim("w") * 2, 8}));
}

TEST(Conv2d, OtherLayouts) {
  Attrs a{{"input_layout", std::string("NCHW")}, {"filter_layout", std::string("FCRS")}};
  EXPECT_EQ(infer1("conv2d", {f32({1, 3, 32, "w"}), f32({16, 3, 5, 5})}, a), f32({1, 16, 28, Dim("w") - 4}));
}

TEST(Conv2d, Errors) {
  TensorType x = f32({1, 8, 8, 3});
  expect_error([&] { infer1("conv2d", {x, f32({3, 3, 4, 16})}); }, Code::kInvalidArgument,
               {"op 'conv2d'", "input 1 'filter' [3, 3, 4, 16] (RSCF) has 4 input channels per group",
                "input 0 'x' [1, 8, 8, 3] (NHWC) has 3 channels"});
  expect_error([&] { infer1("conv2d", {x, f32({3, 3, 3, 16}), f32({8})}); }, Code::kInvalidArgument,
               {"op 'conv2d'", "input 2 'bias' has shape [8] but must be [16]"});
  expect_error([&] { infer1("conv2d", {x, f32({9, 3, 3, 16})}); }, Code::kInvalidArgument,
               {"op 'conv2d'", "the dilated kernel (9) is larger than the padded input (8) along H"});
  expect_error([&] { infer1("conv2d", {x, f32({3, 3, 3, 16})}, Attrs{{"stride", ints({1})}}); },
               Code::kInvalidArgument, {"op 'conv2d'", "attribute 'stride' must have 2 entries, got 1 [1]"});
  expect_error([&] { infer1("conv2d", {x, f32({3, 3, 3, 16})}, Attrs{{"stride", ints({1, 0})}}); },
               Code::kInvalidArgument, {"op 'conv2d'", "attribute 'stride' [1, 0] has 0 at entry 1; entries must be >= 1"});
  expect_error([&] { infer1("conv2d", {x, f32({3, 3, 3, 16})}, Attrs{{"padding", ints({0, 0, -1, 0})}}); },
               Code::kInvalidArgument, {"op 'conv2d'", "attribute 'padding'", "must be >= 0"});
  expect_error([&] { infer1("conv2d", {f32({1, 8, 8, 6}), f32({3, 3, 2, 5})}, Attrs{{"groups", int64_t{3}}}); },
               Code::kInvalidArgument, {"op 'conv2d'", "the 5 output channels", "not divisible by groups (3)"});
  expect_error([&] { infer1("conv2d", {f32({8, 8, 3}), f32({3, 3, 3, 16})}); }, Code::kInvalidArgument,
               {"op 'conv2d'", "input 0 'x' must have rank 4, got rank 3"});
  expect_error([&] { infer1("conv2d", {x, tensor(D::kFloat16, {3, 3, 3, 16})}); }, Code::kInvalidArgument,
               {"op 'conv2d'", "input 1 'filter' has dtype float16"});
  expect_error([&] { infer1("conv2d", {x, f32({3, 3, 3, 16})}, Attrs{{"input_layout", std::string("NDHWC")}}); },
               Code::kInvalidArgument, {"op 'conv2d'", "attribute 'input_layout' is \"NDHWC\""});
  expect_error([&] { infer1("conv2d", {x, f32({3, 3, 3, 16})}, Attrs{{"padding", ints({INT64_MAX, 1, 0, 0})}}); },
               Code::kInvalidArgument, {"overflows int64"});
  expect_error([&] { infer1("conv2d", {x, f32({3, 3, 3, 16})}, Attrs{{"groups", int64_t{0}}}); },
               Code::kInvalidArgument, {"op 'conv2d'", "attribute 'groups' is 0"});
}

TEST(Pool2d, FloorAndCeil) {
  for (const char* op : {"max_pool2d", "avg_pool2d"}) {
    Attrs k2{{"kernel_size", ints({2, 2})}, {"stride", ints({2})}};
    EXPECT_EQ(infer1(op, {f32({1, 7, 8, 3})}, k2), f32({1, 3, 4, 3})) << op;
    k2.set("ceil_mode", true);
    EXPECT_EQ(infer1(op, {f32({1, 7, 8, 3})}, k2), f32({1, 4, 4, 3})) << op;
    // kernel 3, stride 2, padding 1 (both sides): (112 + 2 - 3) // 2 + 1 = 56.
    Attrs k3{{"kernel_size", ints({3, 3})}, {"stride", ints({2, 2})}, {"padding", ints({1})}};
    EXPECT_EQ(infer1(op, {f32({"n", 112, "w", 64})}, k3),
              f32({"n", 56, floordiv(Dim("w") - 1, 2) + 1, 64}))
        << op;
    EXPECT_EQ(infer1(op, {f32({1, 5, 5, 1})}, Attrs{{"kernel_size", ints({2, 2})}, {"dilation", ints({2, 1})}}),
              f32({1, 3, 4, 1}))
        << op;
    std::string name = std::string("op '") + op + "'";
    expect_error([&] { infer1(op, {f32({1, 4, 4, 1})}); }, Code::kInvalidArgument,
                 {name, "missing required attribute 'kernel_size'"});
    expect_error([&] { infer1(op, {f32({1, 4, 4, 1})}, Attrs{{"kernel_size", ints({5, 1})}}); }, Code::kInvalidArgument,
                 {name, "the dilated kernel (5) is larger than the padded input (4) along H"});
    expect_error([&] { infer1(op, {f32({1, 4, 4, 1})}, Attrs{{"kernel_size", ints({2, 2})}, {"stride", ints({1, 1, 1})}}); },
                 Code::kInvalidArgument, {name, "attribute 'stride' must have 1 or 2 entries, got 3"});
    expect_error([&] { infer1(op, {f32({4, 4, 1})}, Attrs{{"kernel_size", ints({2, 2})}}); }, Code::kInvalidArgument,
                 {name, "input 0 'input' must have rank 4, got rank 3"});
  }
  EXPECT_EQ(infer1("max_pool2d", {tensor(D::kInt8, {1, 4, 4, 1})}, Attrs{{"kernel_size", ints({2, 2})}}),
            tensor(D::kInt8, {1, 3, 3, 1}));
  expect_error([] { infer1("avg_pool2d", {tensor(D::kInt8, {1, 4, 4, 1})}, Attrs{{"kernel_size", ints({2, 2})}}); },
               Code::kInvalidArgument, {"op 'avg_pool2d'", "input 0 'input' must have a float dtype"});
  EXPECT_EQ(infer1("avg_pool2d", {f32({1, 4, 4, 1})}, Attrs{{"kernel_size", ints({2, 2})}, {"count_boundary", false}}),
            f32({1, 3, 3, 1}));
}

}  // namespace
}  // namespace maxc

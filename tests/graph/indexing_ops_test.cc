// Type inference of slice_tensor, gather, gather_nd, scatter and scatter_nd.
#include <gtest/gtest.h>

#include <climits>

#include "graph/op_test_util.h"

namespace maxc {
namespace {

using testing::axis;
using testing::dims;
using testing::expect_error;
using testing::infer1;
using testing::ints;
using testing::tensor;
using D = DType;

constexpr int64_t kOpen = INT64_MAX;

TensorType f32(std::vector<Dim> d) { return tensor(D::kFloat32, std::move(d)); }

Attrs slice(std::vector<Dim> starts, std::vector<Dim> stops, std::vector<int64_t> steps = {}) {
  Attrs a{{"starts", std::move(starts)}, {"stops", std::move(stops)}};
  if (!steps.empty()) a.set("steps", std::move(steps));
  return a;
}

TEST(SliceTensor, StaticBounds) {
  TensorType x = f32({10, 6});
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({2}, {5})), f32({3, 6}));
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({-3}, {kOpen})), f32({3, 6}));
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({0, 1}, {kOpen, kOpen}, {3, 2})), f32({4, 3}));
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({5}, {2})), f32({0, 6}));  // empty, like numpy
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({-10}, {10})), f32({10, 6}));
}

TEST(SliceTensor, NegativeSteps) {
  TensorType x = f32({10});
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({kOpen}, {kOpen}, {-1})), f32({10}));  // x[::-1]
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({-1}, {-11}, {-1})), f32({10}));
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({8}, {2}, {-2})), f32({3}));           // 8, 6, 4
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({kOpen}, {kOpen}, {-3})), f32({4}));   // 9, 6, 3, 0
  EXPECT_EQ(infer1("slice_tensor", {f32({"n"})}, slice({kOpen}, {kOpen}, {-1})), f32({"n"}));
}

TEST(SliceTensor, SymbolicDimsAndBounds) {
  TensorType x = f32({"b", "seq", 64});
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({0, 1}, {kOpen, kOpen})), f32({"b", Dim("seq") - 1, 64}));
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({0, 0}, {kOpen, -1})), f32({"b", Dim("seq") - 1, 64}));
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({0, -4}, {kOpen, kOpen})), f32({"b", 4, 64}));
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({0, 0}, {kOpen, "n"})), f32({"b", "n", 64}));  // x[:, :n]
  EXPECT_EQ(infer1("slice_tensor", {x}, slice({0, "m"}, {kOpen, Dim("m") + 8})), f32({"b", 8, 64}));
  EXPECT_EQ(infer1("slice_tensor", {f32({Dim("h") * 2})}, slice({0}, {kOpen}, {2})), f32({"h"}));
  // out_dims names a length the graph cannot simplify.
  EXPECT_EQ(infer1("slice_tensor", {f32({"n"})}, Attrs{{"starts", dims({0})}, {"stops", dims({kOpen})},
                                                       {"steps", ints({2})}, {"out_dims", dims({"half"})}}),
            f32({"half"}));
}

TEST(SliceTensor, IntegerIndicesAndNewAxes) {
  TensorType x = f32({"b", 10, 6});
  // x[:, 3] -> [b, 6]
  EXPECT_EQ(infer1("slice_tensor", {x},
                   Attrs{{"starts", dims({0, 3})}, {"stops", dims({kOpen, 4})}, {"squeeze_axes", ints({1})}}),
            f32({"b", 6}));
  // x[..., None, :] -> [b, 10, 1, 6]
  EXPECT_EQ(infer1("slice_tensor", {x}, Attrs{{"starts", dims({})}, {"stops", dims({})}, {"new_axes", ints({-2})}}),
            f32({"b", 10, 1, 6}));
  // x[None, 0, 2:4] -> [1, 2, 6]
  EXPECT_EQ(infer1("slice_tensor", {f32({5, 10, 6})},
                   Attrs{{"starts", dims({0, 2})}, {"stops", dims({1, 4})}, {"squeeze_axes", ints({0})},
                         {"new_axes", ints({0})}}),
            f32({1, 2, 6}));
}

TEST(SliceTensor, Errors) {
  TensorType x = f32({10, "s"});
  expect_error([&] { infer1("slice_tensor", {x}, slice({11}, {kOpen})); }, Code::kInvalidArgument,
               {"op 'slice_tensor'", "start 11 of axis 0 is out of range for dim 10 with step 1 (expected -10 to 10)"});
  expect_error([&] { infer1("slice_tensor", {x}, slice({10}, {kOpen}, {-1})); }, Code::kInvalidArgument,
               {"op 'slice_tensor'", "start 10 of axis 0", "step -1 (expected -11 to 9)"});
  expect_error([&] { infer1("slice_tensor", {x}, slice({0}, {-11})); }, Code::kInvalidArgument,
               {"op 'slice_tensor'", "stop -11 of axis 0"});
  expect_error([&] { infer1("slice_tensor", {x}, slice({0}, {5}, {0})); }, Code::kInvalidArgument,
               {"op 'slice_tensor'", "attribute 'steps' [0] has 0 at entry 0"});
  expect_error([&] { infer1("slice_tensor", {x}, slice({0}, {5}, {INT64_MIN})); }, Code::kInvalidArgument,
               {"op 'slice_tensor'", "attribute 'steps'", "non-zero"});
  expect_error([&] { infer1("slice_tensor", {x}, slice({0, 0, 0}, {1, 1, 1})); }, Code::kInvalidArgument,
               {"op 'slice_tensor'", "attribute 'starts' has 3 entries but input 0 'x' [10, s] has rank 2"});
  expect_error([&] { infer1("slice_tensor", {x}, slice({0}, {1, 2})); }, Code::kInvalidArgument,
               {"op 'slice_tensor'", "attributes 'starts' [0] and 'stops' [1, 2]"});
  expect_error([&] { infer1("slice_tensor", {x}, slice({0}, {5}, {1, 1})); }, Code::kInvalidArgument,
               {"op 'slice_tensor'", "attribute 'steps' must have 1 entries, got 2"});
  expect_error(
      [&] { infer1("slice_tensor", {x}, Attrs{{"starts", dims({0})}, {"stops", dims({2})}, {"squeeze_axes", ints({0})}}); },
      Code::kInvalidArgument, {"op 'slice_tensor'", "axis 0 is in attribute 'squeeze_axes' but its slice has length 2"});
  expect_error(
      [&] { infer1("slice_tensor", {x}, Attrs{{"starts", dims({0})}, {"stops", dims({2})}, {"out_dims", dims({3})}}); },
      Code::kInvalidArgument, {"op 'slice_tensor'", "attribute 'out_dims' gives axis 0 the length 3 but the slice has 2"});
  expect_error(
      [&] { infer1("slice_tensor", {x}, Attrs{{"starts", dims({})}, {"stops", dims({})}, {"new_axes", ints({0, -4})}}); },
      Code::kInvalidArgument, {"op 'slice_tensor'", "names one result axis twice"});
}

TEST(Gather, ReplacesTheAxisWithTheIndices) {
  TensorType emb = f32({"vocab", 512});
  EXPECT_EQ(infer1("gather", {emb, tensor(D::kInt64, {"b", "s"})}, axis(0)), f32({"b", "s", 512}));
  EXPECT_EQ(infer1("gather", {f32({2, 5, 3}), tensor(D::kInt32, {4})}, axis(-2)), f32({2, 4, 3}));
  EXPECT_EQ(infer1("gather", {f32({2, 5}), tensor(D::kInt32, {})}, axis(1)), f32({2}));
  expect_error([&] { infer1("gather", {emb, tensor(D::kFloat32, {3})}, axis(0)); }, Code::kInvalidArgument,
               {"op 'gather'", "input 1 'indices' must have an integer dtype, got float32"});
  expect_error([&] { infer1("gather", {emb, tensor(D::kInt64, {3})}, axis(2)); }, Code::kInvalidArgument,
               {"op 'gather'", "attribute 'axis' is 2", "rank 2"});
  expect_error([&] { infer1("gather", {emb, tensor(D::kInt64, {3})}); }, Code::kInvalidArgument,
               {"op 'gather'", "missing required attribute 'axis'"});
  expect_error([&] { infer1("gather", {emb, tensor(D::kInt64, {3}, DeviceRef::gpu())}, axis(0)); },
               Code::kInvalidArgument, {"op 'gather'", "input 1 'indices' is on gpu:0"});
}

TEST(GatherNd, SeedExample) {
  TensorType in = tensor(D::kBFloat16, {"a", "b", "c", "d", "e"});
  EXPECT_EQ(infer1("gather_nd", {in, tensor(D::kInt32, {"a", "f", 3})}, Attrs{{"batch_dims", int64_t{1}}}),
            tensor(D::kBFloat16, {"a", "f", "e"}));
  EXPECT_EQ(infer1("gather_nd", {f32({4, 5, 6}), tensor(D::kInt64, {"n", 2})}), f32({"n", 6}));
  EXPECT_EQ(infer1("gather_nd", {f32({4, 5}), tensor(D::kInt64, {3, 2})}), f32({3}));
}

TEST(GatherNd, Errors) {
  TensorType in = f32({"a", 5, 6});
  expect_error([&] { infer1("gather_nd", {in, tensor(D::kInt64, {2, "k"})}); }, Code::kInvalidArgument,
               {"op 'gather_nd'", "the last dim of input 1 'indices' [2, k] is k; it must be static"});
  expect_error([&] { infer1("gather_nd", {in, tensor(D::kInt64, {2, 4})}); }, Code::kInvalidArgument,
               {"op 'gather_nd'", "batch_dims (0) + index length (4", "exceed the rank 3"});
  expect_error([&] { infer1("gather_nd", {in, tensor(D::kInt64, {"b", 1})}, Attrs{{"batch_dims", int64_t{1}}}); },
               Code::kInvalidArgument,
               {"op 'gather_nd'", "batch axis 0 differs: input 0 'input' [a, 5, 6] has a but input 1 'indices' [b, 1] has b"});
  expect_error([&] { infer1("gather_nd", {in, tensor(D::kInt64, {"a"})}, Attrs{{"batch_dims", int64_t{1}}}); },
               Code::kInvalidArgument, {"op 'gather_nd'", "must have rank > batch_dims (1), got rank 1"});
  expect_error([&] { infer1("gather_nd", {in, tensor(D::kInt64, {1})}, Attrs{{"batch_dims", INT64_MAX}}); },
               Code::kInvalidArgument, {"op 'gather_nd'", "must have rank > batch_dims"});
  expect_error([&] { infer1("gather_nd", {in, tensor(D::kInt64, {1})}, Attrs{{"batch_dims", int64_t{-1}}}); },
               Code::kInvalidArgument, {"op 'gather_nd'", "attribute 'batch_dims' is -1"});
}

TEST(Scatter, KeepsTheInputType) {
  TensorType in = f32({"b", 8});
  EXPECT_EQ(infer1("scatter", {in, f32({"b", 2}), tensor(D::kInt64, {"b", 2})}), in);
  EXPECT_EQ(infer1("scatter", {in, f32({1, 8}), tensor(D::kInt32, {1, 8})}, axis(0)), in);
  expect_error([&] { infer1("scatter", {in, f32({"b", 2}), tensor(D::kInt64, {"b", 3})}); }, Code::kInvalidArgument,
               {"op 'scatter'", "input 2 'indices' [b, 3] must have the shape of input 1 'updates' [b, 2]"});
  expect_error([&] { infer1("scatter", {in, f32({2}), tensor(D::kInt64, {2})}); }, Code::kInvalidArgument,
               {"op 'scatter'", "input 1 'updates' [2] must have the rank 2 of input 0 'input' [b, 8]"});
  expect_error([&] { infer1("scatter", {in, tensor(D::kFloat16, {"b", 2}), tensor(D::kInt64, {"b", 2})}); },
               Code::kInvalidArgument, {"op 'scatter'", "input 1 'updates' has dtype float16 but input 0 'input' has float32"});
  expect_error([&] { infer1("scatter", {in, f32({"b", 2}), f32({"b", 2})}); }, Code::kInvalidArgument,
               {"op 'scatter'", "input 2 'indices' must have an integer dtype"});
}

TEST(ScatterNd, UpdatesMatchTheIndexedSlices) {
  TensorType in = f32({4, 5, "d"});
  EXPECT_EQ(infer1("scatter_nd", {in, f32({"n", "d"}), tensor(D::kInt64, {"n", 2})}), in);
  EXPECT_EQ(infer1("scatter_nd", {in, f32({"n"}), tensor(D::kInt64, {"n", 3})}), in);
  EXPECT_EQ(infer1("scatter_nd", {in, f32({"n", 5, "d"}), tensor(D::kInt64, {"n", 1})}), in);
  expect_error([&] { infer1("scatter_nd", {in, f32({"n", 5}), tensor(D::kInt64, {"n", 2})}); }, Code::kInvalidArgument,
               {"op 'scatter_nd'", "input 1 'updates' has shape [n, 5] but must be [n, d]"});
  expect_error([&] { infer1("scatter_nd", {in, f32({"n"}), tensor(D::kInt64, {"n", 4})}); }, Code::kInvalidArgument,
               {"op 'scatter_nd'", "the index length 4", "exceeds the rank 3"});
  expect_error([&] { infer1("scatter_nd", {in, f32({"n"}), tensor(D::kInt64, {"n", "k"})}); }, Code::kInvalidArgument,
               {"op 'scatter_nd'", "is k; it must be static"});
}

}  // namespace
}  // namespace maxc

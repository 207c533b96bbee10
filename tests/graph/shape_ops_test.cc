// Type inference of the 17 shape ops on static, symbolic and algebraic dims, and their errors.
#include <gtest/gtest.h>

#include "graph/op_test_util.h"

namespace maxc {
namespace {

using testing::axis;
using testing::dims;
using testing::expect_error;
using testing::infer1;
using testing::infer_all;
using testing::ints;
using testing::tensor;
using D = DType;

TensorType f32(std::vector<Dim> d) { return tensor(D::kFloat32, std::move(d)); }
Attrs shape(std::vector<Dim> d) { return Attrs{{"shape", std::move(d)}}; }

TEST(Reshape, StaticSymbolicAndMinusOne) {
  EXPECT_EQ(infer1("reshape", {f32({2, 3, 4})}, shape({6, 4})), f32({6, 4}));
  EXPECT_EQ(infer1("reshape", {f32({2, 3, 4})}, shape({-1, 2})), f32({12, 2}));
  EXPECT_EQ(infer1("reshape", {f32({"b", 12})}, shape({"b", -1, 4})), f32({"b", 3, 4}));
  EXPECT_EQ(infer1("reshape", {f32({"b", "s", Dim("h") * 64})}, shape({"b", "s", "h", 64})), f32({"b", "s", "h", 64}));
  EXPECT_EQ(infer1("reshape", {f32({"b", "s", 8})}, shape({Dim("b") * Dim("s"), 8})), f32({Dim("b") * Dim("s"), 8}));
  EXPECT_EQ(infer1("reshape", {f32({"b", "s", 8})}, shape({-1})), f32({Dim("b") * Dim("s") * 8}));
  EXPECT_EQ(infer1("reshape", {f32({})}, shape({1, 1})), f32({1, 1}));
}

TEST(Reshape, Errors) {
  expect_error([] { infer1("reshape", {f32({2, 3})}, shape({4, 2})); }, Code::kInvalidArgument,
               {"op 'reshape'", "attribute 'shape' [4, 2] has 8 elements but input 0 'x' [2, 3] has 6"});
  expect_error([] { infer1("reshape", {f32({"a"})}, shape({"b"})); }, Code::kInvalidArgument,
               {"op 'reshape'", "has b elements", "has a", "provably equal", "rebind"});
  expect_error([] { infer1("reshape", {f32({2, 3})}, shape({-1, -1})); }, Code::kInvalidArgument,
               {"op 'reshape'", "more than one -1 (entries 0 and 1)"});
  expect_error([] { infer1("reshape", {f32({2, 3})}, shape({-2, 3})); }, Code::kInvalidArgument,
               {"op 'reshape'", "negative dim -2 at entry 0"});
  expect_error([] { infer1("reshape", {f32({7})}, shape({-1, 2})); }, Code::kInvalidArgument,
               {"op 'reshape'", "cannot infer the -1", "input 0 'x' [7] has 7 elements", "(2 elements)"});
  expect_error([] { infer1("reshape", {f32({"n"})}, shape({-1, 2})); }, Code::kInvalidArgument,
               {"op 'reshape'", "cannot infer the -1", "has n elements"});
}

TEST(Flatten, MergesARange) {
  TensorType x = f32({"b", 3, Dim("s") + 1, 4});
  EXPECT_EQ(infer1("flatten", {x}), f32({Dim("b") * 12 * (Dim("s") + 1)}));
  EXPECT_EQ(infer1("flatten", {x}, Attrs{{"start_dim", int64_t{1}}}), f32({"b", (Dim("s") + 1) * 12}));
  EXPECT_EQ(infer1("flatten", {x}, Attrs{{"start_dim", int64_t{1}}, {"end_dim", int64_t{2}}}),
            f32({"b", (Dim("s") + 1) * 3, 4}));
  EXPECT_EQ(infer1("flatten", {x}, Attrs{{"start_dim", int64_t{2}}, {"end_dim", int64_t{2}}}), x);
  EXPECT_EQ(infer1("flatten", {f32({})}), f32({1}));
  expect_error([&] { infer1("flatten", {x}, Attrs{{"start_dim", int64_t{3}}, {"end_dim", int64_t{1}}}); },
               Code::kInvalidArgument, {"op 'flatten'", "attribute 'start_dim' (axis 3) comes after attribute 'end_dim'"});
  expect_error([&] { infer1("flatten", {x}, Attrs{{"end_dim", int64_t{4}}}); }, Code::kInvalidArgument,
               {"op 'flatten'", "attribute 'end_dim' is 4", "rank 4"});
}

TEST(SqueezeUnsqueeze, StaticOnes) {
  EXPECT_EQ(infer1("squeeze", {f32({"b", 1, 8})}, axis(1)), f32({"b", 8}));
  EXPECT_EQ(infer1("squeeze", {f32({"b", 8, 1})}, axis(-1)), f32({"b", 8}));
  EXPECT_EQ(infer1("unsqueeze", {f32({"b", 8})}, axis(0)), f32({1, "b", 8}));
  EXPECT_EQ(infer1("unsqueeze", {f32({"b", 8})}, axis(-1)), f32({"b", 8, 1}));  // counts from rank + 1
  EXPECT_EQ(infer1("unsqueeze", {f32({"b", 8})}, axis(2)), f32({"b", 8, 1}));
  EXPECT_EQ(infer1("unsqueeze", {f32({})}, axis(0)), f32({1}));
  expect_error([] { infer1("squeeze", {f32({"b", 8})}, axis(0)); }, Code::kInvalidArgument,
               {"op 'squeeze'", "axis 0 of input 0 'x' [b, 8] is b; only a static 1 can be squeezed"});
  expect_error([] { infer1("unsqueeze", {f32({"b", 8})}, axis(3)); }, Code::kInvalidArgument,
               {"op 'unsqueeze'", "attribute 'axis' is 3", "rank 3"});
  expect_error([] { infer1("squeeze", {f32({1})}); }, Code::kInvalidArgument,
               {"op 'squeeze'", "missing required attribute 'axis'"});
}

TEST(TransposePermute, ReorderDims) {
  Attrs t{{"axis_1", int64_t{-1}}, {"axis_2", int64_t{-2}}};
  EXPECT_EQ(infer1("transpose", {f32({"b", "m", Dim("n") * 2})}, t), f32({"b", Dim("n") * 2, "m"}));
  EXPECT_EQ(infer1("transpose", {f32({2, 3})}, Attrs{{"axis_1", int64_t{0}}, {"axis_2", int64_t{0}}}), f32({2, 3}));
  EXPECT_EQ(infer1("permute", {f32({"b", "s", "h", 64})}, Attrs{{"dims", ints({0, 2, 1, -1})}}),
            f32({"b", "h", "s", 64}));
  expect_error([] { infer1("transpose", {f32({2, 3})}, Attrs{{"axis_1", int64_t{0}}, {"axis_2", int64_t{2}}}); },
               Code::kInvalidArgument, {"op 'transpose'", "attribute 'axis_2' is 2", "rank 2"});
  expect_error([] { infer1("permute", {f32({2, 3, 4})}, Attrs{{"dims", ints({0, 1})}}); }, Code::kInvalidArgument,
               {"op 'permute'", "attribute 'dims' [0, 1] has 2 entries but input 0 'x' [2, 3, 4] has rank 3"});
  expect_error([] { infer1("permute", {f32({2, 3})}, Attrs{{"dims", ints({1, -1})}}); }, Code::kInvalidArgument,
               {"op 'permute'", "names axis 1 twice"});
  expect_error([] { infer1("permute", {f32({2, 3})}, Attrs{{"dims", ints({0, 5})}}); }, Code::kInvalidArgument,
               {"op 'permute'", "entry 1 of attribute 'dims' is 5"});
}

TEST(BroadcastTo, OnesStretch) {
  EXPECT_EQ(infer1("broadcast_to", {f32({2, 2})}, shape({3, 2, 2})), f32({3, 2, 2}));
  EXPECT_EQ(infer1("broadcast_to", {f32({1, "s"})}, shape({"b", 4, "s"})), f32({"b", 4, "s"}));
  // A run-time shape tensor: out_dims names the result.
  EXPECT_EQ(infer1("broadcast_to", {f32({1, 3}), tensor(D::kInt64, {2})}, Attrs{{"out_dims", dims({"n", 3})}}),
            f32({"n", 3}));
  expect_error([] { infer1("broadcast_to", {f32({2, 3})}, shape({2, 4})); }, Code::kInvalidArgument,
               {"op 'broadcast_to'", "cannot broadcast input 0 'x' [2, 3] to [2, 4]", "axis 1 is 3", "has 4"});
  expect_error([] { infer1("broadcast_to", {f32({"a"})}, shape({"b"})); }, Code::kInvalidArgument,
               {"op 'broadcast_to'", "axis 0 is a but the target has b"});
  expect_error([] { infer1("broadcast_to", {f32({2, 3})}, shape({3})); }, Code::kInvalidArgument,
               {"op 'broadcast_to'", "lower rank 1"});
  expect_error([] { infer1("broadcast_to", {f32({2})}); }, Code::kInvalidArgument,
               {"op 'broadcast_to'", "attribute 'shape' is required"});
  expect_error([] { infer1("broadcast_to", {f32({1}), tensor(D::kInt64, {1})}); }, Code::kInvalidArgument,
               {"op 'broadcast_to'", "attribute 'out_dims' is required", "input 1 'shape_tensor'"});
  expect_error([] { infer1("broadcast_to", {f32({1}), tensor(D::kInt64, {2})}, Attrs{{"out_dims", dims({4})}}); },
               Code::kInvalidArgument, {"op 'broadcast_to'", "input 1 'shape_tensor' holds 2 dims", "has 1"});
}

TEST(Concat, SumsTheAxis) {
  EXPECT_EQ(infer1("concat", {f32({2, 3}), f32({4, 3})}), f32({6, 3}));
  EXPECT_EQ(infer1("concat", {f32({"b", "s"}), f32({"b", 1}), f32({"b", "s"})}, axis(-1)),
            f32({"b", Dim("s") * 2 + 1}));
  EXPECT_EQ(infer1("concat", {f32({"b", 5})}), f32({"b", 5}));
  expect_error([] { infer1("concat", {f32({2, 3}), f32({2, 4})}); }, Code::kInvalidArgument,
               {"op 'concat'", "input 1 'values' [2, 4] differs from input 0 'values' [2, 3] at axis 1 (4 vs 3)",
                "only axis 0 may differ"});
  expect_error([] { infer1("concat", {f32({2, 3}), f32({2})}); }, Code::kInvalidArgument,
               {"op 'concat'", "input 1 'values' [2] has rank 1 but input 0 'values' [2, 3] has rank 2"});
  expect_error([] { infer1("concat", {f32({2}), tensor(D::kInt32, {2})}); }, Code::kInvalidArgument,
               {"op 'concat'", "input 1 'values' has dtype int32"});
  expect_error([] { infer1("concat", {}); }, Code::kInvalidArgument, {"op 'concat'", "at least 1 inputs", "got 0"});
  expect_error([] { infer1("concat", {f32({})}); }, Code::kInvalidArgument, {"op 'concat'", "rank 0"});
}

TEST(Stack, AddsAnAxis) {
  EXPECT_EQ(infer1("stack", {f32({"b", 3}), f32({"b", 3}), f32({"b", 3})}), f32({3, "b", 3}));
  EXPECT_EQ(infer1("stack", {f32({"b", 3}), f32({"b", 3})}, axis(-1)), f32({"b", 3, 2}));
  EXPECT_EQ(infer1("stack", {f32({}), f32({})}), f32({2}));
  expect_error([] { infer1("stack", {f32({2, 3}), f32({3, 3})}, axis(1)); }, Code::kInvalidArgument,
               {"op 'stack'", "input 1 'values' [3, 3] differs from input 0 'values' [2, 3] at axis 0"});
  expect_error([] { infer1("stack", {f32({2})}, axis(2)); }, Code::kInvalidArgument,
               {"op 'stack'", "attribute 'axis' is 2", "rank 2"});
}

TEST(Split, SizesSumToTheAxis) {
  std::vector<TensorType> out =
      infer_all("split", {f32({"s", Dim("h") * 3})}, Attrs{{"split_sizes", dims({"h", "h", "h"})}, {"axis", int64_t{1}}});
  ASSERT_EQ(out.size(), 3u);
  for (const TensorType& t : out) EXPECT_EQ(t, f32({"s", "h"}));
  out = infer_all("split", {f32({10, "b"})}, Attrs{{"split_sizes", dims({3, 7})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], f32({3, "b"}));
  EXPECT_EQ(out[1], f32({7, "b"}));
  expect_error([] { infer_all("split", {f32({10})}, Attrs{{"split_sizes", dims({3, 6})}}); }, Code::kInvalidArgument,
               {"op 'split'", "attribute 'split_sizes' [3, 6] sums to 9 but axis 0 of input 0 'x' [10] is 10"});
  expect_error([] { infer_all("split", {f32({"n"})}, Attrs{{"split_sizes", dims({"m", 3})}}); },
               Code::kInvalidArgument, {"op 'split'", "sums to m + 3", "is n"});
  expect_error([] { infer_all("split", {f32({4})}, Attrs{{"split_sizes", dims({})}}); }, Code::kInvalidArgument,
               {"op 'split'", "attribute 'split_sizes' is empty"});
  expect_error([] { infer_all("split", {f32({4})}, Attrs{{"split_sizes", dims({6, -2})}}); }, Code::kInvalidArgument,
               {"op 'split'", "negative dim -2 at entry 1"});
}

TEST(Chunk, DividesExactly) {
  std::vector<TensorType> out = infer_all("chunk", {f32({"b", 12})}, Attrs{{"chunks", int64_t{3}}, {"axis", int64_t{1}}});
  ASSERT_EQ(out.size(), 3u);
  for (const TensorType& t : out) EXPECT_EQ(t, f32({"b", 4}));
  out = infer_all("chunk", {f32({Dim("h") * 2, 5})}, Attrs{{"chunks", int64_t{2}}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1], f32({"h", 5}));
  expect_error([] { infer_all("chunk", {f32({5})}, Attrs{{"chunks", int64_t{2}}}); }, Code::kInvalidArgument,
               {"op 'chunk'", "attribute 'chunks' (2) does not evenly divide axis 0 of input 0 'x' [5] (5)"});
  expect_error([] { infer_all("chunk", {f32({"n"})}, Attrs{{"chunks", int64_t{2}}}); }, Code::kInvalidArgument,
               {"op 'chunk'", "does not evenly divide", "(n)"});
  expect_error([] { infer_all("chunk", {f32({4})}, Attrs{{"chunks", int64_t{0}}}); }, Code::kInvalidArgument,
               {"op 'chunk'", "attribute 'chunks' is 0"});
  expect_error([] { infer_all("chunk", {f32({int64_t{1} << 40})}, Attrs{{"chunks", int64_t{1} << 40}}); },
               Code::kInvalidArgument, {"op 'chunk'", "<= 65536"});
}

TEST(Tile, MultipliesEachDim) {
  EXPECT_EQ(infer1("tile", {f32({"b", 3})}, Attrs{{"repeats", dims({2, "r"})}}), f32({Dim("b") * 2, Dim("r") * 3}));
  expect_error([] { infer1("tile", {f32({2, 3})}, Attrs{{"repeats", dims({2})}}); }, Code::kInvalidArgument,
               {"op 'tile'", "attribute 'repeats' [2] has 1 entries but input 0 'x' [2, 3] has rank 2"});
  expect_error([] { infer1("tile", {f32({2})}, Attrs{{"repeats", dims({-1})}}); }, Code::kInvalidArgument,
               {"op 'tile'", "negative dim -1"});
}

TEST(RepeatInterleave, ConstantAndTensorRepeats) {
  EXPECT_EQ(infer1("repeat_interleave", {f32({2, "b"})}, Attrs{{"repeats", int64_t{2}}, {"axis", int64_t{1}}}),
            f32({2, Dim("b") * 2}));
  EXPECT_EQ(infer1("repeat_interleave", {f32({2, 2})}, Attrs{{"repeats", int64_t{2}}}), f32({8}));  // flattened
  EXPECT_EQ(infer1("repeat_interleave", {f32({2, 3}), tensor(D::kInt64, {2})},
                   Attrs{{"axis", int64_t{0}}, {"out_dim", dims({"total"})}}),
            f32({"total", 3}));
  expect_error([] { infer1("repeat_interleave", {f32({2, 3}), tensor(D::kInt64, {2})}, axis(0)); },
               Code::kInvalidArgument, {"op 'repeat_interleave'", "attribute 'out_dim' is required"});
  expect_error([] { infer1("repeat_interleave", {f32({2})}, Attrs{{"repeats", int64_t{0}}}); }, Code::kInvalidArgument,
               {"op 'repeat_interleave'", "attribute 'repeats' is 0; it must be > 0"});
  expect_error([] { infer1("repeat_interleave", {f32({2})}); }, Code::kInvalidArgument,
               {"op 'repeat_interleave'", "the repeats are missing"});
  expect_error(
      [] {
        infer1("repeat_interleave", {f32({2, 3}), tensor(D::kInt64, {3})}, Attrs{{"axis", int64_t{0}}, {"out_dim", dims({5})}});
      },
      Code::kInvalidArgument, {"op 'repeat_interleave'", "input 1 'repeats_tensor' [3] must hold 1 or 2 counts"});
  expect_error([] { infer1("repeat_interleave", {f32({2})}, Attrs{{"repeats", int64_t{2}}, {"axis", int64_t{1}}}); },
               Code::kInvalidArgument, {"op 'repeat_interleave'", "attribute 'axis' is 1", "rank 1"});
}

TEST(Pad, AddsBeforeAndAfter) {
  EXPECT_EQ(infer1("pad", {f32({"b", 3})}, Attrs{{"paddings", ints({0, 0, 1, 2})}}), f32({"b", 6}));
  EXPECT_EQ(infer1("pad", {f32({"h", "w"})}, Attrs{{"paddings", ints({1, 1, 0, 3})}, {"value", -1.0}}),
            f32({Dim("h") + 2, Dim("w") + 3}));
  expect_error([] { infer1("pad", {f32({2, 3})}, Attrs{{"paddings", ints({1, 1})}}); }, Code::kInvalidArgument,
               {"op 'pad'", "attribute 'paddings' must have 4 entries, got 2 [1, 1]"});
  expect_error([] { infer1("pad", {f32({2})}, Attrs{{"paddings", ints({0, -1})}}); }, Code::kInvalidArgument,
               {"op 'pad'", "attribute 'paddings' [0, -1] has -1 at entry 1"});
  expect_error([] { infer1("pad", {f32({2})}, Attrs{{"paddings", ints({0, 1})}, {"mode", std::string("reflect")}}); },
               Code::kInvalidArgument, {"op 'pad'", "attribute 'mode' is \"reflect\"; only \"constant\""});
}

TEST(Rebind, AssertsAShape) {
  EXPECT_EQ(infer1("rebind", {f32({"a", 3})}, shape({"b", 3})), f32({"b", 3}));
  EXPECT_EQ(infer1("rebind", {f32({Dim("n") * 2})}, Attrs{{"shape", dims({8})}, {"message", std::string("odd n")}}),
            f32({8}));
  expect_error([] { infer1("rebind", {f32({2, 3})}, shape({2, 4})); }, Code::kInvalidArgument,
               {"op 'rebind'", "axis 1 of input 0 'x' [2, 3] is 3 but attribute 'shape' [2, 4] asserts 4"});
  expect_error([] { infer1("rebind", {f32({2, 3})}, shape({6})); }, Code::kInvalidArgument,
               {"op 'rebind'", "attribute 'shape' [6] has rank 1 but input 0 'x' [2, 3] has rank 2"});
}

TEST(AsInterleavedComplex, HalvesTheLastDim) {
  EXPECT_EQ(infer1("as_interleaved_complex", {f32({"s", 128})}), f32({"s", 64, 2}));
  EXPECT_EQ(infer1("as_interleaved_complex", {f32({Dim("d") * 2})}), f32({"d", 2}));
  expect_error([] { infer1("as_interleaved_complex", {f32({3})}); }, Code::kInvalidArgument,
               {"op 'as_interleaved_complex'", "the last dim of input 0 'x' [3] is 3; it must be (provably) even"});
  expect_error([] { infer1("as_interleaved_complex", {f32({"d"})}); }, Code::kInvalidArgument,
               {"op 'as_interleaved_complex'", "is d"});
  expect_error([] { infer1("as_interleaved_complex", {tensor(D::kInt32, {4})}); }, Code::kInvalidArgument,
               {"op 'as_interleaved_complex'", "must have a float dtype"});
}

TEST(ShapeToTensor, Int64VectorOfTheRank) {
  EXPECT_EQ(infer1("shape_to_tensor", {}, shape({"b", Dim("s") + 1, 3})), tensor(D::kInt64, {3}));
  EXPECT_EQ(infer1("shape_to_tensor", {}, Attrs{{"shape", dims({})}, {"device", DeviceRef::gpu(1)}}),
            tensor(D::kInt64, {0}, DeviceRef::gpu(1)));
  expect_error([] { infer1("shape_to_tensor", {f32({1})}, shape({1})); }, Code::kInvalidArgument,
               {"op 'shape_to_tensor'", "expected 0 inputs", "got 1"});
}

}  // namespace
}  // namespace maxc

// constant, constant_external and range.
#include <gtest/gtest.h>

#include <cstring>

#include "graph/test_util.h"

namespace maxc {
namespace {

using testing::expect_error;
using testing::tensor;
using D = DType;

template <typename T>
ValueId scalar(Graph& g, D dtype, T value) {
  std::vector<uint8_t> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return g.add_constant(Constant::copy_of(tensor(dtype, {}), bytes));
}

TEST(Constant, TypeComesFromTheTable) {
  Graph g;
  std::vector<uint8_t> bytes(6 * 4);
  ValueId c = g.add_constant(Constant::copy_of(tensor(D::kFloat32, {2, 3}, DeviceRef::gpu()), bytes));
  EXPECT_EQ(g.type(c), tensor(D::kFloat32, {2, 3}, DeviceRef::gpu()));
  ASSERT_EQ(g.ops().size(), 1u);
  EXPECT_EQ(g.ops()[0].schema->name, "constant");
  EXPECT_EQ(g.ops()[0].attrs.get<int64_t>("index"), 0);
  ASSERT_EQ(g.constants().size(), 1u);
  EXPECT_EQ(g.constants()[0].size, 24u);
}

TEST(Constant, Errors) {
  Graph g;
  expect_error([&] { g.add_op("constant", {}, Attrs{{"index", int64_t{0}}}); }, Code::kInvalidArgument,
               {"op 'constant'", "attribute 'index' is 0", "no constant"});
  std::vector<uint8_t> three(3);
  expect_error([&] { g.add_constant(Constant::copy_of(tensor(D::kFloat32, {1}), three)); }, Code::kInvalidArgument,
               {"constant 0", "takes 4 bytes, got 3"});
  EXPECT_TRUE(g.constants().empty());
  EXPECT_TRUE(g.ops().empty());
}

TEST(ConstantExternal, DeclaresAWeight) {
  Graph g;
  TensorType t = tensor(D::kBFloat16, {4096, "hidden"}, DeviceRef::gpu());
  ValueId w = g.add_weight("layers.0.weight", t);
  EXPECT_EQ(g.type(w), t);
  EXPECT_EQ(g.weights().at("layers.0.weight"), w);
  // Through the generic entry point, with the device left to its default.
  ValueId v = g.add_op("constant_external", {},
                       Attrs{{"name", std::string("bias")}, {"dtype", D::kFloat32}, {"shape", std::vector<Dim>{4}}})[0];
  EXPECT_EQ(g.type(v), tensor(D::kFloat32, {4}, DeviceRef::cpu()));
}

TEST(ConstantExternal, SameNameSameTypeIsTheSameValue) {
  Graph g;
  TensorType t = tensor(D::kFloat32, {3, 3});
  ValueId a = g.add_weight("w", t);
  ValueId b = g.add_weight("w", t);
  EXPECT_EQ(a, b);
  EXPECT_EQ(g.ops().size(), 1u);
}

TEST(ConstantExternal, SameNameOtherTypeIsAnError) {
  Graph g;
  g.add_weight("w", tensor(D::kFloat32, {3, 3}));
  expect_error([&] { g.add_weight("w", tensor(D::kFloat16, {3, 3})); }, Code::kInvalidArgument,
               {"op 'constant_external'", "weight 'w' is already declared as tensor<[3, 3], float32, cpu:0>",
                "tensor<[3, 3], float16, cpu:0>"});
  EXPECT_EQ(g.ops().size(), 1u);
  EXPECT_EQ(g.num_values(), 1u);
}

TEST(ConstantExternal, ValidatesItsType) {
  Graph g;
  expect_error([&] { g.add_weight("", tensor(D::kFloat32, {3})); }, Code::kInvalidArgument,
               {"op 'constant_external'", "attribute 'name' is empty"});
  expect_error([&] { g.add_weight("w", tensor(D::kFloat32, {-3})); }, Code::kInvalidArgument,
               {"op 'constant_external'", "weight 'w'", "negative"});
}

TEST(Range, LengthFromConstants) {
  Graph g;
  auto range = [&](ValueId a, ValueId b, ValueId c) { return g.type(g.add_op("range", {a, b, c})[0]); };
  EXPECT_EQ(range(scalar<int64_t>(g, D::kInt64, 0), scalar<int64_t>(g, D::kInt64, 10), scalar<int64_t>(g, D::kInt64, 3)),
            tensor(D::kInt64, {4}));
  EXPECT_EQ(range(scalar<int32_t>(g, D::kInt32, 5), scalar<int32_t>(g, D::kInt32, -5), scalar<int32_t>(g, D::kInt32, -2)),
            tensor(D::kInt32, {5}));
  EXPECT_EQ(range(scalar<int32_t>(g, D::kInt32, 2), scalar<int32_t>(g, D::kInt32, 2), scalar<int32_t>(g, D::kInt32, 1)),
            tensor(D::kInt32, {0}));
  EXPECT_EQ(range(scalar<float>(g, D::kFloat32, 0), scalar<float>(g, D::kFloat32, 1), scalar<float>(g, D::kFloat32, 0.25f)),
            tensor(D::kFloat32, {4}));
  EXPECT_EQ(range(scalar<double>(g, D::kFloat64, 0), scalar<double>(g, D::kFloat64, 1), scalar<double>(g, D::kFloat64, 0.3)),
            tensor(D::kFloat64, {4}));
}

TEST(Range, OutDimForDataDependentLengths) {
  Graph g;
  ValueId start = g.add_input("start", tensor(D::kInt64, {}));
  ValueId stop = g.add_input("stop", tensor(D::kInt64, {}));
  ValueId step = scalar<int64_t>(g, D::kInt64, 1);
  Attrs out_dim{{"out_dim", std::vector<Dim>{Dim("n") + 1}}};
  EXPECT_EQ(g.type(g.add_op("range", {start, stop, step}, out_dim)[0]), tensor(D::kInt64, {Dim("n") + 1}));
  expect_error([&] { g.add_op("range", {start, stop, step}); }, Code::kInvalidArgument,
               {"op 'range'", "attribute 'out_dim' is required"});
  expect_error([&] { g.add_op("range", {start, stop, step}, Attrs{{"out_dim", std::vector<Dim>{1, 2}}}); },
               Code::kInvalidArgument, {"op 'range'", "exactly one dim, got [1, 2]"});
}

TEST(Range, Errors) {
  Graph g;
  ValueId zero = scalar<int64_t>(g, D::kInt64, 0);
  ValueId ten = scalar<int64_t>(g, D::kInt64, 10);
  ValueId minus = scalar<int64_t>(g, D::kInt64, -1);
  ValueId f = scalar<float>(g, D::kFloat32, 1.0f);
  ValueId vec = g.add_input("v", tensor(D::kInt64, {2}));
  expect_error([&] { g.add_op("range", {zero, ten, zero}); }, Code::kInvalidArgument,
               {"op 'range'", "input 2 'step' is 0"});
  expect_error([&] { g.add_op("range", {zero, ten, minus}); }, Code::kInvalidArgument,
               {"op 'range'", "stop - start (10)", "sign of step (-1)"});
  expect_error([&] { g.add_op("range", {zero, ten, f}); }, Code::kInvalidArgument,
               {"op 'range'", "input 2 'step' has dtype float32", "input 0 'start' has int64"});
  expect_error([&] { g.add_op("range", {zero, vec, minus}); }, Code::kInvalidArgument,
               {"op 'range'", "input 1 'stop' must be a scalar (rank 0), got [2]"});
  expect_error([&] { g.add_op("range", {zero, ten, ten}, Attrs{{"out_dim", std::vector<Dim>{3}}}); },
               Code::kInvalidArgument, {"op 'range'", "attribute 'out_dim' is 3", "give 1 elements"});
}

}  // namespace
}  // namespace maxc

// nonzero and the staged programs it makes: a count no input binds is computed first, and
// what follows is planned once it is known, per count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "driver/test_util.h"
#include "engine_test_util.h"

namespace maxc {
namespace {

using engine_test::f32;

Ref<Tensor> floats(std::vector<int64_t> dims, std::vector<float> values) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat32, dims);
  std::memcpy(t->data(), values.data(), values.size() * sizeof(float));
  return t;
}

template <typename T>
std::vector<T> values_of(const Ref<Tensor>& t) {
  const auto* p = reinterpret_cast<const T*>(t->data());
  return {p, p + t->num_elements()};
}

Ref<Model> compile(const Graph& g) {
  return Model::create(CompiledModel::compile(Context::create({}), g, CompileSettings{}), NamedTensors{});
}

// idx = nonzero(x) : [nz, 2];  picked = gather(flat(x), idx[:, 0] * cols + idx[:, 1]) : [nz]
Graph pick_nonzero() {
  Graph g("pick");
  ValueId x = g.add_input("x", f32({"rows", 3}));
  ValueId idx = g.add_op("nonzero", {x}, {{"out_dim", std::vector<Dim>{"nz"}}})[0];
  ValueId rows = g.add_op("slice_tensor", {idx}, {{"starts", std::vector<Dim>{0, 0}}, {"stops", std::vector<Dim>{"nz", 1}}})[0];
  ValueId cols = g.add_op("slice_tensor", {idx}, {{"starts", std::vector<Dim>{0, 1}}, {"stops", std::vector<Dim>{"nz", 2}}})[0];
  int64_t three = 3;
  ValueId c3 = g.add_constant(Constant::copy_of(TensorType{DType::kInt64, {}, DeviceRef::cpu()},
                                                {reinterpret_cast<const uint8_t*>(&three), sizeof three}));
  ValueId flat_index = g.add_op("add", {g.add_op("mul", {rows, c3})[0], cols})[0];
  flat_index = g.add_op("reshape", {flat_index}, {{"shape", std::vector<Dim>{"nz"}}})[0];
  ValueId flat = g.add_op("reshape", {x}, {{"shape", std::vector<Dim>{Dim("rows") * 3}}})[0];
  ValueId picked = g.add_op("gather", {flat, flat_index}, {{"axis", int64_t{0}}})[0];
  g.set_outputs({{"indices", idx}, {"picked", picked}, {"x", x}});
  return g;
}

TEST(Nonzero, TheCountIsComputedFirstAndTheRestPlannedForIt) {
  Ref<Model> model = compile(pick_nonzero());
  EXPECT_EQ(model->compiled()->stages().size(), 2u) << model->compiled()->program().to_string();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = model->execute(std::vector<Ref<Tensor>>{floats({2, 3}, {0, 1.5f, -0.f, nan, 0, -2})});
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values_of<int64_t>(out[0]), (std::vector<int64_t>{0, 1, 1, 0, 1, 2}));
  const std::vector<float> picked = values_of<float>(out[1]);
  ASSERT_EQ(picked.size(), 3u);
  EXPECT_EQ(picked[0], 1.5f);
  EXPECT_TRUE(std::isnan(picked[1]));
  EXPECT_EQ(picked[2], -2.f);
  EXPECT_EQ(out[2]->dims(), (std::vector<int64_t>{2, 3})) << "an input that is an output comes back";

  // Another count, another plan; none at all.
  out = model->execute(std::vector<Ref<Tensor>>{floats({1, 3}, {4, 5, 6})});
  EXPECT_EQ(values_of<float>(out[1]), (std::vector<float>{4, 5, 6}));
  out = model->execute(std::vector<Ref<Tensor>>{floats({2, 3}, {0, 0, 0, 0, 0, 0})});
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(out[1]->num_elements(), 0);
}

TEST(Nonzero, ACountAnInputBindsIsCheckedAndTheModelRunsAgain) {
  Graph g("bound");
  ValueId x = g.add_input("x", f32({4}));
  g.add_input("hint", f32({"nz"}));
  g.set_outputs({{"indices", g.add_op("nonzero", {x}, {{"out_dim", std::vector<Dim>{"nz"}}})[0]}});
  Ref<Model> model = compile(g);
  EXPECT_TRUE(model->compiled()->stages().empty());
  Ref<Tensor> in = floats({4}, {1, 0, 2, 0});
  EXPECT_MAXC_ERROR(model->execute(std::vector<Ref<Tensor>>{in, floats({3}, {0, 0, 0})}), Code::kInvalidArgument,
                    "has 2 nonzero elements, but out_dim 'nz' is 3");
  auto out = model->execute(std::vector<Ref<Tensor>>{in, floats({2}, {0, 0})});
  EXPECT_EQ(values_of<int64_t>(out[0]), (std::vector<int64_t>{0, 2}));
}

// repeat_interleave by a tensor of repeats, its length a symbol no input binds: counted first.
TEST(Nonzero, RepeatsFromATensorAreCountedFirstToo) {
  Graph g("repeat");
  ValueId x = g.add_input("x", f32({3}));
  ValueId r = g.add_input("r", TensorType{DType::kInt64, {3}, DeviceRef::cpu()});
  ValueId y = g.add_op("repeat_interleave", {x, r}, {{"axis", int64_t{0}}, {"out_dim", std::vector<Dim>{"total"}}})[0];
  g.set_outputs({{"y", g.add_op("exp", {y})[0]}});
  Ref<Model> model = compile(g);
  EXPECT_EQ(model->compiled()->stages().size(), 2u);
  for (const std::vector<int64_t>& counts : {std::vector<int64_t>{2, 0, 1}, std::vector<int64_t>{0, 0, 0}}) {
    auto rt = Tensor::create(Device::cpu(), DType::kInt64, {3});
    std::memcpy(rt->data(), counts.data(), 3 * sizeof(int64_t));
    auto out = model->execute(std::vector<Ref<Tensor>>{floats({3}, {0, 1, 2}), rt});
    std::vector<float> want;
    for (size_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < counts[i]; ++k) want.push_back(std::exp(static_cast<float>(i)));
    EXPECT_EQ(values_of<float>(out[0]), want);
  }
}

TEST(Nonzero, AnUnboundCountInsideABranchIsUnimplemented) {
  Graph branch("branch");
  ValueId bx = branch.add_input("x", f32({4}));
  branch.set_outputs({{"n", branch.add_op("nonzero", {bx}, {{"out_dim", std::vector<Dim>{"nz"}}})[0]}});
  Graph g("main");
  ValueId p = g.add_input("p", TensorType{DType::kBool, {}, DeviceRef::cpu()});
  ValueId x = g.add_input("x", f32({4}));
  const int64_t ref = g.add_subgraph(branch);
  g.set_outputs({{"y", g.add_op("cond", {p, x}, {{"then_graph", GraphRef{ref}}, {"else_graph", GraphRef{ref}}})[0]}});
  EXPECT_MAXC_ERROR(compile(g), Code::kUnimplemented, "inside a cond or while_loop");
}

TEST(Nonzero, AnExpressionOfUnboundSymbolsIsUnimplemented) {
  Graph g("expr");
  ValueId x = g.add_input("x", f32({4}));
  g.set_outputs({{"i", g.add_op("nonzero", {x}, {{"out_dim", std::vector<Dim>{Dim("a") + 1}}})[0]}});
  EXPECT_MAXC_ERROR(compile(g), Code::kUnimplemented, "name the count with a symbol of its own");
}

}  // namespace
}  // namespace maxc

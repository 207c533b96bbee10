// bind_dims: a shape computed from data names its entries with symbols no input binds; the
// compiler ends a stage where the shape is computed, and the engine binds the symbols to its
// entries and plans the rest per binding, one compile for every shape.
#include <gtest/gtest.h>

#include <cstring>

#include "driver/test_util.h"
#include "engine_test_util.h"

namespace maxc {
namespace {

using engine_test::f32;

Ref<Tensor> ints(std::vector<int64_t> values) {
  auto t = Tensor::create(Device::cpu(), DType::kInt64, {static_cast<int64_t>(values.size())});
  std::memcpy(t->data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

Ref<Tensor> iota(int64_t n) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat32, {n});
  for (int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(t->data())[i] = static_cast<float>(i);
  return t;
}

Ref<Model> compile(const Graph& g) {
  return Model::create(CompiledModel::compile(Context::create({}), g, CompileSettings{}), NamedTensors{});
}

// y = reshape(x [12], shape) with shape = s + 1 computed (or, `computed` false, s itself):
// the element count a * b asserted when the model runs.
Graph reshape_by(bool computed) {
  Graph g("bound");
  ValueId x = g.add_input("x", f32({12}));
  ValueId s = g.add_input("s", TensorType{DType::kInt64, {2}, DeviceRef::cpu()});
  if (computed) {
    int64_t one = 1;
    ValueId c1 = g.add_constant(Constant::copy_of(TensorType{DType::kInt64, {}, DeviceRef::cpu()},
                                                  {reinterpret_cast<const uint8_t*>(&one), sizeof one}));
    s = g.add_op("add", {s, c1})[0];
  }
  g.add_op("bind_dims", {s}, {{"out_dim", std::vector<Dim>{"a", "b"}}});
  ValueId flat = g.add_op("rebind", {x}, {{"shape", std::vector<Dim>{Dim("a") * Dim("b")}},
                                          {"message", std::string("12 elements are not a x b")}})[0];
  g.set_outputs({{"y", g.add_op("reshape", {flat}, {{"shape", std::vector<Dim>{"a", "b"}}})[0]}});
  return g;
}

void check_runs(const Ref<Model>& model, int64_t offset) {
  auto out = model->execute(std::vector<Ref<Tensor>>{iota(12), ints({3 - offset, 4 - offset})});
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(reinterpret_cast<const float*>(out[0]->data())[11], 11.f);
  out = model->execute(std::vector<Ref<Tensor>>{iota(12), ints({6 - offset, 2 - offset})});
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{6, 2}));
  EXPECT_MAXC_ERROR(model->execute(std::vector<Ref<Tensor>>{iota(12), ints({5 - offset, 5 - offset})}),
                    Code::kInvalidArgument, "12 elements are not a x b");
  EXPECT_MAXC_ERROR(model->execute(std::vector<Ref<Tensor>>{iota(12), ints({-2 - offset, 4})}),
                    Code::kInvalidArgument, "must be >= 0");
  out = model->execute(std::vector<Ref<Tensor>>{iota(12), ints({1 - offset, 12 - offset})});  // still usable
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{1, 12}));
}

TEST(BindDims, AComputedShapeEndsAStageAndTheRestIsPlannedPerBinding) {
  Ref<Model> model = compile(reshape_by(true));
  const Program& p = model->compiled()->program();
  ASSERT_EQ(p.symbol_sources.size(), 2u) << p.to_string();
  EXPECT_EQ(p.symbol_sources[1].element, 1);
  for (const Node& n : p.nodes) EXPECT_NE(n.op, "bind_dims") << p.to_string();
  EXPECT_EQ(model->compiled()->stages().size(), 2u) << p.to_string();
  check_runs(model, 1);
}

TEST(BindDims, AShapeTheCallerGivesIsBoundFromTheInput) {
  Ref<Model> model = compile(reshape_by(false));
  check_runs(model, 0);
}

TEST(BindDims, OutDimMustNameOneSymbolPerEntry) {
  Graph g("bad");
  ValueId s = g.add_input("s", TensorType{DType::kInt64, {2}, DeviceRef::cpu()});
  EXPECT_MAXC_ERROR(g.add_op("bind_dims", {s}, {{"out_dim", std::vector<Dim>{"a"}}}), Code::kInvalidArgument,
                    "names 1 dims");
  EXPECT_MAXC_ERROR(g.add_op("bind_dims", {s}, {{"out_dim", std::vector<Dim>{"a", 3}}}), Code::kInvalidArgument,
                    "must hold symbols");
}

}  // namespace
}  // namespace maxc

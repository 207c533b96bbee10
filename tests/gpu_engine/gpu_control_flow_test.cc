// Control that data decides, on the emulated GPU (tests/emulated_gpu): cond reads its
// predicate from device memory, runs the branch it picks on the device and leaves the result
// in device memory, and a captured model cannot hold it; a nonzero whose count no input binds
// counts on the device first, and the rest is planned for that count.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "driver/test_util.h"
#include "gpu_engine/engine_on_emulated.h"
#include "kernels/cuda/fused_elementwise.h"

namespace maxc::testing {
namespace {

using GpuControlFlow = EngineOnEmulatedGpu;

// The generated kernel of one unary op over a float32 [2, 3].
gpu::FusedKernel unary_kernel(cpu::ElemOp op) {
  cpu::ElemProgramSpec spec;
  spec.dims = {2, 3};
  spec.leaves = {{DType::kFloat32, {2, 3}}};
  spec.steps = {{op, {0, 1}}};
  spec.outputs = {{1, DType::kFloat32}};
  return gpu::generate_fused_elementwise(spec);
}

int64_t unary_subgraph(Graph& g, const char* name, const char* op) {
  Graph sub(name);
  ValueId x = sub.add_input("x", f32_on_gpu({2, 3}));
  sub.set_outputs({{"y", sub.add_op(op, {x})[0]}});
  return g.add_subgraph(std::move(sub));
}

Graph negate_or_exp() {
  Graph g("cond");
  ValueId p = g.add_input("p", on_gpu(DType::kBool, {}));
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  Attrs attrs{{"then_graph", GraphRef{unary_subgraph(g, "then", "negate")}},
              {"else_graph", GraphRef{unary_subgraph(g, "else", "exp")}}};
  g.set_outputs({{"y", g.add_op("cond", {p, x}, attrs)[0]}});
  return g;
}

TEST_F(GpuControlFlow, CondReadsThePredicateOnTheDeviceAndRunsItsBranchThere) {
  const std::string negate = unary_kernel(cpu::ElemOp::kNegate).name, exp = unary_kernel(cpu::ElemOp::kExp).name;
  Ref<Model> model = compile(negate_or_exp());
  const std::vector<float> xs = {0, 1, 2, -1, -2, 0.5f};
  Ref<Tensor> x = host_tensor({2, 3}, xs)->copy(gpu_);
  for (bool pred : {true, false}) {
    driver_log().launches.clear();
    Ref<Tensor> p = host_tensor<uint8_t>(DType::kBool, {}, {static_cast<uint8_t>(pred)})->copy(gpu_);
    std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{p, x});
    EXPECT_EQ(driver_log().launches, std::vector<std::string>{pred ? negate : exp}) << "only the branch taken runs";
    EXPECT_TRUE(in_device_memory(out[0]->data()));
    const std::vector<float> y = values_of(*out[0]);
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_FLOAT_EQ(y[i], pred ? -xs[i] : std::exp(xs[i]));
  }
  Ref<Tensor> p = host_tensor<uint8_t>(DType::kBool, {}, {1})->copy(gpu_);
  const std::vector<uint64_t> keys = {1};
  EXPECT_MAXC_ERROR(model->capture(keys, std::vector<Ref<Tensor>>{p, x}), Code::kUnimplemented,
                    "reads its predicate on the host");
}

// nonzero on a GPU with a count no input binds: stage 0 counts on the device, the engine
// reads the count from device memory, and stage 1 is planned for it and fills the indices.
TEST_F(GpuControlFlow, NonzeroCountsOnTheDeviceThenPlansTheRest) {
  Graph g("nonzero");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  g.set_outputs({{"i", g.add_op("nonzero", {x}, {{"out_dim", std::vector<Dim>{"nz"}}})[0]}});
  Ref<Model> model = compile(g);
  ASSERT_EQ(model->compiled()->stages().size(), 2u);
  for (const auto& [xs, want] : {std::pair{std::vector<float>{0, 1, 0, 2, 0, 3}, std::vector<int64_t>{0, 1, 1, 0, 1, 2}},
                                 std::pair{std::vector<float>{0, 0, 0, 0, 0, 0}, std::vector<int64_t>{}}}) {
    driver_log().launches.clear();
    std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{host_tensor({2, 3}, xs)->copy(gpu_)});
    EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{static_cast<int64_t>(want.size() / 2), 2}));
    EXPECT_EQ(values_of<int64_t>(*out[0]), want);
    ASSERT_FALSE(driver_log().launches.empty());
    EXPECT_NE(driver_log().launches.front().find("count_nonzero"), std::string::npos) << "the count runs first";
  }
}

}  // namespace
}  // namespace maxc::testing

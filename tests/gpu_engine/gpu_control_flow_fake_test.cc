// Control that data decides, on a GPU, on the fake CUDA driver (kernels emulated on the host):
// cond reads its predicate from device memory, runs the branch it picks on the device and
// leaves the result in device memory, and a captured model cannot hold it; a nonzero whose
// count no input binds counts on the device first, and the rest is planned for that count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "driver/test_util.h"
#include "gpu_engine/engine_on_fake.h"
#include "kernels/cpu/nonzero.h"
#include "kernels/cuda/common/indexing.cuh"
#include "kernels/cuda/fused_elementwise.h"

namespace maxc::testing {
namespace {

using GpuControlFlowOnFake = EngineOnFake;

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

TEST_F(GpuControlFlowOnFake, CondReadsThePredicateOnTheDeviceAndRunsItsBranchThere) {
  const gpu::FusedKernel negate = unary_kernel(cpu::ElemOp::kNegate), exp = unary_kernel(cpu::ElemOp::kExp);
  std::vector<std::string> ran;
  fake().on_launch = [&](const std::string& name, void** args) {
    const gpu::FusedKernel& k = name == negate.name ? negate : exp;
    ASSERT_TRUE(name == negate.name || name == exp.name) << name;
    const float* x = nullptr;
    float* y = nullptr;
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (k.params[i].kind == gpu::FusedKernel::ParamKind::kLeaf) x = arg<const float*>(args, i);
      if (k.params[i].kind == gpu::FusedKernel::ParamKind::kOutput) y = arg<float*>(args, i);
    }
    ASSERT_TRUE(in_device_memory(x) && in_device_memory(y));
    for (int i = 0; i < 6; ++i) y[i] = name == negate.name ? -x[i] : std::exp(x[i]);
    ran.push_back(name == negate.name ? "negate" : "exp");
  };
  Ref<Model> model = compile(negate_or_exp());
  const std::vector<float> xs = {0, 1, 2, -1, -2, 0.5f};
  Ref<Tensor> x = host_tensor({2, 3}, xs)->copy(gpu_);
  for (bool pred : {true, false}) {
    Ref<Tensor> p = host_tensor<uint8_t>(DType::kBool, {}, {static_cast<uint8_t>(pred)})->copy(gpu_);
    std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{p, x});
    ASSERT_EQ(ran.size(), pred ? 1u : 2u);
    EXPECT_EQ(ran.back(), pred ? "negate" : "exp");
    EXPECT_TRUE(in_device_memory(out[0]->data()));
    const std::vector<float> y = values_of(*out[0]);
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_FLOAT_EQ(y[i], pred ? -xs[i] : std::exp(xs[i]));
  }
  Ref<Tensor> p = host_tensor<uint8_t>(DType::kBool, {}, {1})->copy(gpu_);
  const std::vector<uint64_t> keys = {1};
  EXPECT_MAXC_ERROR(model->capture(keys, std::vector<Ref<Tensor>>{p, x}), Code::kUnimplemented,
                    "reads its predicate on the host");
}

}  // namespace
}  // namespace maxc::testing

namespace maxc::testing {
namespace {

// nonzero on a GPU with a count no input binds: stage 0 counts on the device, the engine
// reads the count from device memory, and stage 1 is planned for it and fills the indices.
TEST_F(GpuControlFlowOnFake, NonzeroCountsOnTheDeviceThenPlansTheRest) {
  Graph g("nonzero");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  g.set_outputs({{"i", g.add_op("nonzero", {x}, {{"out_dim", std::vector<Dim>{"nz"}}})[0]}});
  std::vector<std::string> ran;
  fake().on_launch = [&](const std::string& name, void** args) {
    const cpu::ZeroTest test = *cpu::zero_test_of(DType::kFloat32);
    const void* in = arg<const void*>(args, 0);
    ASSERT_TRUE(in_device_memory(in));
    if (named(name, "count_nonzero_block")) {
      *arg<int64_t*>(args, 3) = cpu::count_nonzero(in, arg<int64_t>(args, 1), test);
      ran.push_back("count");
    } else if (named(name, "nonzero_block")) {
      const auto shape = arg<gpu::Shape>(args, 1);
      const std::vector<int64_t> dims(shape.dims, shape.dims + shape.rank);
      cpu::nonzero_indices(in, dims, test, arg<int64_t*>(args, 3), arg<int64_t>(args, 4));
      ran.push_back("fill");
    }
  };
  Ref<Model> model = compile(g);
  ASSERT_EQ(model->compiled()->stages().size(), 2u);
  for (const auto& [xs, want] : {std::pair{std::vector<float>{0, 1, 0, 2, 0, 3}, std::vector<int64_t>{0, 1, 1, 0, 1, 2}},
                                 std::pair{std::vector<float>{0, 0, 0, 0, 0, 0}, std::vector<int64_t>{}}}) {
    ran.clear();
    std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{host_tensor({2, 3}, xs)->copy(gpu_)});
    EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{static_cast<int64_t>(want.size() / 2), 2}));
    EXPECT_EQ(values_of<int64_t>(*out[0]), want);
    EXPECT_EQ(ran.front(), "count");
  }
}

}  // namespace
}  // namespace maxc::testing

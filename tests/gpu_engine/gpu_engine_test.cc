// The GPU engine end to end on the emulated GPU (tests/emulated_gpu): a graph placed on gpu:0
// compiles (its kernels through the emulated NVRTC), binds its weights into device memory and
// executes on a stream, the real kernel sources running on the host. What this checks is the
// engine's plumbing: which kernels launch, on which memory, what errors say; the op suite
// checks every op's values on the same GPU (scripts/test.sh gpu_emulated).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <unistd.h>
#include <vector>

#include "driver/device.h"
#include "driver/test_util.h"
#include "engine/compiled_model.h"
#include "engine/model.h"
#include "engine/model_file.h"
#include "gpu_engine/engine_on_emulated.h"
#include "kernels/cuda/fused_elementwise.h"
#include "onnx/proto_writer.h"

namespace maxc::testing {
namespace {

using GpuEngine = EngineOnEmulatedGpu;

// y = x + w: one generated elementwise kernel, its name the digest of the program the CPU
// engine would run, reading the input and the weight in device memory.
TEST_F(GpuEngine, ElementwiseGraphRunsOneGeneratedKernelOnDeviceMemory) {
  Graph g("add");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  ValueId w = g.add_weight("w", f32_on_gpu({2, 3}));
  g.set_outputs({{"y", g.add_op("add", {x, w})[0]}});

  cpu::ElemProgramSpec spec;
  spec.dims = {2, 3};
  spec.leaves = {{DType::kFloat32, {2, 3}}, {DType::kFloat32, {2, 3}}};
  spec.steps = {{cpu::ElemOp::kAdd, {0, 1, 2}}};
  spec.outputs = {{2, DType::kFloat32}};
  const gpu::FusedKernel expected = gpu::generate_fused_elementwise(spec);

  // The weight comes from the host: binding copies it into device memory.
  Ref<Model> model = compile(g, {{"w", host_tensor({2, 3}, {10, 20, 30, 40, 50, 60})}});
  Ref<Tensor> in = host_tensor({2, 3}, {1, 2, 3, 4, 5, 6})->copy(gpu_);
  std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{in});
  EXPECT_EQ(driver_log().launches, std::vector<std::string>{expected.name});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->device().get(), gpu_.get());
  EXPECT_TRUE(in_device_memory(out[0]->data()));
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{11, 22, 33, 44, 55, 66}));
}

// An ONNX file carries no placement: read with a device, it is moved there whole (its
// initializers become device weights when bound) and runs on the GPU like a graph built there.
TEST_F(GpuEngine, OnnxFileReadForTheGpuRunsThere) {
  namespace pw = onnx::testing;
  pw::GraphSpec spec;
  spec.nodes = {pw::node("Add", {"x", "b"}, {"y"})};
  spec.initializers = {pw::tensor_f32("b", {2, 3}, {10, 20, 30, 40, 50, 60})};
  spec.inputs = {pw::value_info("x", pw::kFloat, {int64_t{2}, int64_t{3}})};
  spec.outputs = {pw::value_info("y", pw::kFloat, {int64_t{2}, int64_t{3}})};
  const std::string path = "/tmp/max_c_gpu_onnx_" + std::to_string(getpid()) + ".onnx";
  std::ofstream(path, std::ios::binary) << pw::model(spec);
  ModelFile file = read_model_file(path, DeviceRef::gpu(0));
  std::remove(path.c_str());
  EXPECT_EQ(file.graph.type(file.graph.inputs()[0].value).device, DeviceRef::gpu(0));

  Ref<Model> model = Model::create(CompiledModel::compile(context_, file.graph, CompileSettings{}, file.weights), NamedTensors{});
  std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{host_tensor({2, 3}, {1, 2, 3, 4, 5, 6})->copy(gpu_)});
  EXPECT_EQ(driver_log().launches.size(), 1u);
  EXPECT_EQ(out[0]->device().get(), gpu_.get());
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{11, 22, 33, 44, 55, 66}));
}

TEST_F(GpuEngine, HostInputIsRefusedNamingItAndTheModelStaysUsable) {
  Graph g("relu");
  ValueId x = g.add_input("x", f32_on_gpu({4}));
  g.set_outputs({{"y", g.add_op("relu", {x})[0]}});
  Ref<Model> model = compile(g);
  Ref<Tensor> host = host_tensor({4}, {-1, 2, -3, 4});
  EXPECT_MAXC_ERROR(model->execute(std::vector<Ref<Tensor>>{host}), Code::kInvalidArgument,
                    "input 0 'x' is on cpu:0 but the model runs on gpu:0");
  std::vector<Ref<Tensor>> out;
  ASSERT_NO_THROW(out = model->execute(std::vector<Ref<Tensor>>{host->copy(gpu_)}));
  EXPECT_EQ(driver_log().launches.size(), 1u);
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{0, 2, 0, 4}));
}

// What the caller asks for with copy_inputs_to_device: a host input is copied in per call.
TEST_F(GpuEngine, HostInputIsCopiedWhenTheModelCopiesInputs) {
  Graph g("softmax");
  ValueId x = g.add_input("x", f32_on_gpu({4}));
  g.set_outputs({{"y", g.add_op("softmax", {x})[0]}});
  CompileSettings settings;
  settings.copy_inputs = true;
  Ref<Model> model = Model::create(CompiledModel::compile(context_, g, settings), NamedTensors{});
  Ref<Tensor> host = host_tensor({4}, {-1, 2, -3, 4});
  std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{host});
  EXPECT_EQ(out[0]->device().get(), gpu_.get());
  EXPECT_TRUE(in_device_memory(out[0]->data()));
  const std::vector<float> y = values_of(*out[0]);
  EXPECT_NEAR(y[0] + y[1] + y[2] + y[3], 1.0, 1e-6);
  EXPECT_GT(y[3], y[1]);
  EXPECT_EQ(values_of(*host), (std::vector<float>{-1, 2, -3, 4}));
}

// Every op of the registry has a GPU lowering now (gpu_kernel_table_test.cc), so what a graph
// can still ask in vain is a variant that the lowering refuses: argsort of int8.
TEST_F(GpuEngine, OpTheGpuCannotRunIsUnimplementedAtCompileNamingIt) {
  Graph g("argsort");
  ValueId a = g.add_input("a", on_gpu(DType::kInt8, {4}));
  Attrs attrs;
  attrs.set("ascending", true);
  g.set_outputs({{"y", g.add_op("argsort", {a}, attrs)[0]}});
  EXPECT_MAXC_ERROR(CompiledModel::compile(context_, g, CompileSettings{}), Code::kUnimplemented,
                    "op 'argsort': no GPU kernel for dtype int8");
}

// gather's kernel reports a bad index through the step's error word: the call fails naming
// the op once its stream is done, and the next call with good indices runs.
TEST_F(GpuEngine, GatherIndexOutOfRangeFailsTheCallNamingTheOp) {
  Graph g("embedding");
  ValueId table = g.add_weight("table", f32_on_gpu({4, 2}));
  ValueId ids = g.add_input("ids", TensorType{DType::kInt64, {3}, DeviceRef::gpu(0)});
  Attrs attrs;
  attrs.set("axis", int64_t{0});
  g.set_outputs({{"y", g.add_op("gather", {table, ids}, attrs)[0]}});
  Ref<Model> model = compile(g, {{"table", host_tensor({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31})}});
  auto ids_tensor = [&](std::vector<int64_t> v) {
    auto t = Tensor::create(Device::cpu(), DType::kInt64, {3});
    std::memcpy(t->data(), v.data(), 3 * sizeof(int64_t));
    return t->copy(gpu_);
  };
  EXPECT_MAXC_ERROR(model->execute(std::vector<Ref<Tensor>>{ids_tensor({0, 9, 1})}), Code::kInvalidArgument,
                    "op 'gather': index values of 'indices' are out of range");
  std::vector<float> y = values_of(*model->execute(std::vector<Ref<Tensor>>{ids_tensor({3, 0, 2})})[0]);
  EXPECT_EQ(y, (std::vector<float>{30, 31, 0, 1, 20, 21}));
}

// relu(x @ w + b) is one fused matmul launch: the tiled kernel with Relu in its epilogue, the
// bias one value per column.
TEST_F(GpuEngine, DenseLayerIsOneMatmulLaunchWithItsEpilogue) {
  Graph g("dense");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  ValueId w = g.add_weight("w", f32_on_gpu({3, 2}));
  ValueId b = g.add_weight("b", f32_on_gpu({2}));
  g.set_outputs({{"y", g.add_op("relu", {g.add_op("add", {g.add_op("matmul", {x, w})[0], b})[0]})[0]}});
  Ref<Model> model = compile(g, {{"w", host_tensor({3, 2}, {1, -1, 2, -2, 3, -3})}, {"b", host_tensor({2}, {0.5, 0.5})}});
  Ref<Tensor> in = host_tensor({2, 3}, {1, 1, 1, 1, 0, 0})->copy(gpu_);
  std::vector<float> y = values_of(*model->execute(std::vector<Ref<Tensor>>{in})[0]);
  ASSERT_EQ(driver_log().launches.size(), 1u);
  EXPECT_EQ(launches_of("matmul_tiled"), 1u) << driver_log().launches[0];
  EXPECT_NE(driver_log().launches[0].find("Relu"), std::string::npos) << "the activation is not in the kernel";
  EXPECT_EQ(y, (std::vector<float>{6.5f, 0.0f, 1.5f, 0.0f}));
}

}  // namespace
}  // namespace maxc::testing

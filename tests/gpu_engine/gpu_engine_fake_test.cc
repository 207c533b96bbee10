// The GPU engine end to end on the fake CUDA driver (gpu/fake_cuda.h), installed as the
// process's driver: a graph placed on gpu:0 compiles (its kernels through the real NVRTC, for
// the fake's sm_90), binds its weights into device memory, and executes on a stream, with
// the few kernels these tests use emulated on the host (the fake's device memory is host
// memory). What this checks is the engine's plumbing on a machine without a GPU: which
// kernels launch, with which arguments, on which memory; the kernels' numerics are checked on
// a real GPU (tests/gpu/cuda_gpu_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <unistd.h>
#include <vector>

#include "driver/cuda/cuda_driver.h"
#include "driver/cuda/nvrtc_api.h"
#include "driver/device.h"
#include "driver/test_util.h"
#include "engine/compiled_model.h"
#include "engine/model.h"
#include "engine/model_file.h"
#include "gpu/fake_cuda.h"
#include "gpu/gpu_test_util.h"
#include "gpu_engine/engine_on_fake.h"
#include "kernels/cuda/common/indexing.cuh"
#include "kernels/cuda/fused_elementwise.h"
#include "onnx/proto_writer.h"

namespace maxc::testing {
namespace {

using GpuEngineOnFake = EngineOnFake;

// y = x + w: one generated elementwise kernel, its name the digest of the program the CPU
// engine would run, reading the input and the weight in device memory.
TEST_F(GpuEngineOnFake, ElementwiseGraphRunsOneGeneratedKernelOnDeviceMemory) {
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

  int emulated = 0;
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_EQ(name, expected.name);
    std::vector<const float*> leaves(2);
    float* out = nullptr;
    gpu::Shape shape{};
    for (size_t p = 0; p < expected.params.size(); ++p) {
      const auto& param = expected.params[p];
      if (param.kind == gpu::FusedKernel::ParamKind::kShape) shape = arg<gpu::Shape>(args, p);
      if (param.kind == gpu::FusedKernel::ParamKind::kLeaf) leaves[param.index] = arg<const float*>(args, p);
      if (param.kind == gpu::FusedKernel::ParamKind::kOutput) out = arg<float*>(args, p);
    }
    ASSERT_EQ(shape.numel, 6);
    for (const void* p : {static_cast<const void*>(leaves[0]), static_cast<const void*>(leaves[1]),
                          static_cast<const void*>(out)})
      ASSERT_TRUE(in_device_memory(p)) << "a kernel got a pointer outside device memory";
    for (int64_t i = 0; i < shape.numel; ++i) out[i] = leaves[0][i] + leaves[1][i];
    ++emulated;
  };

  // The weight comes from the host: binding copies it into device memory.
  Ref<Model> model = compile(g, {{"w", host_tensor({2, 3}, {10, 20, 30, 40, 50, 60})}});
  Ref<Tensor> in = host_tensor({2, 3}, {1, 2, 3, 4, 5, 6})->copy(gpu_);
  const int syncs_before = fake().stream_syncs;
  std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{in});
  EXPECT_EQ(emulated, 1);
  EXPECT_GT(fake().stream_syncs, syncs_before) << "execute returned before its stream was done";
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->device().get(), gpu_.get());
  EXPECT_TRUE(in_device_memory(out[0]->data()));
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{11, 22, 33, 44, 55, 66}));
}

// An ONNX file carries no placement: read with a device, it is moved there whole (its
// initializers become device weights when bound) and runs on the GPU like a graph built there.
TEST_F(GpuEngineOnFake, OnnxFileReadForTheGpuRunsThere) {
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

  int launches = 0;
  fake().on_launch = [&](const std::string&, void** args) {
    const auto *a = arg<const float*>(args, 1), *b = arg<const float*>(args, 2);
    auto* out = arg<float*>(args, 3);
    for (const void* p : {static_cast<const void*>(a), static_cast<const void*>(b), static_cast<const void*>(out)})
      ASSERT_TRUE(in_device_memory(p)) << "a kernel got a pointer outside device memory";
    for (int i = 0; i < 6; ++i) out[i] = a[i] + b[i];
    ++launches;
  };
  Ref<Model> model = Model::create(CompiledModel::compile(context_, file.graph, CompileSettings{}, file.weights), NamedTensors{});
  std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{host_tensor({2, 3}, {1, 2, 3, 4, 5, 6})->copy(gpu_)});
  EXPECT_EQ(launches, 1);
  EXPECT_EQ(out[0]->device().get(), gpu_.get());
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{11, 22, 33, 44, 55, 66}));
}

// softmax runs the catalog's softmax_rows with (x, y, rows, cols, inner), one block per row.
TEST_F(GpuEngineOnFake, SoftmaxLaunchesTheCatalogKernelWithItsRows) {
  Graph g("softmax");
  ValueId x = g.add_input("x", f32_on_gpu({3, 4}));
  g.set_outputs({{"y", g.add_op("softmax", {x})[0]}});
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("softmax_rows"), std::string::npos) << name;
    const auto* in = arg<const float*>(args, 0);
    auto* out = arg<float*>(args, 1);
    const auto rows = arg<int64_t>(args, 2), cols = arg<int64_t>(args, 3);
    ASSERT_EQ(rows, 3);
    ASSERT_EQ(cols, 4);
    ASSERT_EQ(arg<int64_t>(args, 4), 1) << "the last axis: each row's elements are adjacent";
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += std::exp(in[r * cols + c]);
      for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = static_cast<float>(std::exp(in[r * cols + c]) / sum);
    }
  };
  Ref<Model> model = compile(g);
  Ref<Tensor> in = host_tensor({3, 4}, {0, 0, 0, 0, 1, 2, 3, 4, -1, 0, 1, 2})->copy(gpu_);
  std::vector<float> y = values_of(*model->execute(std::vector<Ref<Tensor>>{in})[0]);
  ASSERT_EQ(fake().launches.size(), 1u);
  for (int r = 0; r < 3; ++r) EXPECT_NEAR(y[r * 4] + y[r * 4 + 1] + y[r * 4 + 2] + y[r * 4 + 3], 1.0, 1e-6);
  EXPECT_FLOAT_EQ(y[0], 0.25f);
}

// transpose is one copy_strided launch that reads the input through permuted strides; the
// emulation walks the output as the kernel does (gpu::offset_of is host code too).
TEST_F(GpuEngineOnFake, TransposeReadsTheInputThroughPermutedStrides) {
  Graph g("transpose");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  Attrs attrs;
  attrs.set("axis_1", int64_t{0});
  attrs.set("axis_2", int64_t{1});
  g.set_outputs({{"y", g.add_op("transpose", {x}, attrs)[0]}});
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("copy_strided"), std::string::npos) << name;
    const auto* in = arg<const float*>(args, 0);
    const auto layout = arg<gpu::Layout>(args, 1);
    auto* out = arg<float*>(args, 2);
    const auto shape = arg<gpu::Shape>(args, 3);
    for (int64_t i = 0; i < shape.numel; ++i) out[i] = in[gpu::offset_of(i, shape, layout)];
  };
  Ref<Model> model = compile(g);
  Ref<Tensor> in = host_tensor({2, 3}, {1, 2, 3, 4, 5, 6})->copy(gpu_);
  Ref<Tensor> out = model->execute(std::vector<Ref<Tensor>>{in})[0];
  EXPECT_EQ(out->dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values_of(*out), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST_F(GpuEngineOnFake, HostInputIsRefusedNamingItAndTheModelStaysUsable) {
  Graph g("relu");
  ValueId x = g.add_input("x", f32_on_gpu({4}));
  g.set_outputs({{"y", g.add_op("relu", {x})[0]}});
  Ref<Model> model = compile(g);
  Ref<Tensor> host = host_tensor({4}, {-1, 2, -3, 4});
  EXPECT_MAXC_ERROR(model->execute(std::vector<Ref<Tensor>>{host}), Code::kInvalidArgument,
                    "input 0 'x' is on cpu:0 but the model runs on gpu:0");
  fake().on_launch = [](const std::string&, void**) {};
  EXPECT_NO_THROW(model->execute(std::vector<Ref<Tensor>>{host->copy(gpu_)}));
  EXPECT_EQ(fake().launches.size(), 1u);
}

// What the caller asks for with copy_inputs_to_device: a host input is copied in per call.
TEST_F(GpuEngineOnFake, HostInputIsCopiedWhenTheModelCopiesInputs) {
  Graph g("softmax");
  ValueId x = g.add_input("x", f32_on_gpu({4}));
  g.set_outputs({{"y", g.add_op("softmax", {x})[0]}});
  CompileSettings settings;
  settings.copy_inputs = true;
  Ref<Model> model = Model::create(CompiledModel::compile(context_, g, settings), NamedTensors{});
  const void* seen = nullptr;
  fake().on_launch = [&](const std::string&, void** args) { seen = arg<const void*>(args, 0); };  // softmax_rows(x, ...)
  Ref<Tensor> host = host_tensor({4}, {-1, 2, -3, 4});
  std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{host});
  EXPECT_TRUE(in_device_memory(seen)) << "the kernel read the host tensor";
  EXPECT_EQ(out[0]->device().get(), gpu_.get());
  EXPECT_EQ(values_of(*host), (std::vector<float>{-1, 2, -3, 4}));
}

// Every op of the registry has a GPU lowering now (gpu_kernel_table_test.cc), so what a graph
// can still ask in vain is a variant that the lowering refuses: argsort of int8.
TEST_F(GpuEngineOnFake, OpTheGpuCannotRunIsUnimplementedAtCompileNamingIt) {
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
TEST_F(GpuEngineOnFake, GatherIndexOutOfRangeFailsTheCallNamingTheOp) {
  Graph g("embedding");
  ValueId table = g.add_weight("table", f32_on_gpu({4, 2}));
  ValueId ids = g.add_input("ids", TensorType{DType::kInt64, {3}, DeviceRef::gpu(0)});
  Attrs attrs;
  attrs.set("axis", int64_t{0});
  g.set_outputs({{"y", g.add_op("gather", {table, ids}, attrs)[0]}});
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("gather"), std::string::npos) << name;
    const auto* x = arg<const float*>(args, 0);
    const auto* idx = arg<const int64_t*>(args, 1);
    auto* y = arg<float*>(args, 2);
    const auto axis_size = arg<int64_t>(args, 4), inner = arg<int64_t>(args, 5), count = arg<int64_t>(args, 6);
    auto* bad = arg<int32_t*>(args, 7);
    ASSERT_TRUE(in_device_memory(bad));
    for (int64_t k = 0; k < count; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        const bool ok = idx[k] >= 0 && idx[k] < axis_size;
        y[k * inner + i] = ok ? x[idx[k] * inner + i] : 0.0f;
        if (!ok) *bad = 1;
      }
  };
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
TEST_F(GpuEngineOnFake, DenseLayerIsOneMatmulLaunchWithItsEpilogue) {
  Graph g("dense");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  ValueId w = g.add_weight("w", f32_on_gpu({3, 2}));
  ValueId b = g.add_weight("b", f32_on_gpu({2}));
  g.set_outputs({{"y", g.add_op("relu", {g.add_op("add", {g.add_op("matmul", {x, w})[0], b})[0]})[0]}});
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("matmul_tiled"), std::string::npos) << name;
    ASSERT_NE(name.find("Relu"), std::string::npos) << "the activation is not in the kernel: " << name;
    const auto *lhs = arg<const float*>(args, 0), *rhs = arg<const float*>(args, 1), *bias = arg<const float*>(args, 2);
    auto* out = arg<float*>(args, 3);
    const auto m = arg<int64_t>(args, 4), n = arg<int64_t>(args, 5), k = arg<int64_t>(args, 6);
    ASSERT_EQ(m, 2);
    ASSERT_EQ(n, 2);
    ASSERT_EQ(k, 3);
    ASSERT_EQ(arg<int32_t>(args, 9), 0);
    ASSERT_EQ(arg<int64_t>(args, 10), 2) << "bias_len";
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = bias[j];
        for (int64_t p = 0; p < k; ++p) acc += lhs[i * k + p] * rhs[p * n + j];
        out[i * n + j] = std::max(acc, 0.0f);
      }
  };
  Ref<Model> model = compile(g, {{"w", host_tensor({3, 2}, {1, -1, 2, -2, 3, -3})}, {"b", host_tensor({2}, {0.5, 0.5})}});
  Ref<Tensor> in = host_tensor({2, 3}, {1, 1, 1, 1, 0, 0})->copy(gpu_);
  std::vector<float> y = values_of(*model->execute(std::vector<Ref<Tensor>>{in})[0]);
  EXPECT_EQ(fake().launches.size(), 1u);
  EXPECT_EQ(y, (std::vector<float>{6.5f, 0.0f, 1.5f, 0.0f}));
}

}  // namespace
}  // namespace maxc::testing

// The GPU engine on a HIP device: the fake HIP runtime (gpu/fake_hip.h) installed as the
// process's, a graph placed on gpu:0 of a context holding hip:0. Its kernels compile with the
// real hipRTC for the device's gfx target (an NVRTC compile of a gfx target would fail), load
// and launch through the HIP binding on the fake's host memory, where nothing runs them: HIP
// has no emulated runtime (the emulated GPU stands in for CUDA and NVRTC only), so what runs
// here is the binding's plumbing, and a HIP kernel's values are a real GPU's to check
// (scripts/gpu_check.sh). Matmuls go to the process's hipBLASLt (the fake of
// gpu/fake_hipblaslt.h) where one is installed, never to its cuBLASLt, which serves CUDA
// devices only.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "driver/cuda/cublaslt_api.h"
#include "driver/cuda/cuda_device.h"
#include "driver/device.h"
#include "driver/hip/hiprtc_compiler.h"
#include "driver/test_util.h"
#include "gpu/fake_cublaslt.h"
#include "gpu/fake_hip.h"
#include "gpu/fake_hipblaslt.h"
#include "gpu/gpu_test_util.h"
#include "engine/compiled_model.h"
#include "engine/model.h"

namespace maxc::testing {
namespace {

TensorType f32_on_gpu(std::vector<Dim> dims) { return TensorType{DType::kFloat32, std::move(dims), DeviceRef::gpu(0)}; }

Ref<Tensor> host_tensor(std::vector<int64_t> dims, const std::vector<float>& values) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat32, dims);
  std::memcpy(t->data(), values.data(), values.size() * sizeof(float));
  return t;
}

// Whether `p` points into a block the fake allocated as device memory.
bool in_device_memory(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto it = fake().device_blocks.upper_bound(a);
  if (it == fake().device_blocks.begin()) return false;
  --it;
  return a >= it->first && a < it->first + it->second;
}

class HipEngineOnFake : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    use_fake_as_process_driver();
    use_fake_as_process_hip_driver();
  }

  void SetUp() override {
    if (!hip::hiprtc().available)
      MAXC_SKIP_UNLESS_REQUIRED(hiprtc_required(), "no hipRTC to compile the kernels: " + hip::hiprtc().unavailable_reason);
    fake().launches.clear();
    gpu_ = Device::get(Device::Kind::kHip, 0);
    context_ = Context::create(ContextOptions{{Device::cpu(), gpu_}, 1});
  }

  Ref<Model> compile(const Graph& g, const NamedTensors& weights = {}) {
    return Model::create(CompiledModel::compile(context_, g, CompileSettings{}), weights);
  }

  Ref<Device> gpu_;
  Ref<Context> context_;
};

TEST_F(HipEngineOnFake, TheDeviceIsHipsWithItsGfxTarget) {
  EXPECT_EQ(gpu_->device_kind(), Device::Kind::kHip);
  EXPECT_STREQ(gpu_->api(), "hip");
  EXPECT_EQ(gpu_->cuda()->describe(), "hip:0 (Fake GPU 0, gfx90a:sramecc+:xnack-)");
  EXPECT_EQ(Device::accelerator_count(), 4) << "two fake CUDA devices and two fake HIP ones";
}

TEST_F(HipEngineOnFake, ElementwiseGraphCompilesWithHiprtcAndLaunchesOnDeviceMemory) {
  Graph g("add");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  ValueId w = g.add_weight("w", f32_on_gpu({2, 3}));
  g.set_outputs({{"y", g.add_op("add", {x, w})[0]}});
  Ref<Model> model = compile(g, {{"w", host_tensor({2, 3}, {10, 20, 30, 40, 50, 60})}});
  Ref<Tensor> in = host_tensor({2, 3}, {1, 2, 3, 4, 5, 6})->copy(gpu_);
  std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{in});
  EXPECT_EQ(fake().launches.size(), 1u) << "one generated kernel, loaded and launched through HIP";
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->device().get(), gpu_.get());
  EXPECT_TRUE(in_device_memory(out[0]->data()));
}

TEST_F(HipEngineOnFake, MatmulStaysOnTheTiledKernelBesideAnInstalledCublasLt) {
  reset_fake_lt();
  cuda::set_process_cublaslt(
      cuda::init_cublaslt([](const char* name) { return fake_cublaslt_symbol(name); }, "fake cuBLASLt"));
  Graph g("matmul");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  ValueId w = g.add_weight("w", f32_on_gpu({3, 4}));
  g.set_outputs({{"y", g.add_op("matmul", {x, w})[0]}});
  Ref<Model> model = compile(g, {{"w", host_tensor({3, 4}, std::vector<float>(12, 1.0f))}});
  model->execute(std::vector<Ref<Tensor>>{host_tensor({2, 3}, {1, 2, 3, 4, 5, 6})->copy(gpu_)});
  cuda::set_process_cublaslt(nullptr);
  EXPECT_TRUE(fake_lt().matmuls.empty()) << "cuBLASLt was called for a HIP device";
  ASSERT_EQ(fake().launches.size(), 1u);
  EXPECT_NE(fake().launches[0].find("matmul_tiled"), std::string::npos) << fake().launches[0];
}

TEST_F(HipEngineOnFake, DenseLayerRunsOnHipblasLtWithItsEpilogue) {
  reset_fake_hiplt();
  cuda::set_process_cublaslt(
      cuda::init_cublaslt([](const char* name) { return fake_hipblaslt_symbol(name); }, "fake hipBLASLt",
                          cuda::GpuBackend::kHip),
      cuda::GpuBackend::kHip);
  Graph g("dense");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  ValueId w = g.add_weight("w", f32_on_gpu({3, 2}));
  ValueId b = g.add_weight("b", f32_on_gpu({2}));
  ValueId y = g.add_op("add", {g.add_op("matmul", {x, w})[0], b})[0];
  g.set_outputs({{"y", g.add_op("relu", {y})[0]}});
  Ref<Model> model = compile(g, {{"w", host_tensor({3, 2}, {1, -1, 2, -2, 3, -3})}, {"b", host_tensor({2}, {0.5f, 1})}});
  std::vector<Ref<Tensor>> out =
      model->execute(std::vector<Ref<Tensor>>{host_tensor({2, 3}, {1, 2, 3, -4, -5, -6})->copy(gpu_)});
  cuda::set_process_cublaslt(nullptr, cuda::GpuBackend::kHip);
  ASSERT_EQ(fake_lt().matmuls.size(), 1u) << "hipBLASLt was not called";
  EXPECT_EQ(fake_lt().matmuls[0].desc.epilogue, 6u) << "bias, then relu";
  EXPECT_TRUE(fake().launches.empty()) << "a kernel ran beside hipBLASLt: " << fake().launches[0];
  // x @ w = [[14, -14], [-32, 32]]; + b, then relu.
  Ref<Tensor> on_host = out[0]->copy(Device::cpu());
  const auto* v = reinterpret_cast<const float*>(on_host->data());
  EXPECT_EQ(std::vector<float>(v, v + 4), (std::vector<float>{14.5f, 0, 0, 33}));
}

// With the process's own search (no fake installed) and a driver bound in-process, hipBLASLt
// is unavailable with the reason rather than a real library driving fake memory.
TEST_F(HipEngineOnFake, RealHipblasLtIsNeverPairedWithAnInProcessDriver) {
  cuda::set_process_cublaslt(nullptr, cuda::GpuBackend::kHip);
  const auto lib = cuda::cublaslt(cuda::GpuBackend::kHip);
  EXPECT_FALSE(lib->available);
  EXPECT_NE(lib->unavailable_reason.find("bound in-process"), std::string::npos) << lib->unavailable_reason;
}

}  // namespace
}  // namespace maxc::testing

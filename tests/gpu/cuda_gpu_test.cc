// On a machine with a CUDA GPU: the driver layer against the real driver, and kernels from
// kernels/cuda compiled by NVRTC, loaded and run, their results checked on the host. Without
// a GPU every test here skips with the reason; MAX_C_REQUIRE_GPU=1 makes that a failure.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_event.h"
#include "driver/cuda/cuda_module.h"
#include "driver/cuda/cuda_platform.h"
#include "driver/cuda/cuda_stream.h"
#include "driver/cuda/nvrtc_compiler.h"
#include "driver/device.h"
#include "driver/tensor.h"
#include "driver/test_util.h"
#include "gpu/gpu_test_util.h"
#include "kernels/cuda/common/cast.cuh"
#include "kernels/cuda/fused_elementwise.h"
#include "kernels/cuda/kernel_catalog.h"
#include "kernels/cuda/kernel_sources.h"

namespace maxc::testing {
namespace {

using namespace maxc::cuda;

#define MAXC_NEED_GPU()                                                                                   \
  if (Device::accelerator_count() == 0)                                                                   \
  MAXC_SKIP_UNLESS_REQUIRED(gpu_required(),                                                               \
                            "no CUDA GPU: " + CudaPlatform::process().unavailable_reason())

#define MAXC_NEED_GPU_AND_NVRTC()                                                                             \
  MAXC_NEED_GPU();                                                                                            \
  if (!nvrtc().available) MAXC_SKIP_UNLESS_REQUIRED(nvrtc_required(), "no NVRTC: " + nvrtc().unavailable_reason)

CudaDevice& gpu0() { return *Device::get(Device::Kind::kCuda, 0)->cuda(); }

TEST(CudaGpu, DeviceIsDescribed) {
  MAXC_NEED_GPU();
  auto device = Device::get(Device::Kind::kCuda, -1);
  EXPECT_EQ(device->id(), 0);
  EXPECT_EQ(device.get(), Device::get(Device::Kind::kCuda, 0).get());
  EXPECT_STREQ(device->api(), "cuda");
  EXPECT_FALSE(device->is_host());
  const CudaDeviceProperties& p = device->cuda()->properties();
  std::cout << "[ gpu      ] " << device->cuda()->describe() << ", " << (p.total_memory >> 20) << " MiB, "
            << p.multiprocessors << " SMs\n";
  EXPECT_FALSE(p.name.empty());
  EXPECT_EQ(p.architecture().rfind("sm_", 0), 0u);
  EXPECT_GT(p.total_memory, 0u);
}

TEST(CudaGpu, TensorsLiveInDeviceMemory) {
  MAXC_NEED_GPU();
  auto device = Device::get(Device::Kind::kCuda, 0);
  auto t = Tensor::create(device, DType::kFloat32, {16, 16}, /*zero=*/true);
  std::vector<float> back(256, 1.0f);
  device->cuda()->copy_to_host(back.data(), t->data(), back.size() * sizeof(float));
  for (float v : back) ASSERT_EQ(v, 0.0f);
  EXPECT_MAXC_ERROR(t->check_host("reading"), Code::kFailedPrecondition, "not the host");
}

TEST(CudaGpu, CopiesRoundTripThroughStreamsAndPinnedMemory) {
  MAXC_NEED_GPU();
  CudaDevice& d = gpu0();
  const size_t n = 1 << 20;
  auto* pinned = static_cast<float*>(d.allocate_pinned(n * sizeof(float)));
  std::iota(pinned, pinned + n, 0.0f);
  CudaStream stream(d);
  CudaEvent start(d, true), end(d, true);
  void* a = d.allocate(n * sizeof(float), false, &stream);
  void* b = d.allocate(n * sizeof(float), false, &stream);
  start.record(&stream);
  d.copy_to_device(a, pinned, n * sizeof(float), &stream);
  d.copy_within(b, a, n * sizeof(float), &stream);
  std::memset(pinned, 0, n * sizeof(float));
  stream.synchronize();  // the memset above must not race the upload: wait, then download
  d.copy_to_host(pinned, b, n * sizeof(float), &stream);
  end.record(&stream);
  end.synchronize();
  EXPECT_TRUE(end.done());
  EXPECT_GE(CudaEvent::elapsed_ms(start, end), 0.0f);
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(pinned[i], static_cast<float>(i));
  d.deallocate(a);
  d.deallocate(b);
  d.deallocate_pinned(pinned);
}

TEST(CudaGpu, MemoryLimitRefusesWhatWouldPassIt) {
  MAXC_NEED_GPU();
  CudaDevice d(CudaPlatform::process().device(0).api(), 0);  // a private allocator to limit
  d.set_memory_limit(size_t{64} << 20);
  void* a = d.allocate(size_t{48} << 20, false);
  EXPECT_MAXC_ERROR(d.allocate(size_t{32} << 20, false), Code::kResourceExhausted, "memory limit");
  d.deallocate(a);
}

// Compiles `expression` of `source` for GPU 0 through the process's kernel cache.
struct Loaded {
  std::unique_ptr<CudaModule> module;
  CUfunction function;
};
Loaded load_kernel(const KernelSource& source, const std::string& expression) {
  CudaDevice& d = gpu0();
  CompileRequest r{source, d.properties().architecture(), {}, {}};
  if (!expression.empty()) r.name_expressions = {expression};
  auto k = nvrtc_kernel_cache().get(r);
  Loaded l;
  l.module = std::make_unique<CudaModule>(d, k->image, source.name);
  l.function = l.module->function(expression.empty() ? source.name.substr(0, source.name.size() - 3)
                                                     : k->lowered(expression));
  return l;
}

LaunchShape blocks_for(int64_t n) {
  LaunchShape s;
  s.block[0] = 256;
  s.grid[0] = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 4096));
  return s;
}

TEST(CudaGpu, FillAndCastKernelsRun) {
  MAXC_NEED_GPU_AND_NVRTC();
  CudaDevice& d = gpu0();
  const int64_t n = 100000;
  float* x = static_cast<float*>(d.allocate(n * sizeof(float), false));
  auto* h = static_cast<gpu::half*>(d.allocate(n * sizeof(gpu::half), false));

  Loaded fill = load_kernel(gpu::kernel_source("fill.cu"), gpu::fill_kernel(DType::kFloat32));
  uint32_t value = 0;
  const float two_and_a_half = 2.5f;
  std::memcpy(&value, &two_and_a_half, sizeof value);
  int64_t count = n;
  void* fill_args[] = {&x, &count, &value};
  fill.module->launch(fill.function, blocks_for(n), nullptr, fill_args);

  Loaded cast = load_kernel(gpu::kernel_source("cast.cu"), gpu::cast_kernel(DType::kFloat32, DType::kFloat16));
  gpu::Layout dense{};
  dense.dense = 1;
  gpu::Shape shape = gpu::fused_shape({n});
  int32_t saturate = 1;
  void* cast_args[] = {&x, &dense, &h, &shape, &saturate};
  cast.module->launch(cast.function, blocks_for(n), nullptr, cast_args);

  std::vector<gpu::half> back(n);
  d.copy_to_host(back.data(), h, n * sizeof(gpu::half));
  for (int64_t i = 0; i < n; i += 997) ASSERT_EQ(back[i].bits, 0x4100) << i;  // 2.5 in float16
  d.deallocate(x);
  d.deallocate(h);
}

TEST(CudaGpu, SoftmaxRowsSumToOne) {
  MAXC_NEED_GPU_AND_NVRTC();
  CudaDevice& d = gpu0();
  const int64_t rows = 37, cols = 1000;
  std::vector<float> host(rows * cols);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((i * 7919) % 113) * 0.05f - 2.0f;
  float* x = static_cast<float*>(d.allocate(host.size() * sizeof(float), false));
  float* y = static_cast<float*>(d.allocate(host.size() * sizeof(float), false));
  d.copy_to_device(x, host.data(), host.size() * sizeof(float));
  Loaded k = load_kernel(gpu::kernel_source("softmax.cu"), gpu::softmax_kernel(DType::kFloat32, false));
  int64_t r = rows, c = cols, inner = 1;  // rows over the last axis
  void* args[] = {&x, &y, &r, &c, &inner};
  LaunchShape s;
  s.grid[0] = rows;
  s.block[0] = 256;
  k.module->launch(k.function, s, nullptr, args);
  std::vector<float> out(host.size());
  d.copy_to_host(out.data(), y, out.size() * sizeof(float));
  for (int64_t i = 0; i < rows; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += out[i * cols + j];
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << i;
  }
  d.deallocate(x);
  d.deallocate(y);
}

TEST(CudaGpu, GeneratedFusedKernelRuns) {
  MAXC_NEED_GPU_AND_NVRTC();
  // y = relu(x * w + b) with w [4] and b a scalar, x [3, 4].
  cpu::ElemProgramSpec spec;
  spec.dims = {3, 4};
  spec.leaves = {{DType::kFloat32, {3, 4}}, {DType::kFloat32, {4}}, {DType::kFloat32, {}}};
  spec.steps = {{cpu::ElemOp::kMul, {0, 1, -1}}, {cpu::ElemOp::kAdd, {3, 2, -1}}, {cpu::ElemOp::kRelu, {4, -1, -1}}};
  spec.outputs = {{5, DType::kFloat32}};
  const gpu::FusedKernel fused = gpu::generate_fused_elementwise(spec);
  Loaded k = load_kernel(gpu::kernel_source_from_text(fused.name + ".cu", fused.source), "");
  CudaDevice& d = gpu0();
  const std::vector<float> x = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12}, w = {1, 2, 3, 4};
  const float b = -1;
  float* dx = static_cast<float*>(d.allocate(x.size() * sizeof(float), false));
  float* dw = static_cast<float*>(d.allocate(w.size() * sizeof(float), false));
  float* db = static_cast<float*>(d.allocate(sizeof(float), false));
  float* dy = static_cast<float*>(d.allocate(x.size() * sizeof(float), false));
  d.copy_to_device(dx, x.data(), x.size() * sizeof(float));
  d.copy_to_device(dw, w.data(), w.size() * sizeof(float));
  d.copy_to_device(db, &b, sizeof b);
  gpu::Shape shape = gpu::fused_shape(spec.dims);
  gpu::Layout w_layout = gpu::broadcast_layout(spec.leaves[1].dims, spec.dims);
  std::vector<void*> args;
  for (const gpu::FusedKernel::Param& p : fused.params) {
    switch (p.kind) {
      case gpu::FusedKernel::ParamKind::kShape: args.push_back(&shape); break;
      case gpu::FusedKernel::ParamKind::kLeaf: args.push_back(p.index == 0 ? static_cast<void*>(&dx)
                                                             : p.index == 1 ? static_cast<void*>(&dw)
                                                                            : static_cast<void*>(&db)); break;
      case gpu::FusedKernel::ParamKind::kLeafLayout: args.push_back(&w_layout); break;
      case gpu::FusedKernel::ParamKind::kOutput: args.push_back(&dy); break;
    }
  }
  k.module->launch(k.function, blocks_for(12), nullptr, args.data());
  std::vector<float> y(x.size());
  d.copy_to_host(y.data(), dy, y.size() * sizeof(float));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::max(0.0f, x[i] * w[i % 4] + b)) << i;
  for (float* p : {dx, dw, db, dy}) d.deallocate(p);
}

}  // namespace
}  // namespace maxc::testing

#include "engine/lower_gpu/kernel_loader.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "base/str_cat.h"
#include "driver/cuda/cuda_device.h"
#include "driver/cuda/nvrtc_compiler.h"
#include "driver/device.h"
#include "driver/hip/hiprtc_compiler.h"
#include "engine/launch_trace.h"
#include "kernels/cuda/kernel_sources.h"

namespace maxc {
namespace {

// Loading a module costs a driver call and device memory: plans share one per image.
std::shared_ptr<const cuda::CudaModule> module_for(const cuda::CudaDevice& device, const std::string& key,
                                                   const std::string& image, const std::string& label) {
  static std::mutex mu;
  static auto* modules = new std::map<std::pair<const cuda::CudaDevice*, std::string>,
                                      std::weak_ptr<const cuda::CudaModule>>();
  std::lock_guard lock(mu);
  std::weak_ptr<const cuda::CudaModule>& slot = (*modules)[{&device, key}];
  if (auto module = slot.lock()) return module;
  auto module = std::make_shared<const cuda::CudaModule>(device, image, label);
  slot = module;
  return module;
}

const cuda::CudaDevice& cuda_device_of(const LowerContext& ctx) {
  if (!ctx.device || !ctx.device->cuda())
    fail(Code::kInternal, ctx.op_label(), ": a GPU kernel was asked for a plan on the host");
  return *ctx.device->cuda();
}

// The compiler of the device's runtime: NVRTC for CUDA, hipRTC for HIP.
cuda::KernelCache& kernel_cache_for(const cuda::CudaDevice& device) {
  return device.api().backend == cuda::GpuBackend::kHip ? hip::hiprtc_kernel_cache() : cuda::nvrtc_kernel_cache();
}

// `expression` names a template instance; empty for a source whose kernel is `function`.
GpuKernel load(const LowerContext& ctx, cuda::KernelSource source, const std::string& expression,
               const std::string& function) {
  const cuda::CudaDevice& device = cuda_device_of(ctx);
  try {
    cuda::CompileRequest request{std::move(source), device.properties().architecture(), {}, {}};
    if (!expression.empty()) request.name_expressions = {expression};
    cuda::KernelCache& cache = kernel_cache_for(device);
    std::shared_ptr<const cuda::CompiledKernels> compiled = cache.get(request);
    auto module = module_for(device, cache.key(request), compiled->image, request.source.name);
    const std::string& name = expression.empty() ? function : expression;
    return GpuKernel(module, module->function(expression.empty() ? function : compiled->lowered(expression)), name);
  } catch (const Error& e) {
    fail(e.code(), ctx.op_label(), ": its GPU kernel ", expression.empty() ? function : expression, ": ", e.what());
  }
}

}  // namespace

void GpuKernel::launch(const cuda::LaunchShape& shape, const cuda::CudaStream* stream, void** args) const {
  if (LaunchTrace::open())
    LaunchTrace::record(str_cat(name_, " <<<", shape.grid[0], ",", shape.grid[1], ",", shape.grid[2], " x ",
                                shape.block[0], ",", shape.block[1], ",", shape.block[2], ">>>"));
  module_->launch(function_, shape, stream, args);
}

GpuKernel load_gpu_kernel(const LowerContext& ctx, const std::string& path, const std::string& name_expression) {
  return load(ctx, gpu::kernel_source(path), name_expression, "");
}

GpuKernel load_generated_gpu_kernel(const LowerContext& ctx, const cuda::KernelSource& source,
                                    const std::string& function) {
  return load(ctx, source, "", function);
}

cuda::LaunchShape gpu_launch_for_elements(int64_t n) {
  cuda::LaunchShape s;
  s.block[0] = kGpuBlock;
  s.grid[0] = static_cast<unsigned>(std::clamp<int64_t>((n + kGpuBlock - 1) / kGpuBlock, 1, 65535));
  return s;
}

cuda::LaunchShape gpu_launch_for_rows(int64_t rows) {
  cuda::LaunchShape s;
  s.block[0] = kGpuBlock;
  s.grid[0] = static_cast<unsigned>(std::clamp<int64_t>(rows, 1, 65535));
  return s;
}

}  // namespace maxc

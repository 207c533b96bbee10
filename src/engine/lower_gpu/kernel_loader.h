// Kernels of kernels/cuda, and generated ones, compiled for the device a plan runs on and
// loaded into it. A module is shared by every plan that asks for the same compiled image on
// the same device, and lives as long as a kernel of it is held.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "driver/cuda/cuda_module.h"
#include "driver/cuda/kernel_compiler.h"
#include "engine/lowering.h"

namespace maxc {

class GpuKernel {
 public:
  // `name`: the instance or function, as a launch trace shows it.
  GpuKernel(std::shared_ptr<const cuda::CudaModule> module, cuda::CUfunction function, std::string name)
      : module_(std::move(module)), function_(function), name_(std::move(name)) {}
  // args[i] points at the value of parameter i.
  void launch(const cuda::LaunchShape& shape, const cuda::CudaStream* stream, void** args) const;

 private:
  std::shared_ptr<const cuda::CudaModule> module_;
  cuda::CUfunction function_;
  std::string name_;
};

// Template instance `name_expression` of kernels/cuda/`path`, for the node of `ctx` (whose
// device must be a CUDA GPU). Compile errors come back with the node's label: UNAVAILABLE
// when there is no NVRTC, INTERNAL with the compiler's log for a source that does not compile.
GpuKernel load_gpu_kernel(const LowerContext& ctx, const std::string& path, const std::string& name_expression);
// The extern "C" kernel `function` of a generated source.
GpuKernel load_generated_gpu_kernel(const LowerContext& ctx, const cuda::KernelSource& source,
                                    const std::string& function);

// Threads per block of every launch: a whole number of warps on NVIDIA and AMD alike, as the
// block reductions of kernels/cuda/common require.
constexpr unsigned kGpuBlock = 256;
// A grid-stride launch over n elements (the kernels loop, so the grid is capped).
cuda::LaunchShape gpu_launch_for_elements(int64_t n);
// One block per row, up to the grid limit (the kernels loop over rows beyond it).
cuda::LaunchShape gpu_launch_for_rows(int64_t rows);

}  // namespace maxc

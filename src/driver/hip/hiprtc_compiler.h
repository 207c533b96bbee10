// KernelCompiler on hipRTC: the same sources, requests and cache as NVRTC's
// (driver/cuda/kernel_compiler.h), compiled to an AMD GPU code object for one gfx target.
// The sources see __HIPCC_RTC__ and take their MAXC_HIP branches (kernels/cuda/common/
// platform.cuh).
#pragma once

#include <string>
#include <vector>

#include "driver/cuda/kernel_cache.h"
#include "driver/cuda/kernel_compiler.h"
#include "driver/hip/hiprtc_api.h"

namespace maxc::hip {

// The offload option for an AMD GPU target ("gfx90a", "gfx942", "gfx1100", optionally with
// target features: "gfx90a:sramecc+:xnack-"). INVALID_ARGUMENT for anything else, which
// includes CUDA's sm_XY.
std::string hiprtc_target_option(const std::string& architecture);

class HiprtcCompiler : public cuda::KernelCompiler {
 public:
  // `library` must outlive the compiler (the process's hiprtc() does).
  explicit HiprtcCompiler(const HiprtcLibrary& library) : lib_(library) {}
  // "hiprtc 5.2" and the fixed options.
  std::string identity() const override;
  // UNAVAILABLE (with the search's reasons) when hipRTC was not found; INTERNAL with the
  // compiler's log when the source does not compile.
  cuda::CompiledKernels compile(const cuda::CompileRequest& request) const override;

  // Options every compile gets: C++17, optimized, and IEEE single precision (subnormals
  // kept, as NVRTC's --ftz=false: kernels/cuda/common/cast.cuh relies on them).
  static std::vector<std::string> base_options();

 private:
  const HiprtcLibrary& lib_;
};

// The process's kernel cache over the process's hipRTC, beside NVRTC's in
// KernelCache::default_directory() (the compiler's identity is part of every key).
cuda::KernelCache& hiprtc_kernel_cache();

}  // namespace maxc::hip

// KernelCompiler on NVRTC. A request for architecture sm_XY compiles to a cubin for it when
// this NVRTC knows sm_XY; for a newer GPU than the NVRTC it compiles PTX for the newest
// architecture it knows below, which the driver JIT-compiles forward.
#pragma once

#include <string>
#include <vector>

#include "driver/cuda/kernel_cache.h"
#include "driver/cuda/kernel_compiler.h"
#include "driver/cuda/nvrtc_api.h"

namespace maxc::cuda {

struct NvrtcTarget {
  std::string option;  // "--gpu-architecture=sm_90" or "--gpu-architecture=compute_89"
  CompiledKernels::Format format;
};

// The target for `architecture` ("sm_90", "sm_90a") among NVRTC's `supported` SM versions.
// UNIMPLEMENTED when the architecture is older than all of them, INVALID_ARGUMENT when it is
// no sm_XY name.
NvrtcTarget choose_nvrtc_target(const std::string& architecture, const std::vector<int>& supported,
                                const std::string& nvrtc_version);

class NvrtcCompiler : public KernelCompiler {
 public:
  // `library` must outlive the compiler (the process's nvrtc() does).
  explicit NvrtcCompiler(const NvrtcLibrary& library) : lib_(library) {}
  // "nvrtc 12.9" and the fixed options: a change of either makes new cache keys.
  std::string identity() const override;
  // UNAVAILABLE (with the search's reasons) when NVRTC was not found.
  CompiledKernels compile(const CompileRequest& request) const override;

  // Options every compile gets: C++17 and IEEE arithmetic (no fast math, no flush to zero:
  // the half conversions of kernels/cuda/common/cast.cuh rely on subnormals).
  static std::vector<std::string> base_options();

 private:
  const NvrtcLibrary& lib_;
};

// The process's kernel cache over the process's NVRTC, at KernelCache::default_directory().
KernelCache& nvrtc_kernel_cache();

}  // namespace maxc::cuda

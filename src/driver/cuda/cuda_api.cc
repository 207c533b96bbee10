#include "driver/cuda/cuda_api.h"

namespace maxc::cuda {

std::string bind_cuda_api(const SymbolLookup& lookup, CudaApi& api) {
#define MAXC_CUDA_BIND(name, params)                              \
  api.name = reinterpret_cast<decltype(api.name)>(lookup(#name)); \
  if (!api.name) return #name;
  MAXC_CUDA_DRIVER_FUNCTIONS(MAXC_CUDA_BIND)
#undef MAXC_CUDA_BIND
  return "";
}

const char* backend_name(GpuBackend backend) { return backend == GpuBackend::kHip ? "HIP" : "CUDA"; }
const char* backend_prefix(GpuBackend backend) { return backend == GpuBackend::kHip ? "hip" : "cuda"; }

}  // namespace maxc::cuda

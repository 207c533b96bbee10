#include "driver/hip/hip_runtime.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace maxc::hip {
namespace {

using cuda::CUresult;

// HIP's functions the adapters call: the process has one HIP runtime, and a table of plain
// function pointers has no room for a closure, so the adapters find them here.
struct AdaptedCalls {
#define MAXC_HIP_DECLARE(name, ret, params) ret(*name) params = nullptr;
  MAXC_HIP_ADAPTED(MAXC_HIP_DECLARE)
#undef MAXC_HIP_DECLARE
};

AdaptedCalls& adapted() {
  static AdaptedCalls calls;
  return calls;
}

CUresult error_name(CUresult error, const char** name) {
  *name = adapted().hipGetErrorName(error);
  return *name ? cuda::result::kSuccess : cuda::result::kInvalidValue;
}

CUresult error_string(CUresult error, const char** text) {
  *text = adapted().hipGetErrorString(error);
  return *text ? cuda::result::kSuccess : cuda::result::kInvalidValue;
}

CUresult device_attribute(int* value, cuda::CUdevice_attribute attribute, cuda::CUdevice device) {
  const int hip = hip_attribute(attribute);
  if (hip < 0) return cuda::result::kInvalidValue;
  return adapted().hipDeviceGetAttribute(value, hip, device);
}

CUresult peer_copy(cuda::CUdeviceptr dst, cuda::CUcontext, cuda::CUdeviceptr src, cuda::CUcontext, size_t bytes,
                   cuda::CUstream stream) {
  return adapted().hipMemcpyAsync(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes,
                                  kMemcpyDefault, stream);
}

CUresult arch_name(char* name, int length, cuda::CUdevice device) {
  if (length <= 0) return cuda::result::kInvalidValue;
  // Aligned as the struct's size_t members are; four times its size, for newer fields.
  alignas(16) char properties[4 * kDevicePropertiesSize] = {};
  const CUresult r = adapted().hipGetDeviceProperties(properties, device);
  if (r != cuda::result::kSuccess) return r;
  const char* gcn = properties + kGcnArchNameOffset;
  // A layout we do not know shows as something other than a gfx target.
  if (std::strncmp(gcn, "gfx", 3) != 0 || !std::memchr(gcn, '\0', kGcnArchNameSize))
    return cuda::result::kNotSupported;
  std::strncpy(name, gcn, static_cast<size_t>(length) - 1);
  name[length - 1] = '\0';
  return cuda::result::kSuccess;
}

}  // namespace

int hip_attribute(cuda::CUdevice_attribute a) {
  namespace cu = cuda::attribute;
  switch (a) {
    case cu::kMaxThreadsPerBlock: return attribute::kMaxThreadsPerBlock;
    case cu::kMaxSharedMemoryPerBlock: return attribute::kMaxSharedMemoryPerBlock;
    case cu::kWarpSize: return attribute::kWarpSize;
    case cu::kMultiprocessorCount: return attribute::kMultiprocessorCount;
    case cu::kIntegrated: return attribute::kIntegrated;
    case cu::kCanMapHostMemory: return attribute::kCanMapHostMemory;
    case cu::kUnifiedAddressing: return attribute::kUnifiedAddressing;
    case cu::kComputeCapabilityMajor: return attribute::kComputeCapabilityMajor;
    case cu::kComputeCapabilityMinor: return attribute::kComputeCapabilityMinor;
    default: return -1;
  }
}

std::string bind_hip_as_cuda_api(const cuda::SymbolLookup& lookup, cuda::CudaApi& api) {
  AdaptedCalls calls;
#define MAXC_HIP_BIND_ADAPTED(name, ret, params)                        \
  calls.name = reinterpret_cast<decltype(calls.name)>(lookup(#name)); \
  if (!calls.name) return #name;
  MAXC_HIP_ADAPTED(MAXC_HIP_BIND_ADAPTED)
#undef MAXC_HIP_BIND_ADAPTED
#define MAXC_HIP_BIND_SAME(cu, hip)                             \
  api.cu = reinterpret_cast<decltype(api.cu)>(lookup(#hip));    \
  if (!api.cu) return #hip;
  MAXC_HIP_SAME_AS_CUDA(MAXC_HIP_BIND_SAME)
#undef MAXC_HIP_BIND_SAME
  static std::mutex mu;
  {
    std::lock_guard lock(mu);
    adapted() = calls;
  }
  api.cuGetErrorName = error_name;
  api.cuGetErrorString = error_string;
  api.cuDeviceGetAttribute = device_attribute;
  api.cuMemcpyPeerAsync = peer_copy;
  api.device_arch_name = arch_name;
  api.backend = cuda::GpuBackend::kHip;
  return "";
}

std::vector<std::string> hip_runtime_candidates() {
  if (const char* env = std::getenv("MAX_C_HIP_LIBRARY")) {
    if (!*env) return {};
    return {env};
  }
  return {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
}

}  // namespace maxc::hip

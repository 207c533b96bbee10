// HIP's runtime (libamdhip64) bound into the CUDA driver's table (driver/cuda/cuda_api.h), so
// that one device layer serves NVIDIA and AMD GPUs. HIP mirrors the driver API call for call:
// most entries are HIP's own functions under the driver's name, where the two agree on the
// C ABI (a hipDeviceptr_t is a void*, a CUdeviceptr the same 64 bits) and on the flags the
// device layer passes (non-blocking streams, untimed events, portable pinned memory, thread-
// local capture have the same values in both). Five differ, and small
// adapters translate them:
//   cuGetErrorName, cuGetErrorString  HIP returns the text instead of a status
//   cuDeviceGetAttribute              HIP numbers its attributes differently
//   cuMemcpyPeerAsync                 HIP names devices, not contexts: hipMemcpyAsync with
//                                     hipMemcpyDefault, which unified addressing resolves
//   device_arch_name                  gcnArchName, from hipGetDeviceProperties
//
// The constants and layouts below are HIP's documented ABI (hip_runtime_api.h of ROCm 5.2,
// which ROCm 6 keeps under the same names): no HIP header is needed to build.
//
// Thread-safety: binding writes the process's adapter targets; bind once (the process's
// runtime, or one fake in a test binary) before any adapter runs. Every other call is as
// thread-safe as HIP's.
#pragma once

#include <string>
#include <vector>

#include "driver/cuda/cuda_api.h"

namespace maxc::hip {

// Driver entries that are HIP's function of the same C signature: X(driver name, HIP name).
#define MAXC_HIP_SAME_AS_CUDA(X)                                  \
  X(cuInit, hipInit)                                              \
  X(cuDriverGetVersion, hipDriverGetVersion)                      \
  X(cuDeviceGetCount, hipGetDeviceCount)                          \
  X(cuDeviceGet, hipDeviceGet)                                    \
  X(cuDeviceGetName, hipDeviceGetName)                            \
  X(cuDeviceTotalMem_v2, hipDeviceTotalMem)                       \
  X(cuDevicePrimaryCtxRetain, hipDevicePrimaryCtxRetain)          \
  X(cuDevicePrimaryCtxRelease_v2, hipDevicePrimaryCtxRelease)     \
  X(cuCtxPushCurrent_v2, hipCtxPushCurrent)                       \
  X(cuCtxPopCurrent_v2, hipCtxPopCurrent)                         \
  X(cuCtxSynchronize, hipCtxSynchronize)                          \
  X(cuMemGetInfo_v2, hipMemGetInfo)                               \
  X(cuMemAlloc_v2, hipMalloc)                                     \
  X(cuMemFree_v2, hipFree)                                        \
  X(cuMemHostAlloc, hipHostMalloc)                                \
  X(cuMemFreeHost, hipHostFree)                                   \
  X(cuMemcpyHtoD_v2, hipMemcpyHtoD)                               \
  X(cuMemcpyDtoH_v2, hipMemcpyDtoH)                               \
  X(cuMemcpyDtoD_v2, hipMemcpyDtoD)                               \
  X(cuMemcpyHtoDAsync_v2, hipMemcpyHtoDAsync)                     \
  X(cuMemcpyDtoHAsync_v2, hipMemcpyDtoHAsync)                     \
  X(cuMemcpyDtoDAsync_v2, hipMemcpyDtoDAsync)                     \
  X(cuMemsetD8_v2, hipMemsetD8)                                   \
  X(cuMemsetD8Async, hipMemsetD8Async)                            \
  X(cuStreamCreate, hipStreamCreateWithFlags)                     \
  X(cuStreamDestroy_v2, hipStreamDestroy)                         \
  X(cuStreamSynchronize, hipStreamSynchronize)                    \
  X(cuStreamWaitEvent, hipStreamWaitEvent)                        \
  X(cuEventCreate, hipEventCreateWithFlags)                       \
  X(cuEventDestroy_v2, hipEventDestroy)                           \
  X(cuEventRecord, hipEventRecord)                                \
  X(cuEventSynchronize, hipEventSynchronize)                      \
  X(cuEventQuery, hipEventQuery)                                  \
  X(cuEventElapsedTime, hipEventElapsedTime)                      \
  X(cuModuleLoadData, hipModuleLoadData)                          \
  X(cuModuleUnload, hipModuleUnload)                              \
  X(cuModuleGetFunction, hipModuleGetFunction)                    \
  X(cuLaunchKernel, hipModuleLaunchKernel)                        \
  X(cuStreamBeginCapture_v2, hipStreamBeginCapture)               \
  X(cuStreamEndCapture, hipStreamEndCapture)                      \
  X(cuGraphInstantiateWithFlags, hipGraphInstantiateWithFlags)    \
  X(cuGraphLaunch, hipGraphLaunch)                                \
  X(cuGraphExecDestroy, hipGraphExecDestroy)                      \
  X(cuGraphDestroy, hipGraphDestroy)

// HIP's calls the adapters stand on. X(name, return type, parameters).
#define MAXC_HIP_ADAPTED(X)                                                                         \
  X(hipGetErrorName, const char*, (cuda::CUresult error))                                           \
  X(hipGetErrorString, const char*, (cuda::CUresult error))                                         \
  X(hipDeviceGetAttribute, cuda::CUresult, (int* value, int attribute, int device))                 \
  X(hipMemcpyAsync, cuda::CUresult, (void* dst, const void* src, size_t bytes, int kind,            \
                                     cuda::CUstream stream))                                        \
  X(hipGetDeviceProperties, cuda::CUresult, (void* properties, int device))

// hipDeviceAttribute_t values of the attributes the device layer reads.
namespace attribute {
constexpr int kCanMapHostMemory = 3;
constexpr int kIntegrated = 16;
constexpr int kComputeCapabilityMajor = 23;
constexpr int kMaxThreadsPerBlock = 56;
constexpr int kComputeCapabilityMinor = 61;
constexpr int kMultiprocessorCount = 63;
constexpr int kMaxSharedMemoryPerBlock = 74;
constexpr int kUnifiedAddressing = 85;
constexpr int kWarpSize = 87;
}  // namespace attribute

// The driver's attribute as HIP numbers it; -1 for one HIP has no number for here.
int hip_attribute(cuda::CUdevice_attribute attribute);

constexpr int kMemcpyDefault = 4;  // hipMemcpyDefault: the direction from the pointers
// hipDeviceProp_t as hipGetDeviceProperties fills it (ROCm 6 keeps this layout under that
// symbol and adds hipGetDevicePropertiesR0600 for its new one): 792 bytes, the gfx target at
// byte 396. We hand it a larger buffer, so a runtime that writes more cannot overrun ours.
constexpr size_t kDevicePropertiesSize = 792;
constexpr size_t kGcnArchNameOffset = 396;
constexpr size_t kGcnArchNameSize = 256;

// Fills `api` through `lookup` (HIP's symbols, by HIP name) and sets api.backend to kHip.
// Returns the HIP name of the first missing symbol ("" when all were found); the table is
// then incomplete and must not be used.
std::string bind_hip_as_cuda_api(const cuda::SymbolLookup& lookup, cuda::CudaApi& api);

// The libraries searched for the runtime, in order: $MAX_C_HIP_LIBRARY alone when set
// (empty: HIP is not searched), else libamdhip64.so.6, libamdhip64.so.5, libamdhip64.so.
std::vector<std::string> hip_runtime_candidates();

}  // namespace maxc::hip

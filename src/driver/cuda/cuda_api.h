// The CUDA driver API as a table of function pointers, filled at run time from libcuda
// (cuda_driver.h), with the few types and constants it needs declared here by hand from the
// driver's documented ABI: no CUDA header is needed to build. Only the driver API is used
// (never the runtime, libcudart), so nothing else has to be installed next to the driver.
//
// Symbol names are the versioned ones the driver exports (cuMemAlloc_v2, not cuMemAlloc):
// cuda.h maps the plain names onto them with macros, which a dlsym caller must do itself.
//
// HIP's runtime fills the same table (driver/hip/hip_runtime.h): its calls mirror these one
// for one, so everything above the table (devices, allocators, streams, graphs, kernels)
// serves AMD GPUs unchanged, and `backend` says which runtime is underneath.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace maxc::cuda {

// ---- types (cuda.h) ------------------------------------------------------------------------
using CUresult = int32_t;  // an enum in C: int-sized
using CUdevice = int32_t;
using CUdeviceptr = uint64_t;  // unsigned long long on every 64-bit platform
using CUdevice_attribute = int32_t;
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;
struct CUgraph_st;
struct CUgraphExec_st;
using CUcontext = CUctx_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUgraph = CUgraph_st*;
using CUgraphExec = CUgraphExec_st*;
using CUstreamCaptureMode = int32_t;  // an enum in C

// ---- constants (cuda.h) --------------------------------------------------------------------
namespace result {
constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;
constexpr CUresult kOutOfMemory = 2;
constexpr CUresult kNotInitialized = 3;
constexpr CUresult kDeinitialized = 4;
constexpr CUresult kStubLibrary = 34;
constexpr CUresult kDeviceUnavailable = 46;
constexpr CUresult kNoDevice = 100;
constexpr CUresult kInvalidDevice = 101;
constexpr CUresult kInvalidImage = 200;
constexpr CUresult kInvalidContext = 201;
constexpr CUresult kNoBinaryForGpu = 209;
constexpr CUresult kInvalidPtx = 218;
constexpr CUresult kUnsupportedPtxVersion = 222;
constexpr CUresult kInvalidHandle = 400;
constexpr CUresult kNotFound = 500;
constexpr CUresult kNotReady = 600;
constexpr CUresult kIllegalAddress = 700;
constexpr CUresult kLaunchOutOfResources = 701;
constexpr CUresult kLaunchTimeout = 702;
constexpr CUresult kLaunchFailed = 719;
constexpr CUresult kNotPermitted = 800;
constexpr CUresult kNotSupported = 801;
constexpr CUresult kSystemDriverMismatch = 803;
constexpr CUresult kCompatNotSupportedOnDevice = 804;
constexpr CUresult kStreamCaptureUnsupported = 900;
constexpr CUresult kStreamCaptureInvalidated = 901;
constexpr CUresult kUnknown = 999;
}  // namespace result

namespace attribute {
constexpr CUdevice_attribute kMaxThreadsPerBlock = 1;
constexpr CUdevice_attribute kMaxSharedMemoryPerBlock = 8;
constexpr CUdevice_attribute kWarpSize = 10;
constexpr CUdevice_attribute kMultiprocessorCount = 16;
constexpr CUdevice_attribute kIntegrated = 18;
constexpr CUdevice_attribute kCanMapHostMemory = 19;
constexpr CUdevice_attribute kUnifiedAddressing = 41;
constexpr CUdevice_attribute kComputeCapabilityMajor = 75;
constexpr CUdevice_attribute kComputeCapabilityMinor = 76;
}  // namespace attribute

constexpr unsigned kStreamNonBlocking = 0x1;    // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventDisableTiming = 0x2;   // CU_EVENT_DISABLE_TIMING
constexpr unsigned kMemHostAllocPortable = 0x1;  // CU_MEMHOSTALLOC_PORTABLE
// CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: during a capture, this thread's calls that would be
// unsafe (synchronous copies, syncs, allocations) fail instead of running.
constexpr CUstreamCaptureMode kStreamCaptureModeThreadLocal = 1;

// ---- the function table --------------------------------------------------------------------
// X(name, parameters): every entry returns CUresult. One list drives the member
// declarations and the binding, so they cannot drift apart.
#define MAXC_CUDA_DRIVER_FUNCTIONS(X)                                                              \
  X(cuGetErrorName, (CUresult error, const char** name))                                           \
  X(cuGetErrorString, (CUresult error, const char** text))                                         \
  X(cuInit, (unsigned flags))                                                                      \
  X(cuDriverGetVersion, (int* version))                                                            \
  X(cuDeviceGetCount, (int* count))                                                                \
  X(cuDeviceGet, (CUdevice* device, int ordinal))                                                  \
  X(cuDeviceGetName, (char* name, int length, CUdevice device))                                    \
  X(cuDeviceGetAttribute, (int* value, CUdevice_attribute attribute, CUdevice device))             \
  X(cuDeviceTotalMem_v2, (size_t* bytes, CUdevice device))                                         \
  X(cuDevicePrimaryCtxRetain, (CUcontext* context, CUdevice device))                               \
  X(cuDevicePrimaryCtxRelease_v2, (CUdevice device))                                               \
  X(cuCtxPushCurrent_v2, (CUcontext context))                                                      \
  X(cuCtxPopCurrent_v2, (CUcontext* context))                                                      \
  X(cuCtxSynchronize, ())                                                                          \
  X(cuMemGetInfo_v2, (size_t* free_bytes, size_t* total_bytes))                                    \
  X(cuMemAlloc_v2, (CUdeviceptr* ptr, size_t bytes))                                               \
  X(cuMemFree_v2, (CUdeviceptr ptr))                                                               \
  X(cuMemHostAlloc, (void** ptr, size_t bytes, unsigned flags))                                    \
  X(cuMemFreeHost, (void* ptr))                                                                    \
  X(cuMemcpyHtoD_v2, (CUdeviceptr dst, const void* src, size_t bytes))                             \
  X(cuMemcpyDtoH_v2, (void* dst, CUdeviceptr src, size_t bytes))                                   \
  X(cuMemcpyDtoD_v2, (CUdeviceptr dst, CUdeviceptr src, size_t bytes))                             \
  X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void* src, size_t bytes, CUstream stream))       \
  X(cuMemcpyDtoHAsync_v2, (void* dst, CUdeviceptr src, size_t bytes, CUstream stream))             \
  X(cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))       \
  X(cuMemcpyPeerAsync, (CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src,                   \
                        CUcontext src_context, size_t bytes, CUstream stream))                     \
  X(cuMemsetD8_v2, (CUdeviceptr dst, unsigned char value, size_t count))                           \
  X(cuMemsetD8Async, (CUdeviceptr dst, unsigned char value, size_t count, CUstream stream))         \
  X(cuStreamCreate, (CUstream* stream, unsigned flags))                                            \
  X(cuStreamDestroy_v2, (CUstream stream))                                                         \
  X(cuStreamSynchronize, (CUstream stream))                                                        \
  X(cuStreamWaitEvent, (CUstream stream, CUevent event, unsigned flags))                           \
  X(cuEventCreate, (CUevent* event, unsigned flags))                                               \
  X(cuEventDestroy_v2, (CUevent event))                                                            \
  X(cuEventRecord, (CUevent event, CUstream stream))                                               \
  X(cuEventSynchronize, (CUevent event))                                                           \
  X(cuEventQuery, (CUevent event))                                                                 \
  X(cuEventElapsedTime, (float* milliseconds, CUevent start, CUevent end))                         \
  X(cuModuleLoadData, (CUmodule* module, const void* image))                                       \
  X(cuModuleUnload, (CUmodule module))                                                             \
  X(cuModuleGetFunction, (CUfunction* function, CUmodule module, const char* name))                \
  X(cuLaunchKernel, (CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,       \
                     unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,  \
                     CUstream stream, void** params, void** extra))                              \
  X(cuStreamBeginCapture_v2, (CUstream stream, CUstreamCaptureMode mode))                          \
  X(cuStreamEndCapture, (CUstream stream, CUgraph* graph))                                         \
  X(cuGraphInstantiateWithFlags, (CUgraphExec* exec, CUgraph graph, unsigned long long flags))     \
  X(cuGraphLaunch, (CUgraphExec exec, CUstream stream))                                            \
  X(cuGraphExecDestroy, (CUgraphExec exec))                                                        \
  X(cuGraphDestroy, (CUgraph graph))

enum class GpuBackend : uint8_t { kCuda, kHip };

struct CudaApi {
#define MAXC_CUDA_DECLARE(name, params) CUresult(*name) params = nullptr;
  MAXC_CUDA_DRIVER_FUNCTIONS(MAXC_CUDA_DECLARE)
#undef MAXC_CUDA_DECLARE
  GpuBackend backend = GpuBackend::kCuda;
  // The device's compiler target where it is not sm_XY of the compute capability: HIP's
  // gcnArchName ("gfx90a:sramecc+:xnack-"), NUL-terminated within `length`. Null for CUDA.
  CUresult (*device_arch_name)(char* name, int length, CUdevice device) = nullptr;
};

// "CUDA" or "HIP", for messages; "cuda" or "hip", the prefix of a device's description.
const char* backend_name(GpuBackend backend);
const char* backend_prefix(GpuBackend backend);

// Where symbols come from: dlsym on the driver, or a table of fakes in tests.
using SymbolLookup = std::function<void*(const char* name)>;

// Fills every entry of `api` through `lookup`. Returns the name of the first symbol it could
// not find ("" when all were found); the table is then incomplete and must not be used.
std::string bind_cuda_api(const SymbolLookup& lookup, CudaApi& api);

}  // namespace maxc::cuda

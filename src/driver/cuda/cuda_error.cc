#include "driver/cuda/cuda_error.h"

#include "base/log.h"

namespace maxc::cuda {
namespace {

// Our own names for the results we meet most, for when the driver cannot name them
// (cuGetErrorName failing, or no driver at all in tests).
const char* known_result_name(CUresult r) {
  switch (r) {
    case result::kSuccess: return "CUDA_SUCCESS";
    case result::kInvalidValue: return "CUDA_ERROR_INVALID_VALUE";
    case result::kOutOfMemory: return "CUDA_ERROR_OUT_OF_MEMORY";
    case result::kNotInitialized: return "CUDA_ERROR_NOT_INITIALIZED";
    case result::kDeinitialized: return "CUDA_ERROR_DEINITIALIZED";
    case result::kStubLibrary: return "CUDA_ERROR_STUB_LIBRARY";
    case result::kDeviceUnavailable: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case result::kNoDevice: return "CUDA_ERROR_NO_DEVICE";
    case result::kInvalidDevice: return "CUDA_ERROR_INVALID_DEVICE";
    case result::kInvalidImage: return "CUDA_ERROR_INVALID_IMAGE";
    case result::kInvalidContext: return "CUDA_ERROR_INVALID_CONTEXT";
    case result::kNoBinaryForGpu: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case result::kInvalidPtx: return "CUDA_ERROR_INVALID_PTX";
    case result::kUnsupportedPtxVersion: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case result::kInvalidHandle: return "CUDA_ERROR_INVALID_HANDLE";
    case result::kNotFound: return "CUDA_ERROR_NOT_FOUND";
    case result::kNotReady: return "CUDA_ERROR_NOT_READY";
    case result::kIllegalAddress: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case result::kLaunchOutOfResources: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case result::kLaunchTimeout: return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case result::kLaunchFailed: return "CUDA_ERROR_LAUNCH_FAILED";
    case result::kNotPermitted: return "CUDA_ERROR_NOT_PERMITTED";
    case result::kNotSupported: return "CUDA_ERROR_NOT_SUPPORTED";
    case result::kSystemDriverMismatch: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case result::kCompatNotSupportedOnDevice: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case result::kStreamCaptureUnsupported: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case result::kStreamCaptureInvalidated: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    case result::kUnknown: return "CUDA_ERROR_UNKNOWN";
  }
  return nullptr;
}

}  // namespace

Code cuda_status_code(CUresult r) {
  switch (r) {
    case result::kSuccess: return Code::kOk;
    case result::kOutOfMemory: return Code::kResourceExhausted;
    case result::kNoDevice:
    case result::kInvalidDevice: return Code::kNotFound;
    case result::kStubLibrary:
    case result::kDeviceUnavailable:
    case result::kSystemDriverMismatch:
    case result::kCompatNotSupportedOnDevice:
    case result::kNotInitialized:
    case result::kDeinitialized: return Code::kUnavailable;
    case result::kNotSupported:
    case result::kNoBinaryForGpu:
    case result::kUnsupportedPtxVersion: return Code::kUnimplemented;
    case result::kNotPermitted: return Code::kPermissionDenied;
    // What a graph capture meets when the work it records cannot be recorded: the model
    // still executes, it cannot be captured.
    case result::kStreamCaptureUnsupported:
    case result::kStreamCaptureInvalidated: return Code::kFailedPrecondition;
    case result::kLaunchTimeout: return Code::kDeadlineExceeded;
    default: return Code::kInternal;
  }
}

std::string cuda_error_text(const CudaApi* api, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api && api->cuGetErrorName && api->cuGetErrorName(r, &name) != result::kSuccess) name = nullptr;
  if (api && api->cuGetErrorString && api->cuGetErrorString(r, &text) != result::kSuccess) text = nullptr;
  if (!name) name = known_result_name(r);
  std::string out = name ? std::string(name) : str_cat(backend_name(api ? api->backend : GpuBackend::kCuda), " error ", r);
  // Some HIP versions' text is the name again.
  if (text && *text && out != text) out += str_cat(" (", text, ")");
  return out;
}

void check_cuda(const CudaApi& api, CUresult r, const std::string& what) {
  if (r != result::kSuccess) fail(cuda_status_code(r), what, " failed: ", cuda_error_text(&api, r));
}

void warn_cuda(const CudaApi& api, CUresult r, const char* what) {
  // At process exit the driver may already be shut down; that is no news worth a warning.
  if (r == result::kSuccess || r == result::kDeinitialized) return;
  MAXC_LOG(kWarning, what, " failed: ", cuda_error_text(&api, r));
}

}  // namespace maxc::cuda

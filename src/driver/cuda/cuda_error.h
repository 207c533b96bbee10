// CUDA driver results as the project's errors: a status code chosen by what the caller can
// do about it, and a message that names the call that failed and the driver's own name for
// the result ("cuMemAlloc_v2 of 1048576 bytes on cuda:0 failed: CUDA_ERROR_OUT_OF_MEMORY
// (out of memory)").
#pragma once

#include <string>

#include "base/error.h"
#include "driver/cuda/cuda_api.h"

namespace maxc::cuda {

// RESOURCE_EXHAUSTED for memory, NOT_FOUND for a missing device, UNAVAILABLE for a driver
// that cannot serve (stub library, too old, busy device), UNIMPLEMENTED for an unsupported
// feature, INTERNAL for everything that is a bug or a dead context.
Code cuda_status_code(CUresult result);

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)": the driver's name and text when it has them
// (api may be null), else ours, else "CUDA error <n>".
std::string cuda_error_text(const CudaApi* api, CUresult result);

// Throws maxc::Error when `result` is not success: "<what> failed: <text>".
void check_cuda(const CudaApi& api, CUresult result, const std::string& what);

// The same check, for calls whose failure has nowhere to go (destructors): logs a warning.
void warn_cuda(const CudaApi& api, CUresult result, const char* what);

}  // namespace maxc::cuda

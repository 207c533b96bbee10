// NVRTC, CUDA's runtime compiler, loaded with dlopen like the driver: its function table,
// the library search, and its results as the project's errors. NVRTC needs no GPU: CI
// compiles every kernel source with it (tests/gpu) from the nvidia-cuda-nvrtc-cu12 wheel.
//
// Search order: $MAX_C_NVRTC_LIBRARY alone when set (a path or soname: the user said which),
// else libnvrtc.so.12 (the major the kernels are tested with), libnvrtc.so.13, libnvrtc.so.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "driver/cuda/cuda_api.h"
#include "driver/cuda/dynamic_library.h"

namespace maxc::cuda {

using nvrtcResult = int32_t;
struct _nvrtcProgram;
using nvrtcProgram = _nvrtcProgram*;

namespace nvrtc_result {
constexpr nvrtcResult kSuccess = 0;
constexpr nvrtcResult kOutOfMemory = 1;
constexpr nvrtcResult kInvalidOption = 5;
constexpr nvrtcResult kCompilation = 6;
}  // namespace nvrtc_result

// X(return type, name, parameters)
#define MAXC_NVRTC_FUNCTIONS(X)                                                                        \
  X(const char*, nvrtcGetErrorString, (nvrtcResult result))                                           \
  X(nvrtcResult, nvrtcVersion, (int* major, int* minor))                                              \
  X(nvrtcResult, nvrtcGetNumSupportedArchs, (int* count))                                             \
  X(nvrtcResult, nvrtcGetSupportedArchs, (int* archs))                                                \
  X(nvrtcResult, nvrtcCreateProgram, (nvrtcProgram* program, const char* source, const char* name,    \
                                      int num_headers, const char* const* headers,                    \
                                      const char* const* include_names))                              \
  X(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram* program))                                        \
  X(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram program, int num_options, const char* const* opts)) \
  X(nvrtcResult, nvrtcAddNameExpression, (nvrtcProgram program, const char* name_expression))         \
  X(nvrtcResult, nvrtcGetLoweredName, (nvrtcProgram program, const char* name_expression,             \
                                       const char** lowered_name))                                    \
  X(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram program, size_t* bytes))                       \
  X(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram program, char* log))                               \
  X(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram program, size_t* bytes))                              \
  X(nvrtcResult, nvrtcGetPTX, (nvrtcProgram program, char* ptx))                                      \
  X(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram program, size_t* bytes))                            \
  X(nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram program, char* cubin))

struct NvrtcApi {
#define MAXC_NVRTC_DECLARE(ret, name, params) ret(*name) params = nullptr;
  MAXC_NVRTC_FUNCTIONS(MAXC_NVRTC_DECLARE)
#undef MAXC_NVRTC_DECLARE
};

// Fills every entry through `lookup`; the name of the first missing symbol, or "".
std::string bind_nvrtc_api(const SymbolLookup& lookup, NvrtcApi& api);

struct NvrtcLibrary {
  NvrtcApi api;
  bool available = false;
  std::string unavailable_reason;  // every place searched and why each failed
  std::string path;                // the name it was opened by
  int major = 0, minor = 0;
  std::vector<int> architectures;  // the SM versions it compiles for: 80, 86, 90, ...
  std::unique_ptr<DynamicLibrary> library;
  std::unique_ptr<DynamicLibrary> builtins;  // libnvrtc-builtins, when found next to it

  std::string version() const;  // "12.9"
};

// The names searched, in order (see the top of this file).
std::vector<std::string> nvrtc_library_candidates();
// The first candidate that opens and binds. Never throws.
std::unique_ptr<NvrtcLibrary> load_nvrtc(const std::vector<std::string>& candidates);
// The process's NVRTC, searched on the first call and kept to the end of the process.
const NvrtcLibrary& nvrtc();

// Throws maxc::Error when `result` is not success: "<what> failed: NVRTC_ERROR_...".
void check_nvrtc(const NvrtcApi& api, nvrtcResult result, const std::string& what);

}  // namespace maxc::cuda

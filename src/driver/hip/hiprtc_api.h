// hipRTC, HIP's runtime compiler, loaded with dlopen as NVRTC is (driver/cuda/nvrtc_api.h):
// its function table, the library search, and its results as the project's errors. hipRTC
// needs no GPU: CI compiles every kernel source with Debian's (scripts/setup.sh), so a
// kernel that HIP cannot compile fails CI as one NVRTC cannot compile does.
//
// Search order: $MAX_C_HIPRTC_LIBRARY alone when set, else libhiprtc.so.6, libhiprtc.so.5
// (ROCm 5.3 and newer ship hipRTC on its own), libamdhip64.so.5 (ROCm 5.2, Debian 12: inside
// the HIP runtime), libhiprtc.so.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "driver/cuda/cuda_api.h"
#include "driver/cuda/dynamic_library.h"

namespace maxc::hip {

using hiprtcResult = int32_t;
struct _hiprtcProgram;
using hiprtcProgram = _hiprtcProgram*;

namespace hiprtc_result {
constexpr hiprtcResult kSuccess = 0;
constexpr hiprtcResult kOutOfMemory = 1;
constexpr hiprtcResult kCompilation = 6;
}  // namespace hiprtc_result

// X(return type, name, parameters): hipRTC mirrors NVRTC call for call, less the PTX and
// supported-architecture queries (the code object is for exactly the architecture asked).
#define MAXC_HIPRTC_FUNCTIONS(X)                                                                        \
  X(const char*, hiprtcGetErrorString, (hiprtcResult result))                                          \
  X(hiprtcResult, hiprtcVersion, (int* major, int* minor))                                             \
  X(hiprtcResult, hiprtcCreateProgram, (hiprtcProgram* program, const char* source, const char* name,  \
                                        int num_headers, const char* const* headers,                   \
                                        const char* const* include_names))                             \
  X(hiprtcResult, hiprtcDestroyProgram, (hiprtcProgram* program))                                      \
  X(hiprtcResult, hiprtcCompileProgram, (hiprtcProgram program, int num_options, const char* const* opts)) \
  X(hiprtcResult, hiprtcAddNameExpression, (hiprtcProgram program, const char* name_expression))       \
  X(hiprtcResult, hiprtcGetLoweredName, (hiprtcProgram program, const char* name_expression,           \
                                         const char** lowered_name))                                   \
  X(hiprtcResult, hiprtcGetProgramLogSize, (hiprtcProgram program, size_t* bytes))                     \
  X(hiprtcResult, hiprtcGetProgramLog, (hiprtcProgram program, char* log))                             \
  X(hiprtcResult, hiprtcGetCodeSize, (hiprtcProgram program, size_t* bytes))                           \
  X(hiprtcResult, hiprtcGetCode, (hiprtcProgram program, char* code))

struct HiprtcApi {
#define MAXC_HIPRTC_DECLARE(ret, name, params) ret(*name) params = nullptr;
  MAXC_HIPRTC_FUNCTIONS(MAXC_HIPRTC_DECLARE)
#undef MAXC_HIPRTC_DECLARE
};

// Fills every entry through `lookup`; the name of the first missing symbol, or "".
std::string bind_hiprtc_api(const cuda::SymbolLookup& lookup, HiprtcApi& api);

struct HiprtcLibrary {
  HiprtcApi api;
  bool available = false;
  std::string unavailable_reason;  // every place searched and why each failed
  std::string path;                // the name it was opened by
  int major = 0, minor = 0;
  std::unique_ptr<cuda::DynamicLibrary> library;

  std::string version() const;  // "5.2"
};

// The names searched, in order (see the top of this file).
std::vector<std::string> hiprtc_library_candidates();
// The first candidate that opens and binds. Never throws.
std::unique_ptr<HiprtcLibrary> load_hiprtc(const std::vector<std::string>& candidates);
// The process's hipRTC, searched on the first call and kept to the end of the process.
const HiprtcLibrary& hiprtc();

// Throws maxc::Error when `result` is not success: "<what> failed: HIPRTC_ERROR_...".
void check_hiprtc(const HiprtcApi& api, hiprtcResult result, const std::string& what);

}  // namespace maxc::hip

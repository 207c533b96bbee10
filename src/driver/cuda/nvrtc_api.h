// NVRTC, CUDA's runtime compiler, loaded with dlopen like the driver: its function table
// (the calls it shares with hipRTC in rtc_api.h) and the library search. NVRTC needs no GPU:
// CI compiles every kernel source with it (tests/nvrtc) from the nvidia-cuda-nvrtc-cu12 wheel.
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
#include "driver/cuda/rtc_api.h"

namespace maxc::cuda {

// NVRTC's own calls besides the shared ones (rtc_api.h): the architectures it knows, and
// PTX and cubin images. X(name, parameters); each returns nvrtcResult.
#define MAXC_NVRTC_FUNCTIONS(X)                                   \
  X(nvrtcGetNumSupportedArchs, (int* count))                      \
  X(nvrtcGetSupportedArchs, (int* archs))                         \
  X(nvrtcGetPTXSize, (rtcProgram program, size_t* bytes))         \
  X(nvrtcGetPTX, (rtcProgram program, char* ptx))                 \
  X(nvrtcGetCUBINSize, (rtcProgram program, size_t* bytes))       \
  X(nvrtcGetCUBIN, (rtcProgram program, char* cubin))

struct NvrtcApi {
  RtcApi rtc;  // nvrtcCreateProgram, nvrtcCompileProgram, ...
#define MAXC_NVRTC_DECLARE(name, params) rtcResult(*name) params = nullptr;
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

}  // namespace maxc::cuda

// hipRTC, HIP's runtime compiler, loaded with dlopen as NVRTC is (driver/cuda/nvrtc_api.h):
// its function table and the library search. hipRTC needs no GPU: CI compiles every kernel
// source with Debian's (scripts/setup.sh), so a kernel that HIP cannot compile fails CI as
// one NVRTC cannot compile does.
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
#include "driver/cuda/rtc_api.h"

namespace maxc::hip {

// hipRTC's own calls besides the shared ones (driver/cuda/rtc_api.h): the code object, for
// exactly the architecture asked. X(name, parameters); each returns hiprtcResult.
#define MAXC_HIPRTC_FUNCTIONS(X)                                        \
  X(hiprtcGetCodeSize, (cuda::rtcProgram program, size_t* bytes))       \
  X(hiprtcGetCode, (cuda::rtcProgram program, char* code))

struct HiprtcApi {
  cuda::RtcApi rtc;  // hiprtcCreateProgram, hiprtcCompileProgram, ...
#define MAXC_HIPRTC_DECLARE(name, params) cuda::rtcResult(*name) params = nullptr;
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

}  // namespace maxc::hip

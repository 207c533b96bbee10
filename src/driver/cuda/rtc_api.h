// What NVRTC (CUDA) and hipRTC (HIP) have in common: hipRTC mirrors NVRTC call for call,
// with the same result codes, so one table with neutral member names serves both, bound from
// either library's prefixed symbols ("nvrtc" + "CreateProgram"), and one program type drives
// a compile through it. What only one of them has (NVRTC's PTX and architecture queries,
// hipRTC's code object) stays in its own table (nvrtc_api.h, driver/hip/hiprtc_api.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "driver/cuda/cuda_api.h"
#include "driver/cuda/kernel_compiler.h"

namespace maxc::cuda {

using rtcResult = int32_t;  // nvrtcResult, hiprtcResult: int-sized enums
struct RtcProgramHandle;
using rtcProgram = RtcProgramHandle*;  // nvrtcProgram, hiprtcProgram: opaque pointers

namespace rtc_result {
constexpr rtcResult kSuccess = 0;
constexpr rtcResult kOutOfMemory = 1;
constexpr rtcResult kCompilation = 6;
}  // namespace rtc_result

// X(return type, name without the prefix, parameters)
#define MAXC_RTC_FUNCTIONS(X)                                                                            \
  X(const char*, GetErrorString, (rtcResult result))                                                    \
  X(rtcResult, Version, (int* major, int* minor))                                                       \
  X(rtcResult, CreateProgram, (rtcProgram * program, const char* source, const char* name, int num_headers, \
                               const char* const* headers, const char* const* include_names))          \
  X(rtcResult, DestroyProgram, (rtcProgram * program))                                                  \
  X(rtcResult, CompileProgram, (rtcProgram program, int num_options, const char* const* options))       \
  X(rtcResult, AddNameExpression, (rtcProgram program, const char* name_expression))                    \
  X(rtcResult, GetLoweredName, (rtcProgram program, const char* name_expression, const char** lowered))  \
  X(rtcResult, GetProgramLogSize, (rtcProgram program, size_t* bytes))                                  \
  X(rtcResult, GetProgramLog, (rtcProgram program, char* log))

struct RtcApi {
  std::string prefix;  // "nvrtc", "hiprtc": what the symbols and the messages are named by
#define MAXC_RTC_DECLARE(ret, name, params) ret(*name) params = nullptr;
  MAXC_RTC_FUNCTIONS(MAXC_RTC_DECLARE)
#undef MAXC_RTC_DECLARE
};

// Fills every entry with `prefix` + its name through `lookup`; the first missing symbol
// ("nvrtcGetErrorString"), or "".
std::string bind_rtc_api(const SymbolLookup& lookup, const std::string& prefix, RtcApi& api);

// Throws maxc::Error when `result` is not success: "<what> failed: NVRTC_ERROR_...".
void check_rtc(const RtcApi& api, rtcResult result, const std::string& what);

// One program, destroyed however the compile ends.
class RtcProgram {
 public:
  RtcProgram(const RtcApi& api, const KernelSource& source);
  ~RtcProgram();
  RtcProgram(const RtcProgram&) = delete;
  RtcProgram& operator=(const RtcProgram&) = delete;

  // Compiles `request` with `options`, then fills out->log and out->lowered_names (the
  // image is the caller's to read: its calls differ). INTERNAL with the compiler's log,
  // naming `compiler` ("NVRTC 12.9"), when the source does not compile.
  void compile(const CompileRequest& request, const std::vector<std::string>& options, const std::string& compiler,
               CompiledKernels* out);

  rtcProgram get() const { return program_; }

 private:
  std::string log() const;

  const RtcApi& api_;
  rtcProgram program_ = nullptr;
};

}  // namespace maxc::cuda

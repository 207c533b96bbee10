#include "capi/capi.h"

using namespace maxc;
using namespace maxc::capi;

extern "C" {

uint32_t max_abi_version(void) { return MAX_ABI_VERSION; }

const char* max_version_string(void) { return MAX_C_VERSION_STRING; }

max_status_t* max_check_abi(uint32_t header_version) {
  return MAXC_GUARD({
    uint32_t major = header_version >> 16, minor = header_version & 0xffff;
    if (major != MAX_ABI_VERSION_MAJOR)
      fail(Code::kFailedPrecondition, "libmax_c ABI ", MAX_ABI_VERSION_MAJOR, ".",
           MAX_ABI_VERSION_MINOR, " cannot serve a program built with the header ", major, ".",
           minor, ": the major versions differ");
    if (minor > MAX_ABI_VERSION_MINOR)
      fail(Code::kFailedPrecondition, "libmax_c ABI ", MAX_ABI_VERSION_MAJOR, ".",
           MAX_ABI_VERSION_MINOR, " is older than the header ", major, ".", minor,
           " this program was built with");
  });
}

max_status_t* max_log_set_level(max_log_level_t level) {
  return MAXC_GUARD({
    if (level < MAX_LOG_OFF || level > MAX_LOG_TRACE)
      fail(Code::kInvalidArgument, "log level ", level, " is outside [", MAX_LOG_OFF, ", ",
           MAX_LOG_TRACE, "]");
    set_log_level(static_cast<LogLevel>(level));
  });
}

max_log_level_t max_log_level(void) { return static_cast<max_log_level_t>(log_level()); }

}  // extern "C"

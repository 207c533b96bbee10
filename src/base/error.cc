#include "base/error.h"

namespace maxc {

const char* code_name(Code code) {
  static const char* const kNames[] = {
      "OK",        "CANCELLED",         "UNKNOWN",   "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
      "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  auto i = static_cast<int32_t>(code);
  if (i < 0 || i >= static_cast<int32_t>(sizeof(kNames) / sizeof(kNames[0]))) return "UNKNOWN_CODE";
  return kNames[i];
}

}  // namespace maxc

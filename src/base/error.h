// Internal error type. Code below capi/ throws maxc::Error; capi/ turns it into a
// max_status_t. The codes are the ABI's status codes (include/max_c.h).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace maxc {

enum class Code : int32_t {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// Stable upper-case name of a code ("INVALID_ARGUMENT"); "UNKNOWN_CODE" past the table.
const char* code_name(Code code);

class Error : public std::runtime_error {
 public:
  Error(Code code, std::string message)
      : std::runtime_error(std::move(message)), code_(code) {}
  Code code() const { return code_; }

 private:
  Code code_;
};

// Builds a message from any streamable pieces: fail(Code::kNotFound, "weight '", n, "'").
template <typename... Parts>
[[noreturn]] void fail(Code code, const Parts&... parts);

}  // namespace maxc

#include "base/str_cat.h"

namespace maxc {
template <typename... Parts>
[[noreturn]] void fail(Code code, const Parts&... parts) {
  throw Error(code, str_cat(parts...));
}
}  // namespace maxc

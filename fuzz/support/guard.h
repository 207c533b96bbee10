// What a fuzz target may see go wrong: an error status or an exception of the library's
// (a clear error for a bad input) is fine; a crash, a hang, a leak or a sanitizer report is
// a bug. Internal APIs throw, the ABI returns statuses: both end here.
//
// MAX_C_FUZZ_VERBOSE=1 prints each of those errors (to see how far a seed gets).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

#include "max_c.h"

namespace maxfuzz {

inline bool verbose() {
  static const bool on = [] {
    const char* v = std::getenv("MAX_C_FUZZ_VERBOSE");
    return v && *v && *v != '0';
  }();
  return on;
}

// Runs fn, swallowing the exceptions a bad input may raise (maxc::Error, std::bad_alloc...).
template <typename Fn>
void guarded(Fn&& fn) {
  try {
    std::forward<Fn>(fn)();
  } catch (const std::exception& e) {
    if (verbose()) std::fprintf(stderr, "  error: %s\n", e.what());
  }
}

// True on success; a failure's status is released.
inline bool ok(max_status_t* status) {
  if (!status) return true;
  if (verbose()) std::fprintf(stderr, "  status %d: %s\n", max_status_code(status), max_status_message(status));
  max_status_release(status);
  return false;
}

}  // namespace maxfuzz

// What a fuzz target may see go wrong: an error status or an exception of the library's
// (a clear error for a bad input) is fine; a crash, a hang, a leak or a sanitizer report is
// a bug. Internal APIs throw, the ABI returns statuses: both end here.
#pragma once
#include <exception>
#include <utility>

#include "max_c.h"

namespace maxfuzz {

// Runs fn, swallowing the exceptions a bad input may raise (maxc::Error, std::bad_alloc...).
template <typename Fn>
void guarded(Fn&& fn) {
  try {
    std::forward<Fn>(fn)();
  } catch (const std::exception&) {
  }
}

// True on success; a failure's status is released.
inline bool ok(max_status_t* status) {
  if (!status) return true;
  max_status_release(status);
  return false;
}

}  // namespace maxfuzz

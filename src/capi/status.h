// The ABI's status object. Creating one never throws: when memory for it runs out, a
// static RESOURCE_EXHAUSTED status stands in (and max_status_release leaves it alone).
#pragma once

#include <string>

#include "base/error.h"
#include "max_c.h"

struct max_status_t {
  max_status_code_t code;
  std::string message;
};

namespace maxc::capi {

max_status_t* make_status(Code code, std::string message) noexcept;
bool is_static_status(const max_status_t* status);

}  // namespace maxc::capi

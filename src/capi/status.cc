#include "capi/status.h"

namespace maxc::capi {
namespace {
max_status_t* out_of_memory() {
  static max_status_t status{MAX_STATUS_RESOURCE_EXHAUSTED, "out of memory"};
  return &status;
}
}  // namespace

max_status_t* make_status(Code code, std::string message) noexcept {
  try {
    return new max_status_t{static_cast<max_status_code_t>(code), std::move(message)};
  } catch (...) {
    return out_of_memory();
  }
}

bool is_static_status(const max_status_t* status) { return status == out_of_memory(); }

}  // namespace maxc::capi

using maxc::capi::is_static_status;

extern "C" {

max_status_code_t max_status_code(const max_status_t* status) {
  return status ? status->code : MAX_STATUS_OK;
}

const char* max_status_message(const max_status_t* status) {
  return status ? status->message.c_str() : "";
}

const char* max_status_code_name(max_status_code_t code) {
  return maxc::code_name(static_cast<maxc::Code>(code));
}

void max_status_release(max_status_t* status) {
  if (status && !is_static_status(status)) delete status;
}

}  // extern "C"

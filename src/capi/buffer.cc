#include "capi/capi.h"

using namespace maxc;
using namespace maxc::capi;

extern "C" {

MAXC_DEFINE_REFCOUNT(buffer)

max_status_t* max_buffer_create(const void* data, size_t size, max_buffer_t** out_buffer) {
  return MAXC_GUARD({
    auto& out = out_param(out_buffer, "out_buffer");
    if (!data && size > 0) fail(Code::kInvalidArgument, "data is NULL with size ", size);
    const auto* bytes = static_cast<const uint8_t*>(data);
    out = to_handle<max_buffer_t>(make_ref<Buffer>(std::vector<uint8_t>(bytes, bytes + size)));
  });
}

max_status_t* max_buffer_data(const max_buffer_t* buffer, const void** out_data) {
  return MAXC_GUARD({
    auto& out = out_param(out_data, "out_data");
    out = deref(buffer, "buffer").data();
  });
}

max_status_t* max_buffer_size(const max_buffer_t* buffer, size_t* out_size) {
  return MAXC_GUARD({
    auto& out = out_param(out_size, "out_size");
    out = deref(buffer, "buffer").size();
  });
}

}  // extern "C"

#include "capi/capi.h"

using namespace maxc;
using namespace maxc::capi;

extern "C" {

MAXC_DEFINE_REFCOUNT(device)

max_status_t* max_accelerator_count(int32_t* out_count) {
  return MAXC_GUARD({ out_param(out_count, "out_count") = Device::accelerator_count(); });
}

max_status_t* max_device_create(max_device_kind_t kind, int32_t id, max_device_t** out_device) {
  return MAXC_GUARD({
    auto& out = out_param(out_device, "out_device");
    out = to_handle<max_device_t>(Device::get(static_cast<Device::Kind>(kind), id));
  });
}

max_status_t* max_device_kind(const max_device_t* device, max_device_kind_t* out_kind) {
  return MAXC_GUARD({
    auto& out = out_param(out_kind, "out_kind");
    out = static_cast<max_device_kind_t>(deref(device, "device").device_kind());
  });
}

max_status_t* max_device_id(const max_device_t* device, int32_t* out_id) {
  return MAXC_GUARD({
    auto& out = out_param(out_id, "out_id");
    out = deref(device, "device").id();
  });
}

max_status_t* max_device_label(const max_device_t* device, const char** out_label) {
  return MAXC_GUARD({
    auto& out = out_param(out_label, "out_label");
    out = deref(device, "device").label();
  });
}

max_status_t* max_device_api(const max_device_t* device, const char** out_api) {
  return MAXC_GUARD({
    auto& out = out_param(out_api, "out_api");
    out = deref(device, "device").api();
  });
}

max_status_t* max_device_is_host(const max_device_t* device, int32_t* out_is_host) {
  return MAXC_GUARD({
    auto& out = out_param(out_is_host, "out_is_host");
    out = deref(device, "device").is_host();
  });
}

max_status_t* max_device_synchronize(max_device_t* device) {
  return MAXC_GUARD({ deref(device, "device").synchronize(); });
}

}  // extern "C"

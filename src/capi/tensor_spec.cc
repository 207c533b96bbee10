#include "capi/capi.h"

using namespace maxc;
using namespace maxc::capi;

extern "C" {

MAXC_DEFINE_REFCOUNT(tensor_spec)

max_status_t* max_tensor_spec_name(const max_tensor_spec_t* spec, const char** out_name) {
  return MAXC_GUARD({
    auto& out = out_param(out_name, "out_name");
    out = deref(spec, "spec").name().c_str();
  });
}

max_status_t* max_tensor_spec_dtype(const max_tensor_spec_t* spec, max_dtype_t* out_dtype) {
  return MAXC_GUARD({
    auto& out = out_param(out_dtype, "out_dtype");
    out = static_cast<max_dtype_t>(deref(spec, "spec").type().dtype);
  });
}

max_status_t* max_tensor_spec_rank(const max_tensor_spec_t* spec, size_t* out_rank) {
  return MAXC_GUARD({
    auto& out = out_param(out_rank, "out_rank");
    out = deref(spec, "spec").type().dims.size();
  });
}

max_status_t* max_tensor_spec_dim(const max_tensor_spec_t* spec, size_t axis, int64_t* out_dim,
                                  const char** out_name) {
  return MAXC_GUARD({
    if (out_name) *out_name = nullptr;
    auto& out = out_param(out_dim, "out_dim");
    const TensorSpec& s = deref(spec, "spec");
    out = s.dim(axis);
    if (out_name) *out_name = s.dim_name(axis);
  });
}

max_status_t* max_tensor_spec_device(const max_tensor_spec_t* spec, max_device_t** out_device) {
  return MAXC_GUARD({
    auto& out = out_param(out_device, "out_device");
    const DeviceRef& d = deref(spec, "spec").type().device;
    const auto id = static_cast<int32_t>(d.id);
    out = to_handle<max_device_t>(d.kind == DeviceKind::kCpu ? Device::cpu() : Device::accelerator(id));
  });
}

}  // extern "C"

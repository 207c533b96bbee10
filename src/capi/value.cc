#include "capi/capi.h"

using namespace maxc;
using namespace maxc::capi;

extern "C" {

max_status_t* max_value_dtype(const max_value_t* value, max_dtype_t* out_dtype) {
  return MAXC_GUARD({
    auto& out = out_param(out_dtype, "out_dtype");
    out = static_cast<max_dtype_t>(value_type(value).dtype);
  });
}

max_status_t* max_value_rank(const max_value_t* value, int32_t* out_rank) {
  return MAXC_GUARD({
    auto& out = out_param(out_rank, "out_rank");
    out = static_cast<int32_t>(value_type(value).rank());
  });
}

max_status_t* max_value_dim(const max_value_t* value, int32_t index, int64_t* out_size,
                            const char** out_expr) {
  return MAXC_GUARD({
    auto& size = out_param(out_size, "out_size");
    if (out_expr) *out_expr = nullptr;
    const auto& dims = value_type(value).dims;
    if (index < 0 || static_cast<size_t>(index) >= dims.size())
      fail(Code::kOutOfRange, "dim index ", index, " is outside the value's rank ", dims.size());
    size = dims[index].is_static() ? dims[index].static_value() : -1;
    if (out_expr) *out_expr = value->dim_texts[index].c_str();
  });
}

max_status_t* max_value_device(const max_value_t* value, max_device_ref_kind_t* out_kind,
                               int32_t* out_id) {
  return MAXC_GUARD({
    auto& kind = out_param(out_kind, "out_kind");
    auto& id = out_param(out_id, "out_id");
    const DeviceRef& d = value_type(value).device;
    kind = d.kind == DeviceKind::kCpu ? MAX_DEVICE_REF_CPU : MAX_DEVICE_REF_GPU;
    id = static_cast<int32_t>(d.id);
  });
}

max_status_t* max_value_type_string(const max_value_t* value, const char** out_text) {
  return MAXC_GUARD({
    auto& out = out_param(out_text, "out_text");
    value_type(value);  // checks the handle
    out = value->type_text.c_str();
  });
}

}  // extern "C"

#include "capi/capi.h"

using namespace maxc;
using namespace maxc::capi;

namespace {
DType as_dtype(max_dtype_t d) { return static_cast<DType>(d); }
}  // namespace

extern "C" {

int32_t max_dtype_is_valid(max_dtype_t d) { return dtype_is_valid(as_dtype(d)); }
int32_t max_dtype_size_in_bits(max_dtype_t d) { return dtype_size_in_bits(as_dtype(d)); }
int32_t max_dtype_size_in_bytes(max_dtype_t d) { return dtype_size_in_bytes(as_dtype(d)); }
int32_t max_dtype_align(max_dtype_t d) { return dtype_align(as_dtype(d)); }
int32_t max_dtype_is_float(max_dtype_t d) { return dtype_is_float(as_dtype(d)); }
int32_t max_dtype_is_float8(max_dtype_t d) { return dtype_is_float8(as_dtype(d)); }
int32_t max_dtype_is_half(max_dtype_t d) { return dtype_is_half(as_dtype(d)); }
int32_t max_dtype_is_integral(max_dtype_t d) { return dtype_is_integral(as_dtype(d)); }
int32_t max_dtype_is_signed_integral(max_dtype_t d) { return dtype_is_signed_integral(as_dtype(d)); }
int32_t max_dtype_is_unsigned_integral(max_dtype_t d) {
  return dtype_is_unsigned_integral(as_dtype(d));
}
const char* max_dtype_name(max_dtype_t d) { return dtype_name(as_dtype(d)); }

max_status_t* max_dtype_from_name(const char* name, max_dtype_t* out_dtype) {
  return MAXC_GUARD({
    auto& out = out_param(out_dtype, "out_dtype");
    if (!name) fail(Code::kInvalidArgument, "name is NULL");
    auto dtype = dtype_from_name(name);
    if (!dtype) fail(Code::kNotFound, "no dtype is named '", name, "'");
    out = static_cast<max_dtype_t>(*dtype);
  });
}

}  // extern "C"

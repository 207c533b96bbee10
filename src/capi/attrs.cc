#include "capi/capi.h"

using namespace maxc;
using namespace maxc::capi;

namespace {

// Each setter: the attrs handle and the name checked, then the value made and stored.
template <typename MakeValue>
max_status_t* set_attr(const char* function, max_attrs_t* attrs, const char* name, MakeValue&& make_value) {
  return guard(function, [&] {
    auto& a = deref(attrs, "attrs").attrs;
    std::string key = string_arg(name, "name");
    a.set(std::move(key), make_value());
  });
}

}  // namespace

extern "C" {

MAXC_DEFINE_REFCOUNT(attrs)

max_status_t* max_attrs_create(max_attrs_t** out_attrs) {
  return MAXC_GUARD({
    auto& out = out_param(out_attrs, "out_attrs");  // checked before the object is made
    out = to_handle<max_attrs_t>(make_ref<AttrsObject>());
  });
}

max_status_t* max_attrs_set_int(max_attrs_t* attrs, const char* name, int64_t value) {
  return set_attr(__func__, attrs, name, [&] { return AttrValue(value); });
}
max_status_t* max_attrs_set_float(max_attrs_t* attrs, const char* name, double value) {
  return set_attr(__func__, attrs, name, [&] { return AttrValue(value); });
}
max_status_t* max_attrs_set_bool(max_attrs_t* attrs, const char* name, int32_t value) {
  return set_attr(__func__, attrs, name, [&] { return AttrValue(value != 0); });
}
max_status_t* max_attrs_set_string(max_attrs_t* attrs, const char* name, const char* value) {
  return set_attr(__func__, attrs, name, [&] { return AttrValue(string_arg(value, "value")); });
}
max_status_t* max_attrs_set_dtype(max_attrs_t* attrs, const char* name, max_dtype_t value) {
  return set_attr(__func__, attrs, name, [&] { return AttrValue(dtype_arg(value, "value")); });
}
max_status_t* max_attrs_set_ints(max_attrs_t* attrs, const char* name, const int64_t* values,
                                 size_t count) {
  return set_attr(__func__, attrs, name, [&] {
    if (count > 0 && !values) fail(Code::kInvalidArgument, "values is NULL with count ", count);
    return AttrValue(std::vector<int64_t>(values, values + count));
  });
}
max_status_t* max_attrs_set_floats(max_attrs_t* attrs, const char* name, const double* values,
                                   size_t count) {
  return set_attr(__func__, attrs, name, [&] {
    if (count > 0 && !values) fail(Code::kInvalidArgument, "values is NULL with count ", count);
    return AttrValue(std::vector<double>(values, values + count));
  });
}
max_status_t* max_attrs_set_dims(max_attrs_t* attrs, const char* name, const max_dim_t* dims,
                                 size_t count) {
  return set_attr(__func__, attrs, name, [&] {
    return AttrValue(dim_list_arg(dims, static_cast<int64_t>(count), "dims"));
  });
}
max_status_t* max_attrs_set_graph(max_attrs_t* attrs, const char* name, int64_t subgraph_index) {
  return set_attr(__func__, attrs, name, [&] {
    if (subgraph_index < 0) fail(Code::kInvalidArgument, "subgraph_index ", subgraph_index, " is negative");
    return AttrValue(GraphRef{subgraph_index});
  });
}
max_status_t* max_attrs_set_device(max_attrs_t* attrs, const char* name,
                                   max_device_ref_kind_t kind, int32_t id) {
  return set_attr(__func__, attrs, name, [&] { return AttrValue(device_ref_arg(kind, id)); });
}

}  // extern "C"

#include "capi/capi.h"
#include "graph/op_registry.h"

using namespace maxc;
using namespace maxc::capi;

namespace {

const OpSchema& schema_arg(const char* name, int32_t version) {
  return OpRegistry::global().get(string_arg(name, "name"), version);
}

}  // namespace

extern "C" {

max_status_t* max_op_count(size_t* out_count) {
  return MAXC_GUARD({ out_param(out_count, "out_count") = OpRegistry::global().list().size(); });
}

max_status_t* max_op_at(size_t index, const char** out_name, int32_t* out_version) {
  return MAXC_GUARD({
    auto& name = out_param(out_name, "out_name");
    auto& version = out_param(out_version, "out_version");
    auto list = OpRegistry::global().list();
    if (index >= list.size())
      fail(Code::kOutOfRange, "op index ", index, " is past the registry's ", list.size(), " ops");
    name = list[index]->name.c_str();
    version = list[index]->version;
  });
}

max_status_t* max_op_num_inputs(const char* name, int32_t version, size_t* out_count) {
  return MAXC_GUARD({
    auto& out = out_param(out_count, "out_count");
    out = schema_arg(name, version).inputs.size();
  });
}

max_status_t* max_op_input(const char* name, int32_t version, size_t index,
                           const char** out_input_name, max_op_input_arity_t* out_arity) {
  return MAXC_GUARD({
    auto& input_name = out_param(out_input_name, "out_input_name");
    auto& arity = out_param(out_arity, "out_arity");
    const OpSchema& s = schema_arg(name, version);
    if (index >= s.inputs.size())
      fail(Code::kOutOfRange, s.label(), " has ", s.inputs.size(), " input(s); index ", index, " is past them");
    input_name = s.inputs[index].name.c_str();
    arity = static_cast<max_op_input_arity_t>(s.inputs[index].arity);
  });
}

max_status_t* max_op_num_attrs(const char* name, int32_t version, size_t* out_count) {
  return MAXC_GUARD({
    auto& out = out_param(out_count, "out_count");
    out = schema_arg(name, version).attrs.size();
  });
}

max_status_t* max_op_attr(const char* name, int32_t version, size_t index,
                          const char** out_attr_name, max_attr_kind_t* out_kind,
                          max_op_attr_presence_t* out_presence) {
  return MAXC_GUARD({
    auto& attr_name = out_param(out_attr_name, "out_attr_name");
    auto& kind = out_param(out_kind, "out_kind");
    auto& presence = out_param(out_presence, "out_presence");
    const OpSchema& s = schema_arg(name, version);
    if (index >= s.attrs.size())
      fail(Code::kOutOfRange, s.label(), " has ", s.attrs.size(), " attribute(s); index ", index, " is past them");
    attr_name = s.attrs[index].name.c_str();
    kind = static_cast<max_attr_kind_t>(s.attrs[index].kind);
    presence = static_cast<max_op_attr_presence_t>(s.attrs[index].presence);
  });
}

}  // extern "C"

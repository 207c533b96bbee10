#include "capi/capi.h"

namespace maxc::capi {

max_value_t* GraphObject::value_handle(ValueId id) const {
  if (handles_.size() <= id) handles_.resize(graph.num_values());
  auto& slot = handles_[id];
  if (!slot) {
    auto h = std::make_unique<max_value_t>();
    h->owner = this;
    h->id = id;
    const TensorType& type = graph.type(id);
    for (const Dim& d : type.dims) h->dim_texts.push_back(d.to_string());
    h->type_text = type.to_string();
    slot = std::move(h);
  }
  return slot.get();
}

ValueId GraphObject::value_id(const max_value_t* value, const std::string& arg) const {
  const max_value_t& v = value_arg(value, arg.c_str());
  if (v.owner != this)
    fail(Code::kInvalidArgument, arg, " belongs to graph '", v.owner->graph.name(),
         "', not to graph '", graph.name(), "'");
  return v.id;
}

}  // namespace maxc::capi

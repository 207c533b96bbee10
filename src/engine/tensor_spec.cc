#include "engine/tensor_spec.h"

#include "base/error.h"

namespace maxc {

TensorSpec::TensorSpec(std::string name, TensorType type)
    : Object(ObjectKind::kTensorSpec), name_(std::move(name)), type_(std::move(type)) {
  for (const Dim& d : type_.dims) dim_names_.push_back(d.is_static() ? "" : d.to_string());
}

int64_t TensorSpec::dim(size_t axis) const {
  if (axis >= type_.dims.size())
    fail(Code::kOutOfRange, "axis ", axis, " is past the rank ", type_.dims.size(), " of '", name_, "'");
  const Dim& d = type_.dims[axis];
  return d.is_static() ? d.static_value() : -1;
}

const char* TensorSpec::dim_name(size_t axis) const {
  dim(axis);  // range check
  return dim_names_[axis].empty() ? nullptr : dim_names_[axis].c_str();
}

}  // namespace maxc

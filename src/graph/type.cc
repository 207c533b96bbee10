#include "graph/type.h"

#include <algorithm>
#include <ostream>

#include "base/checked_math.h"
#include "base/error.h"

namespace maxc {
namespace {

// The static dims of a shape must multiply within the element limit, or the compiler and
// the kernels would size buffers from a product that wraps. That holds whatever values the
// symbolic dims take (the limit binds the nonzero dims even of an empty tensor, see
// checked_product), so it is checked here, at graph build; the whole shape is checked again
// when the symbols get values (engine/exec_plan.cc).
void check_static_size(const TensorType& t, const std::string& what) {
  std::vector<int64_t> sizes;
  for (const Dim& d : t.dims)
    if (d.is_static()) sizes.push_back(d.static_value());
  if (!checked_product(sizes))
    fail(Code::kInvalidArgument, what, ": the dims of shape ", dims_to_string(t.dims), " multiply to more than ",
         kMaxElements, " elements");
}

}  // namespace

std::string DeviceRef::to_string() const {
  return (kind == DeviceKind::kGpu ? "gpu:" : "cpu:") + std::to_string(id);
}

bool TensorType::is_static() const {
  return std::all_of(dims.begin(), dims.end(), [](const Dim& d) { return d.is_static(); });
}

Dim TensorType::num_elements() const { return dims_product(dims); }

std::string TensorType::to_string() const {
  const char* name = dtype_name(dtype);
  return std::string(is_buffer ? "buffer<" : "tensor<") + dims_to_string(dims) + ", " +
         (name ? name : "invalid_dtype(" + std::to_string(static_cast<int32_t>(dtype)) + ")") + ", " +
         device.to_string() + ">";
}

void TensorType::validate(const std::string& what) const {
  if (!dtype_is_valid(dtype))
    fail(Code::kInvalidArgument, what, ": unknown dtype code ", static_cast<int32_t>(dtype));
  if (device.kind != DeviceKind::kCpu && device.kind != DeviceKind::kGpu)
    fail(Code::kInvalidArgument, what, ": unknown device kind ", static_cast<int32_t>(device.kind));
  if (device.id < 0) fail(Code::kInvalidArgument, what, ": device id ", device.id, " is negative");
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].is_static() && dims[i].static_value() < 0)
      fail(Code::kInvalidArgument, what, ": dim ", i, " of ", dims_to_string(dims), " is negative");
  }
  check_static_size(*this, what);
}

std::ostream& operator<<(std::ostream& out, const DeviceRef& d) { return out << d.to_string(); }
std::ostream& operator<<(std::ostream& out, const TensorType& t) { return out << t.to_string(); }

}  // namespace maxc

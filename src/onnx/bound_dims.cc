#include "onnx/bound_dims.h"

#include "onnx/data_dependent.h"
#include "onnx/value_table.h"

namespace maxc::onnx {

// More entries than this are no shape (ranks stay far below it).
constexpr int64_t kMaxBoundDims = 64;

bool bindable(NodeContext& c, size_t i) {
  if (!c.has_input(i) || !c.values().binds_dims()) return false;
  const KnownValue* k = c.known(i);
  if (k && k->ints) return false;
  const TensorType& t = c.type(i);
  return dtype_is_integral(t.dtype) && t.rank() == 1 && t.dims[0].is_static() &&
         t.dims[0].static_value() <= kMaxBoundDims;
}

std::vector<Dim> bind_dims(NodeContext& c, ValueId shape, std::string_view stem) {
  const int64_t n = c.type_of(shape).dims.at(0).static_value();
  const std::string base = fresh_count_symbol(c, stem).symbol();
  std::vector<Dim> dims;
  for (int64_t k = 0; k < n; ++k) dims.push_back(Dim(std::string_view(str_cat(base, "_", k))));
  c.op("bind_dims", {c.cast(shape, DType::kInt64)}, {{"out_dim", dims}});
  return dims;
}

std::vector<Dim> input_dims(NodeContext& c, size_t i, std::string_view what, std::string_view stem) {
  if (bindable(c, i)) return bind_dims(c, c.input(i), stem);
  return c.known_dims(i, what);
}

}  // namespace maxc::onnx

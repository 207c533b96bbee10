#include "onnx/fold.h"

#include "onnx/size_limits.h"

namespace maxc::onnx {

std::optional<std::vector<int64_t>> broadcast_static(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

namespace {

// The operands' broadcast shape; nullopt when they conflict or it has more than `limit`
// elements.
std::optional<std::vector<int64_t>> broadcast_of(const std::vector<const KnownValue*>& operands, int64_t limit) {
  std::vector<int64_t> shape;
  for (const KnownValue* k : operands) {
    auto b = broadcast_static(shape, k->shape);
    if (!b) return std::nullopt;
    shape = *b;
  }
  // Checked: many small operands along different axes can broadcast past int64.
  std::optional<int64_t> n = checked_product(shape);
  if (!n || *n > limit) return std::nullopt;
  return shape;
}

// Calls `visit` for each element of `shape` in order with the flat index each operand
// reads it from; stops (returning false) when `visit` does.
bool for_each_element(const std::vector<const KnownValue*>& operands, const std::vector<int64_t>& shape,
                      const std::function<bool(const std::vector<size_t>&)>& visit) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<size_t> at(operands.size());
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    for (size_t o = 0; o < operands.size(); ++o) {
      const KnownValue& k = *operands[o];
      size_t offset = shape.size() - k.shape.size();
      int64_t flat = 0;
      for (size_t d = 0; d < k.shape.size(); ++d) flat = flat * k.shape[d] + (k.shape[d] == 1 ? 0 : index[offset + d]);
      at[o] = static_cast<size_t>(flat);
    }
    if (!visit(at)) return false;
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return true;
}

}  // namespace

std::optional<KnownValue> fold_elementwise(const std::vector<const KnownValue*>& operands, DType dtype,
                                           const DimFn& fn) {
  for (const KnownValue* k : operands)
    if (!k || !k->ints) return std::nullopt;
  std::optional<std::vector<int64_t>> shape = broadcast_of(operands, kMaxKnownInts);
  if (!shape) return std::nullopt;
  std::vector<Dim> out, args(operands.size());
  bool whole = for_each_element(operands, *shape, [&](const std::vector<size_t>& at) {
    for (size_t o = 0; o < operands.size(); ++o) args[o] = (*operands[o]->ints)[at[o]];
    std::optional<Dim> r = fn(args);
    if (r) out.push_back(std::move(*r));
    return r.has_value();
  });
  if (!whole) return std::nullopt;
  return KnownValue::from_dims(dtype, *shape, std::move(out));
}

std::optional<KnownValue> fold_numbers(const std::vector<const KnownValue*>& operands, DType dtype,
                                       const NumberFn& fn) {
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64 && !dtype_is_half(dtype) && !dtype_is_integral(dtype) &&
      dtype != DType::kBool)
    return std::nullopt;
  std::vector<std::vector<double>> values;
  for (const KnownValue* k : operands) {
    std::optional<std::vector<double>> v = k && k->num_elements() <= kMaxFoldedNumbers ? k->doubles() : std::nullopt;
    if (!v) return std::nullopt;
    values.push_back(std::move(*v));
  }
  std::optional<std::vector<int64_t>> shape = broadcast_of(operands, kMaxFoldedNumbers);
  if (!shape) return std::nullopt;
  std::vector<double> out, args(operands.size());
  for_each_element(operands, *shape, [&](const std::vector<size_t>& at) {
    for (size_t o = 0; o < operands.size(); ++o) args[o] = values[o][at[o]];
    out.push_back(fn(args));
    return true;
  });
  return KnownValue::from_doubles(dtype, *shape, out);
}

}  // namespace maxc::onnx

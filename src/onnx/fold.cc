#include "onnx/fold.h"

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

std::optional<KnownValue> fold_elementwise(const std::vector<const KnownValue*>& operands, DType dtype,
                                           const DimFn& fn) {
  std::vector<int64_t> shape;
  for (const KnownValue* k : operands) {
    if (!k || !k->ints) return std::nullopt;
    auto b = broadcast_static(shape, k->shape);
    if (!b) return std::nullopt;
    shape = *b;
  }
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n > kMaxKnownInts) return std::nullopt;
  std::vector<Dim> out;
  out.reserve(static_cast<size_t>(n));
  std::vector<Dim> args(operands.size());
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    for (size_t o = 0; o < operands.size(); ++o) {
      const KnownValue& k = *operands[o];
      size_t offset = shape.size() - k.shape.size();
      int64_t flat = 0;
      for (size_t d = 0; d < k.shape.size(); ++d) flat = flat * k.shape[d] + (k.shape[d] == 1 ? 0 : index[offset + d]);
      args[o] = (*k.ints)[static_cast<size_t>(flat)];
    }
    std::optional<Dim> r = fn(args);
    if (!r) return std::nullopt;
    out.push_back(std::move(*r));
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return KnownValue::from_dims(dtype, shape, std::move(out));
}

}  // namespace maxc::onnx

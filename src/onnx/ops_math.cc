// Linear algebra and ordering: MatMul, Gemm, CumSum, TopK, Trilu.
#include <algorithm>

#include "onnx/node_context.h"
#include "onnx/order_key.h"

namespace maxc::onnx {
namespace {

void import_matmul(NodeContext& c) { c.set_output(0, c.op("matmul", {c.input(0), c.input(1)})); }

ValueId transposed(NodeContext& c, ValueId v, bool t) {
  if (!t) return v;
  return c.op("transpose", {v}, {{"axis_1", int64_t{0}}, {"axis_2", int64_t{1}}});
}

// Y = alpha * A' @ B' + beta * C, with C broadcast (unidirectionally) to the result.
void import_gemm(NodeContext& c) {
  if (c.rank(0) != 2 || c.rank(1) != 2) c.invalid("A and B must be matrices");
  ValueId a = transposed(c, c.input(0), c.attr_int("transA", 0) != 0);
  ValueId b = transposed(c, c.input(1), c.attr_int("transB", 0) != 0);
  DType dt = c.type_of(a).dtype;
  double alpha = c.attr_float("alpha", 1.f), beta = c.attr_float("beta", 1.f);
  ValueId y = c.op("matmul", {a, b});
  if (alpha != 1) y = c.op("mul", {y, c.scalar(dt, alpha)});
  if (c.has_input(2) && beta != 0) {
    ValueId bias = c.input(2);
    if (beta != 1) bias = c.op("mul", {bias, c.scalar(dt, beta)});
    y = c.op("add", {y, bias});
  }
  c.set_output(0, y);
}

void import_cumsum(NodeContext& c) {
  const bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
  c.set_output(0, scan_along_named_axis(c, [&](size_t axis) {
                 return c.op("cumsum", {c.input(0)},
                             {{"axis", static_cast<int64_t>(axis)}, {"exclusive", exclusive}, {"reverse", reverse}});
               }));
}

// TopK: our top_k gives the largest, sorted, of the types order_key maps onto; the
// smallest are the largest of the reversed key.
void import_top_k(NodeContext& c) {
  // Before opset 10, K was the attribute k.
  int64_t k = c.opset() < 10 ? c.attr_int("k", -1) : c.known_int(1, "K");
  if (k < 0) c.invalid("K must be given and not negative, got ", k);
  int64_t axis = c.axis(c.attr_int("axis", -1), c.rank(0));
  bool largest = c.attr_int("largest", 1) != 0;
  ValueId key = order_key(c, c.input(0));
  if (!largest) key = reversed_order(c, key);
  std::vector<ValueId> out = c.ops("top_k", {key}, {{"k", k}, {"axis", axis}});
  ValueId top = largest ? out[0] : reversed_order(c, out[0]);
  c.set_output(0, from_order_key(c, top, c.dtype(0)));
  c.set_output(1, out[1]);
}

// Trilu keeps j - i >= k (upper) or j - i <= k (lower); band_part keeps
// (i - j <= num_lower) && (j - i <= num_upper), or the complement with exclude.
void trilu_by_band(NodeContext& c, int64_t k, bool upper) {
  Attrs attrs;
  if (upper) {
    if (k <= 0) attrs.set("num_lower", -k);
    else attrs = Attrs{{"num_upper", k - 1}, {"exclude", true}};
  } else {
    if (k >= 0) attrs.set("num_upper", k);
    else attrs = Attrs{{"num_lower", -k - 1}, {"exclude", true}};
  }
  c.set_output(0, c.op("band_part", {c.input(0)}, attrs));
}

// A k known only at run time cannot be a band_part attribute: the kept positions are a
// mask of j - i against k, broadcast over the batch.
void trilu_by_mask(NodeContext& c, bool upper) {
  if (c.rank(0) < 2) c.invalid("input must have rank >= 2, got ", c.rank(0));
  const std::vector<Dim>& d = c.type(0).dims;
  Dim m = d[d.size() - 2], n = d.back();
  ValueId diff = c.op("sub", {c.reshape(arange(c, n), {Dim(1), n}), c.reshape(arange(c, m), {m, Dim(1)})});
  ValueId k = c.reshape(c.cast(c.input(1), DType::kInt64), {});
  ValueId keep = c.op(upper ? "greater_equal" : "less_equal", {diff, k});
  ValueId x = c.input(0);
  DType dt = c.dtype(0);
  if (dt == DType::kBool) return c.set_output(0, c.op("logical_and", {x, keep}));
  c.set_output(0, c.op("where", {keep, x, c.scalar(dt, 0)}));
}

void import_trilu(NodeContext& c) {
  bool upper = c.attr_int("upper", 1) != 0;
  if (!c.has_input(1)) return trilu_by_band(c, 0, upper);
  const KnownValue* k = c.known(1);
  // A diagonal past +-2^62 keeps (or drops) the same as one just past any dim, and negating
  // it cannot overflow.
  constexpr int64_t kFar = int64_t{1} << 62;
  if (k && k->static_ints()) return trilu_by_band(c, std::clamp(c.known_int(1, "k"), -kFar, kFar), upper);
  trilu_by_mask(c, upper);
}

}  // namespace

void register_math_importers(ImportTable& t) {
  t["MatMul"] = import_matmul;
  t["Gemm"] = import_gemm;
  t["CumSum"] = import_cumsum;
  t["TopK"] = import_top_k;
  t["Trilu"] = import_trilu;
}

}  // namespace maxc::onnx

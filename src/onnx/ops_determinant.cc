// Det, the determinant of [..., n, n] with a static n, composed from gathers and elementwise
// ops: Gaussian elimination with partial pivoting unrolled over the n columns. At step k the
// pivot row p is the argmax of |A[..., i, k]| over i >= k (the first on ties); rows k and p
// are swapped with a batched gather_nd (a swap flips the sign), the rows below k lose their
// multiple of row k, and the determinant is sign * the product of the pivots. A zero pivot (a
// singular matrix: the whole column below it is zero) is divided as 1, so the elimination
// stays finite and the product is 0. 16-bit floats are eliminated in float32.
#include <cstdint>
#include <vector>

#include "onnx/node_context.h"

namespace maxc::onnx {
namespace {

// The elimination adds a handful of ops and three [n] masks per column.
constexpr int64_t kMaxDetSize = 1024;

ValueId i64_const(NodeContext& c, std::vector<int64_t> shape, const std::vector<double>& v) {
  return c.constant(KnownValue::from_doubles(DType::kInt64, std::move(shape), v));
}

// A constant bool [n]: element i is pred(i).
template <typename Pred>
ValueId bool_mask(NodeContext& c, int64_t n, Pred pred) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = pred(i) ? 1 : 0;
  return c.op("not_equal", {i64_const(c, {n}, v), c.scalar(DType::kInt64, 0)});
}

void import_det(NodeContext& c) {
  const DType dt = c.dtype(0);
  if (!dtype_is_float(dt)) c.invalid("Det needs a float input, got ", dtype_name(dt));
  const std::vector<Dim> dims = c.type(0).dims;
  if (dims.size() < 2) c.invalid("X must have rank >= 2 ([..., M, M]), got rank ", dims.size());
  const Dim& rows_dim = dims[dims.size() - 2];
  const Dim& cols_dim = dims.back();
  if (!cols_dim.is_static() && !rows_dim.is_static())
    c.unsupported("Det of matrices of the symbolic size ", cols_dim, " (the size must be static)");
  const int64_t n = cols_dim.is_static() ? cols_dim.static_value() : rows_dim.static_value();
  if ((rows_dim.is_static() && rows_dim.static_value() != n) || (cols_dim.is_static() && cols_dim.static_value() != n))
    c.invalid("the last two dims of X must be equal, got ", rows_dim, " x ", cols_dim);
  if (n == 0) c.unsupported("Det of 0 x 0 matrices");
  if (n > kMaxDetSize)
    c.exhausted("Det of ", n, " x ", n, " matrices (the elimination is unrolled per column, at most ", kMaxDetSize, ")");

  const DType work = dt == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  const int64_t r = static_cast<int64_t>(dims.size());
  const int64_t batch = r - 2;
  ValueId a = c.cast(c.input(0), work);

  std::vector<double> iota(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) iota[static_cast<size_t>(i)] = static_cast<double>(i);
  const ValueId rows = i64_const(c, {n}, iota);

  std::optional<ValueId> det, sign;  // both [..., 1]
  for (int64_t k = 0; k < n; ++k) {
    const ValueId kk = i64_const(c, {1}, {static_cast<double>(k)});
    // Column k: [..., n, 1] -> [..., n].
    auto column = [&] { return c.op("squeeze", {c.op("gather", {a, kk}, {{"axis", r - 1}})}, {{"axis", r - 1}}); };
    ValueId col = column();
    if (k + 1 < n) {
      const ValueId candidates = bool_mask(c, n, [&](int64_t i) { return i >= k; });
      const ValueId masked = c.op("where", {candidates, c.op("abs", {col}), c.scalar(work, -1)});
      const ValueId p = c.op("argmax", {masked}, {{"axis", int64_t{-1}}});  // [..., 1]
      const ValueId is_k = bool_mask(c, n, [&](int64_t i) { return i == k; });
      const ValueId perm = c.op(
          "where", {is_k, p,
                    c.op("where", {c.op("equal", {rows, p}), c.scalar(DType::kInt64, static_cast<double>(k)), rows})});
      a = c.op("gather_nd", {a, c.op("unsqueeze", {perm}, {{"axis", int64_t{-1}}})}, {{"batch_dims", batch}});
      const ValueId flip = c.op("where", {c.op("not_equal", {p, c.scalar(DType::kInt64, static_cast<double>(k))}),
                                          c.scalar(work, -1), c.scalar(work, 1)});
      sign = sign ? c.op("mul", {*sign, flip}) : flip;
      col = column();
    }
    const ValueId pivot = c.op("gather", {col, kk}, {{"axis", r - 2}});  // [..., 1]
    det = det ? c.op("mul", {*det, pivot}) : pivot;
    if (k + 1 < n) {
      const ValueId safe = c.op("where", {c.op("equal", {pivot, c.scalar(work, 0)}), c.scalar(work, 1), pivot});
      const ValueId below = bool_mask(c, n, [&](int64_t i) { return i > k; });
      const ValueId f = c.op("where", {below, c.op("div", {col, safe}), c.scalar(work, 0)});  // [..., n]
      const ValueId row_k = c.op("gather", {a, kk}, {{"axis", r - 2}});                        // [..., 1, n]
      a = c.op("sub", {a, c.op("mul", {c.op("unsqueeze", {f}, {{"axis", int64_t{-1}}}), row_k})});
    }
  }
  ValueId y = sign ? c.op("mul", {*det, *sign}) : *det;
  y = c.op("squeeze", {y}, {{"axis", int64_t{-1}}});
  c.set_output(0, c.cast(y, dt));
}

}  // namespace

void register_determinant_importers(ImportTable& t) { t["Det"] = import_det; }

}  // namespace maxc::onnx

// Reductions. Ours reduce one axis and keep it (size 1); an ONNX reduction over several
// axes is a chain of them, then a reshape when keepdims is 0. The L1/L2/LogSum/... family
// wraps sum/max in elementwise ops. Axes are an input from opset 18 (ReduceSum: 13).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "onnx/node_context.h"
#include "onnx/order_key.h"

namespace maxc::onnx {
namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// ReduceProd multiplies the slices along an axis one by one (we have no product reduction,
// and exp(sum(log)) is not exact); past this many slices it is not supported.
constexpr int64_t kMaxProductSlices = 256;

struct Axes {
  std::vector<int64_t> axes;  // normalized, sorted
  bool noop = false;
};

Axes reduce_axes(NodeContext& c, bool axes_is_input) {
  int64_t r = c.rank(0);
  std::vector<int64_t> raw;
  if (axes_is_input) {
    if (c.has_input(1)) raw = c.known_ints(1, "axes");
  } else if (auto a = c.attr_ints("axes")) {
    raw = *a;
  }
  Axes out;
  if (raw.empty()) {
    if (c.attr_int("noop_with_empty_axes", 0) != 0) out.noop = true;
    else for (int64_t i = 0; i < r; ++i) out.axes.push_back(i);
    return out;
  }
  for (int64_t a : raw) out.axes.push_back(c.axis(a, r, "axes entry"));
  std::sort(out.axes.begin(), out.axes.end());
  out.axes.erase(std::unique(out.axes.begin(), out.axes.end()), out.axes.end());
  return out;
}

ValueId chain(NodeContext& c, const char* op, ValueId x, const std::vector<int64_t>& axes) {
  for (int64_t a : axes) x = c.op(op, {x}, {{"axis", a}});
  return x;
}

ValueId product_along(NodeContext& c, ValueId x, int64_t axis) {
  std::vector<Dim> dims = c.type_of(x).dims;
  const Dim d = dims[static_cast<size_t>(axis)];
  if (!d.is_static()) c.unsupported("ReduceProd needs a static dim along axis ", axis, ", got ", d);
  int64_t n = d.static_value();
  if (n > kMaxProductSlices) c.unsupported("ReduceProd over ", n, " elements (at most ", kMaxProductSlices, ")");
  if (n == 1) return x;
  dims[static_cast<size_t>(axis)] = Dim(1);
  if (n == 0) return c.op("broadcast_to", {c.scalar(c.type_of(x).dtype, 1)}, {{"shape", dims}});  // the empty product
  std::vector<Dim> ones(static_cast<size_t>(n), Dim(1));
  std::vector<ValueId> parts = c.ops("split", {x}, {{"split_sizes", ones}, {"axis", axis}});
  ValueId y = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) y = c.op("mul", {y, parts[i]});
  return y;
}

// Drops the reduced axes when keepdims is 0.
ValueId finish(NodeContext& c, ValueId y, const std::vector<int64_t>& axes, bool keep) {
  if (keep) return y;
  std::vector<Dim> dims;
  const std::vector<Dim>& in = c.type_of(y).dims;
  for (size_t i = 0; i < in.size(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i))) dims.push_back(in[i]);
  return c.reshape(y, dims);
}

// The lowest (or highest) value of `dt`: the identity of max (min) and where an empty max
// (min) lands, as ONNX's reference has it (-inf and inf for floats).
double extreme(DType dt, bool lowest) {
  if (dtype_is_float(dt)) return lowest ? -INFINITY : INFINITY;
  if (dt == DType::kBool) return lowest ? 0 : 1;
  const int bits = dtype_size_in_bits(dt);
  if (dtype_is_unsigned_integral(dt)) return lowest ? 0 : std::ldexp(1.0, bits) - 1;
  return lowest ? -std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits - 1) - 1;
}

// Whether one of the reduced axes has no elements (a static 0).
bool reduces_nothing(NodeContext& c, const std::vector<int64_t>& axes) {
  for (int64_t a : axes)
    if (c.type(0).dims[static_cast<size_t>(a)] == Dim(0)) return true;
  return false;
}

// The reduction of an empty slice, everywhere: x's shape with the reduced axes kept as 1.
ValueId filled(NodeContext& c, const std::vector<int64_t>& axes, double value) {
  std::vector<Dim> dims = c.type(0).dims;
  for (int64_t a : axes) dims[static_cast<size_t>(a)] = Dim(1);
  return c.op("broadcast_to", {c.scalar(c.dtype(0), value)}, {{"shape", dims}});
}

// max and min of types the kernels lack go through an order key (max and min of booleans,
// "any" and "all", over 0 and 1).
ValueId extremum(NodeContext& c, const char* op, ValueId x, const std::vector<int64_t>& axes) {
  return from_order_key(c, chain(c, op, order_key(c, x), axes), c.type_of(x).dtype);
}

void import_reduce(NodeContext& c, Kind kind, int64_t axes_input_since) {
  Axes ax = reduce_axes(c, c.opset() >= axes_input_since);
  ValueId x = c.input(0);
  bool keep = c.attr_int("keepdims", 1) != 0;
  const bool extremes = kind == Kind::kMax || kind == Kind::kMin || kind == Kind::kLogSumExp;
  if (extremes && !ax.noop && c.rank(0) > 0 && reduces_nothing(c, ax.axes)) {
    const double value = kind == Kind::kMin ? extreme(c.dtype(0), false) : extreme(c.dtype(0), true);
    return c.set_output(0, finish(c, filled(c, ax.axes, value), ax.axes, keep));
  }
  if (ax.noop || c.rank(0) == 0) {
    // Nothing is reduced, but the elementwise part still applies.
    switch (kind) {
      case Kind::kL1: case Kind::kL2: x = c.op("abs", {x}); break;
      case Kind::kSumSquare: x = c.op("mul", {x, x}); break;
      case Kind::kLogSum: case Kind::kLogSumExp: x = kind == Kind::kLogSum ? c.op("log", {x}) : x; break;
      default: break;
    }
    return c.set_output(0, x);
  }
  const auto& axes = ax.axes;
  ValueId y = x;
  switch (kind) {
    case Kind::kSum: y = chain(c, "sum", x, axes); break;
    case Kind::kMean: y = chain(c, "mean", x, axes); break;
    case Kind::kMax: y = extremum(c, "max", x, axes); break;
    case Kind::kMin: y = extremum(c, "min", x, axes); break;
    case Kind::kProd:
      for (int64_t a : axes) y = product_along(c, y, a);
      break;
    case Kind::kL1: y = chain(c, "sum", c.op("abs", {x}), axes); break;
    case Kind::kL2: y = c.op("sqrt", {chain(c, "sum", c.op("mul", {x, x}), axes)}); break;
    case Kind::kSumSquare: y = chain(c, "sum", c.op("mul", {x, x}), axes); break;
    case Kind::kLogSum: y = c.op("log", {chain(c, "sum", x, axes)}); break;
    case Kind::kLogSumExp: {
      ValueId m = chain(c, "max", x, axes);
      // A row of -inf would give inf - inf; subtracting its max only where it is finite
      // keeps log(sum(exp)) = -inf there.
      ValueId zero = c.scalar(c.type_of(m).dtype, 0);
      ValueId safe = c.op("where", {c.op("is_inf", {m}), zero, m});
      ValueId s = chain(c, "sum", c.op("exp", {c.op("sub", {x, safe})}), axes);
      y = c.op("add", {c.op("log", {s}), safe});
      break;
    }
  }
  c.set_output(0, finish(c, y, axes, keep));
}

// ArgMax/ArgMin: select_last_index reverses the axis and maps the index back.
void import_arg(NodeContext& c, const char* op) {
  int64_t r = c.rank(0);
  int64_t axis = c.axis(c.attr_int("axis", 0), r);
  bool keep = c.attr_int("keepdims", 1) != 0;
  ValueId x = c.input(0);
  bool last = c.attr_int("select_last_index", 0) != 0;
  if (last) {
    std::vector<Dim> starts(static_cast<size_t>(axis + 1), Dim(INT64_MAX)), stops = starts;
    std::vector<int64_t> steps(static_cast<size_t>(axis + 1), 1);
    steps.back() = -1;
    x = c.op("slice_tensor", {x}, {{"starts", starts}, {"stops", stops}, {"steps", steps}});
  }
  ValueId y = c.op(op, {order_key(c, x)}, {{"axis", axis}});
  if (last) {
    const Dim& d = c.type(0).dims[static_cast<size_t>(axis)];
    if (!d.is_static()) c.unsupported("select_last_index needs a static dim along the axis");
    y = c.op("sub", {c.scalar(DType::kInt64, static_cast<double>(d.static_value() - 1)), y});
  }
  c.set_output(0, finish(c, y, {axis}, keep));
}

}  // namespace

void register_reduce_importers(ImportTable& t) {
  struct Entry {
    const char* name;
    Kind kind;
    int64_t axes_input_since;
  };
  for (Entry e : {Entry{"ReduceSum", Kind::kSum, 13}, {"ReduceMean", Kind::kMean, 18}, {"ReduceMax", Kind::kMax, 18},
                  {"ReduceMin", Kind::kMin, 18}, {"ReduceProd", Kind::kProd, 18}, {"ReduceL1", Kind::kL1, 18},
                  {"ReduceL2", Kind::kL2, 18}, {"ReduceSumSquare", Kind::kSumSquare, 18},
                  {"ReduceLogSum", Kind::kLogSum, 18}, {"ReduceLogSumExp", Kind::kLogSumExp, 18}})
    t[e.name] = [e](NodeContext& c) { import_reduce(c, e.kind, e.axes_input_since); };
  t["ArgMax"] = [](NodeContext& c) { import_arg(c, "argmax"); };
  t["ArgMin"] = [](NodeContext& c) { import_arg(c, "argmin"); };
}

}  // namespace maxc::onnx

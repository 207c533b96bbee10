// Scans and scatters composed from our graph ops: CumProd (a log-depth product scan),
// ReverseSequence (a per-batch gather), MaxUnpool (a scatter into zeros) and TensorScatter
// (a KV-cache write, a scatter along the sequence axis). Run-time indices stay run-time;
// what shapes the graph (CumProd's axis lengths, MaxUnpool's output_shape) must be known
// at import.
#include <climits>
#include <string>

#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {

ValueId arange(NodeContext& c, const Dim& n) {
  if (n.is_static()) {
    std::vector<double> seq(static_cast<size_t>(bounded_elements(c, {n.static_value()}, "a position range")));
    for (size_t i = 0; i < seq.size(); ++i) seq[i] = static_cast<double>(i);
    return c.constant(KnownValue::from_doubles(DType::kInt64, {n.static_value()}, seq));
  }
  // A symbolic length is only known at run time: its value comes from the shape itself.
  ValueId stop = c.reshape(c.op("shape_to_tensor", {}, {{"shape", std::vector<Dim>{n}}}), {});
  return c.op("range", {c.scalar(DType::kInt64, 0), stop, c.scalar(DType::kInt64, 1)},
              {{"out_dim", std::vector<Dim>{n}}});
}

namespace {

constexpr int64_t kOpen = INT64_MAX;

// `v`, n elements, laid along `axis` of a rank-`rank` shape of ones, to broadcast.
ValueId along_axis(NodeContext& c, ValueId v, const Dim& n, size_t axis, size_t rank) {
  std::vector<Dim> dims(rank, Dim(1));
  dims[axis] = n;
  return c.reshape(v, dims);
}

int64_t static_dim(NodeContext& c, const Dim& d, std::string_view what) {
  if (!d.is_static()) c.unsupported(what, " is the symbolic dim ", d, "; it must be static");
  return d.static_value();
}

// ---- CumProd ----

// x[start:stop:step] along `axis`, every other axis whole.
ValueId slice_axis(NodeContext& c, ValueId x, size_t axis, Dim start, Dim stop, int64_t step) {
  std::vector<Dim> starts(axis + 1, Dim(kOpen)), stops(axis + 1, Dim(kOpen));
  std::vector<int64_t> steps(axis + 1, 1);
  starts[axis] = start;
  stops[axis] = stop;
  steps[axis] = step;
  return c.op("slice_tensor", {x}, {{"starts", starts}, {"stops", stops}, {"steps", steps}});
}

// x moved `s` places along the axis (of length n >= s), ones filling the front: the element
// each position multiplies by in a scan step.
ValueId shifted_in_ones(NodeContext& c, ValueId x, size_t axis, int64_t n, int64_t s) {
  std::vector<Dim> dims = c.type_of(x).dims;
  if (s == n) return c.op("broadcast_to", {c.scalar(c.type_of(x).dtype, 1)}, {{"shape", dims}});
  std::vector<int64_t> paddings(2 * dims.size(), 0);
  paddings[2 * axis] = s;
  return c.op("pad", {slice_axis(c, x, axis, 0, n - s, 1)}, {{"paddings", paddings}, {"value", 1.0}});
}

// A Hillis-Steele scan: after the step with shift 2^k every position holds the product of
// the 2^(k+1) elements ending at it, so ceil(log2 n) plain multiplies in the element type
// suffice (no exp(cumsum(log)), which loses integers, signs and zeros).
ValueId cum_prod_along(NodeContext& c, ValueId x, size_t axis, bool exclusive, bool reverse) {
  int64_t n = static_dim(c, c.type_of(x).dims[axis], "the length of axis " + std::to_string(axis));
  if (n == 0) return x;
  if (reverse) x = slice_axis(c, x, axis, kOpen, kOpen, -1);
  if (exclusive) x = shifted_in_ones(c, x, axis, n, 1);
  for (int64_t s = 1; s < n; s *= 2) x = c.op("mul", {x, shifted_in_ones(c, x, axis, n, s)});
  if (reverse) x = slice_axis(c, x, axis, kOpen, kOpen, -1);
  return x;
}

}  // namespace

// An axis known only at run time: the scan along every axis, the one it names picked by
// where (each has x's shape). A rank-1 x has one axis to name.
ValueId scan_along_named_axis(NodeContext& c, const std::function<ValueId(size_t axis)>& along) {
  int64_t r = c.rank(0);
  if (r == 0) c.invalid("x must have rank >= 1");
  const KnownValue* k = c.known(1);
  if (k && k->static_ints()) return along(static_cast<size_t>(c.axis(c.known_int(1, "axis"), r)));
  size_t last = static_cast<size_t>(r - 1);
  ValueId y = along(last);
  if (r == 1) return y;
  ValueId a = c.reshape(c.cast(c.input(1), DType::kInt64), {});
  a = c.op("where", {c.op("less", {a, c.scalar(DType::kInt64, 0)}), c.op("add", {a, c.scalar(DType::kInt64, r)}), a});
  for (size_t i = last; i-- > 0;) {
    ValueId hit = c.op("equal", {a, c.scalar(DType::kInt64, static_cast<double>(i))});
    y = c.op("where", {hit, along(i), y});
  }
  return y;
}

namespace {

void import_cum_prod(NodeContext& c) {
  bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
  c.set_output(0, scan_along_named_axis(c, [&](size_t axis) {
                 return cum_prod_along(c, c.input(0), axis, exclusive, reverse);
               }));
}

// ---- ReverseSequence ----

// Each batch row b reads time position len[b] - 1 - t for t < len[b] and t itself after,
// a gather_nd with the batch as its batch dim (the axes moved to [batch, time, ...] first).
void import_reverse_sequence(NodeContext& c) {
  int64_t r = c.rank(0);
  if (r < 2) c.invalid("input must have rank >= 2, got ", r);
  int64_t batch_axis = c.attr_int("batch_axis", 1), time_axis = c.attr_int("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    c.invalid("batch_axis and time_axis must be 0 and 1 in some order, got ", batch_axis, " and ", time_axis);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < r; ++i) perm.push_back(i < 2 ? 1 - i : i);  // its own inverse
  ValueId x = c.input(0);
  if (batch_axis == 1) x = c.op("permute", {x}, {{"dims", perm}});
  const Dim b = c.type_of(x).dims[0], t = c.type_of(x).dims[1];
  ValueId len = c.reshape(c.cast(c.input(1), DType::kInt64), {b, Dim(1)});
  ValueId pos = c.reshape(arange(c, t), {Dim(1), t});
  ValueId mirrored = c.op("sub", {c.op("sub", {len, c.scalar(DType::kInt64, 1)}), pos});
  ValueId src = c.op("where", {c.op("less", {pos, len}), mirrored, pos});
  ValueId y = c.op("gather_nd", {x, c.reshape(src, {b, t, Dim(1)})}, {{"batch_dims", int64_t{1}}});
  if (batch_axis == 1) y = c.op("permute", {y}, {{"dims", perm}});
  c.set_output(0, y);
}

// ---- MaxUnpool ----

// As ONNX's reference: the indices address the flattened unpooled shape
// ((in - 1) * stride - pads + kernel per spatial axis); an output_shape larger than that
// adds zeros at the end of each spatial axis.
std::vector<Dim> unpooled_dims(NodeContext& c) {
  int64_t r = c.rank(0);
  if (r < 3) c.invalid("X must have rank >= 3 [N, C, spatial...], got ", r);
  size_t spatial = static_cast<size_t>(r - 2);
  std::optional<std::vector<int64_t>> kernel = c.attr_ints("kernel_shape");
  if (!kernel || kernel->size() != spatial) c.invalid("kernel_shape must have ", spatial, " entries");
  std::vector<int64_t> strides = c.attr_ints("strides").value_or(std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = c.attr_ints("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  if (strides.size() != spatial || pads.size() != 2 * spatial)
    c.invalid("strides must have ", spatial, " entries and pads ", 2 * spatial);
  check_values_in(c, "attribute 'kernel_shape'", *kernel, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'strides'", strides, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'pads'", pads, 0, kMaxWindowValue);
  std::vector<Dim> dims = c.type(0).dims;
  for (size_t i = 0; i < spatial; ++i) {
    Dim& d = dims[i + 2];
    d = (d - 1) * strides[i] - (pads[i] + pads[i + spatial]) + (*kernel)[i];
  }
  return dims;
}

void import_max_unpool(NodeContext& c) {
  std::vector<Dim> dims = unpooled_dims(c);
  if (c.type(1).dims != c.type(0).dims)
    c.invalid("I ", dims_to_string(c.type(1).dims), " must have the shape of X ", dims_to_string(c.type(0).dims));
  Dim total(1), count(1);
  for (const Dim& d : dims) total = total * d;
  for (const Dim& d : c.type(0).dims) count = count * d;
  DType dt = c.dtype(0);
  ValueId zeros = c.op("broadcast_to", {c.scalar(dt, 0)}, {{"shape", std::vector<Dim>{total}}});
  ValueId flat = c.op("scatter", {zeros, c.reshape(c.input(0), {count}), c.reshape(c.input(1), {count})},
                      {{"axis", int64_t{0}}});
  ValueId y = c.reshape(flat, dims);
  if (c.has_input(2)) {
    std::vector<Dim> want = c.known_dims(2, "output_shape");
    if (want.size() != dims.size()) c.invalid("output_shape must have ", dims.size(), " entries, got ", want.size());
    std::vector<int64_t> paddings(2 * dims.size(), 0);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (want[i] == dims[i]) continue;
      int64_t extra = static_dim(c, want[i] - dims[i], "output_shape's excess over the unpooled shape");
      if (extra < 0 || i < 2)
        c.invalid("output_shape ", dims_to_string(want), " must cover the unpooled shape ", dims_to_string(dims),
                  " and keep N and C");
      paddings[2 * i + 1] = extra;
    }
    y = c.op("pad", {y}, {{"paddings", paddings}});
  }
  c.set_output(0, y);
}

// ---- TensorScatter ----

// update[b, ..., s, ...] lands at cache position write_indices[b] + s along `axis`
// (modulo the cache length when circular): a scatter, whose in-order writes make the
// later of two updates meeting in a circular cache win, as ONNX's loop does.
void import_tensor_scatter(NodeContext& c) {
  size_t r = static_cast<size_t>(c.rank(0));
  size_t axis = static_cast<size_t>(c.axis(c.attr_int("axis", -2), static_cast<int64_t>(r)));
  if (axis == 0) c.invalid("axis must not be 0, the batch axis");
  std::string mode = c.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular") c.invalid("mode \"", mode, "\" is not linear or circular");
  const std::vector<Dim>& cache = c.type(0).dims;
  std::vector<Dim> upd = c.type(1).dims;
  if (upd.size() != r) c.invalid("update must have the rank ", r, " of past_cache");
  ValueId idx = along_axis(c, arange(c, upd[axis]), upd[axis], axis, r);
  if (c.has_input(2)) {
    ValueId start = along_axis(c, c.cast(c.input(2), DType::kInt64), cache[0], 0, r);
    idx = c.op("add", {idx, start});
  }
  if (mode == "circular") {
    ValueId len = c.constant(KnownValue::from_dims(DType::kInt64, {}, {cache[axis]}));
    idx = c.op("mod", {idx, len});
  }
  idx = c.op("broadcast_to", {idx}, {{"shape", upd}});
  c.set_output(0, c.op("scatter", {c.input(0), c.input(1), idx}, {{"axis", static_cast<int64_t>(axis)}}));
}

}  // namespace

void register_scan_scatter_importers(ImportTable& t) {
  t["CumProd"] = import_cum_prod;
  t["ReverseSequence"] = import_reverse_sequence;
  t["MaxUnpool"] = import_max_unpool;
  t["TensorScatter"] = import_tensor_scatter;
}

}  // namespace maxc::onnx

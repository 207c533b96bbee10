// Neural-network operators: Conv, pooling, normalizations, Softmax. ONNX is NCHW; our conv2d
// takes NCHW with an FCRS filter directly, while our pools are NHWC, so pools are wrapped in
// two permutes. 1-D convolutions and pools run as 2-D ones over a unit height, 3-D pools as
// two 2-D ones (pool_3d), 3-D convolutions as conv3d.h composes them. MaxPool's Indices
// output has no kernel of its own: an argmax over each window's taps, gathered through a
// constant table (max_pool_indices).
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "onnx/conv3d.h"
#include "onnx/node_context.h"
#include "onnx/order_key.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

// ---- spatial attributes shared by Conv and the pools ----

struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pads;  // [h_begin, w_begin, h_end, w_end] as ONNX orders them
};

// auto_pad SAME_* needs the static spatial dims: out = ceil(in / stride).
void same_pads(NodeContext& c, Window& w, const std::vector<Dim>& spatial, bool upper) {
  size_t n = w.kernel.size();
  w.pads.assign(2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!spatial[i].is_static()) c.unsupported("auto_pad SAME needs static spatial dims");
    int64_t in = spatial[i].static_value();
    int64_t out = (in + w.strides[i] - 1) / w.strides[i];
    int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - in);
    int64_t small = total / 2, big = total - small;
    w.pads[i] = upper ? small : big;
    w.pads[i + n] = upper ? big : small;
  }
}

// The node's window over `spatial`, every attribute checked before anything reads it: one
// entry per spatial dim (two for pads), kernels, strides and dilations positive, pads not
// negative, all within kMaxWindowValue.
Window window(NodeContext& c, std::vector<int64_t> kernel, const std::vector<Dim>& spatial) {
  size_t n = spatial.size();
  if (kernel.size() != n) c.invalid("the kernel has ", kernel.size(), " dims; the input has ", n, " spatial dims");
  Window w;
  w.kernel = std::move(kernel);
  w.strides = c.attr_ints("strides").value_or(std::vector<int64_t>(n, 1));
  w.dilations = c.attr_ints("dilations").value_or(std::vector<int64_t>(n, 1));
  w.pads = c.attr_ints("pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (w.strides.size() != n || w.dilations.size() != n || w.pads.size() != 2 * n)
    c.invalid("strides (", w.strides.size(), " entries), dilations (", w.dilations.size(), ") and pads (",
              w.pads.size(), ") must match the ", n, " spatial dims");
  check_values_in(c, "the kernel shape", w.kernel, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'strides'", w.strides, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'dilations'", w.dilations, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'pads'", w.pads, 0, kMaxWindowValue);
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") w.pads.assign(2 * n, 0);
  else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") same_pads(c, w, spatial, auto_pad == "SAME_UPPER");
  else if (auto_pad != "NOTSET") c.invalid("auto_pad \"", auto_pad, "\"");
  return w;
}

// A 1-D window as a 2-D one over a unit height.
void widen_to_2d(Window& w) {
  w.kernel.insert(w.kernel.begin(), 1);
  w.strides.insert(w.strides.begin(), 1);
  w.dilations.insert(w.dilations.begin(), 1);
  w.pads = {0, w.pads[0], 0, w.pads[1]};
}

std::vector<Dim> spatial_of(const TensorType& t) { return {t.dims.begin() + 2, t.dims.end()}; }

ValueId insert_unit_height(NodeContext& c, ValueId x) {
  std::vector<Dim> d = c.type_of(x).dims;
  d.insert(d.begin() + 2, Dim(1));
  return c.reshape(x, d);
}

ValueId drop_unit_height(NodeContext& c, ValueId y) {
  std::vector<Dim> d = c.type_of(y).dims;
  d.erase(d.begin() + 2);
  return c.reshape(y, d);
}

// ---- Conv ----

void import_conv(NodeContext& c) {
  std::optional<ValueId> bias;
  if (c.has_input(2)) bias = c.input(2);
  c.set_output(0, conv_from_attrs(c, c.input(0), c.input(1), bias));
}

// ---- MaxPool, AveragePool, global pools ----

ValueId to_nhwc(NodeContext& c, ValueId x) { return c.op("permute", {x}, {{"dims", std::vector<int64_t>{0, 2, 3, 1}}}); }
ValueId to_nchw(NodeContext& c, ValueId x) { return c.op("permute", {x}, {{"dims", std::vector<int64_t>{0, 3, 1, 2}}}); }

// ONNX's ceil mode drops a last window that would start in the end padding; ours does not.
// The right count lies between floor and ceil, so ceil_mode is kept only where it still adds
// a window after that rule (static dims; symbolic ones keep plain ceil).
bool ceil_adds_windows(NodeContext& c, ValueId x, const Window& w) {
  const std::vector<Dim>& d = c.type_of(x).dims;
  for (size_t i = 0; i < 2; ++i) {
    if (!d[2 + i].is_static()) return true;
    int64_t in = d[2 + i].static_value(), pads = w.pads[i] + w.pads[i + 2];
    int64_t span = in + pads - ((w.kernel[i] - 1) * w.dilations[i] + 1);
    int64_t floor_out = span / w.strides[i] + 1, ceil_out = (span + w.strides[i] - 1) / w.strides[i] + 1;
    if ((ceil_out - 1) * w.strides[i] >= in + w.pads[i]) --ceil_out;
    if (ceil_out > floor_out) return true;
  }
  return false;
}

ValueId pad_spatial(NodeContext& c, ValueId x, const Window& w, double fill) {
  std::vector<int64_t> p = {0, 0, 0, 0, w.pads[0], w.pads[2], w.pads[1], w.pads[3]};
  return c.op("pad", {x}, {{"paddings", p}, {"value", fill}});
}

// The max pool's fill for uneven padding: no value of the dtype is below it.
double lowest(DType dt) {
  if (dtype_is_float(dt)) return -std::numeric_limits<double>::infinity();
  if (dtype_is_unsigned_integral(dt)) return 0;
  return -std::ldexp(1.0, dtype_size_in_bits(dt) - 1);
}

// One of our 2-D pools over an NCHW x, with a 2-D window. `count_pad`: an average divides
// by the whole window, padding included, rather than by the elements it covers.
ValueId pool_2d(NodeContext& c, ValueId x, Window w, bool is_max, bool count_pad) {
  bool ceil_mode = c.attr_int("ceil_mode", 0) != 0 && ceil_adds_windows(c, x, w);
  Attrs attrs{{"kernel_size", w.kernel}, {"stride", w.strides}, {"dilation", w.dilations}, {"ceil_mode", ceil_mode}};
  auto pool = [&](ValueId v, std::vector<int64_t> padding, bool count_boundary) {
    attrs.set("padding", std::move(padding));
    if (!is_max) attrs.set("count_boundary", count_boundary);
    return to_nchw(c, c.op(is_max ? "max_pool2d" : "avg_pool2d", {to_nhwc(c, v)}, attrs));
  };
  if (w.pads[0] == w.pads[2] && w.pads[1] == w.pads[3]) return pool(x, {w.pads[0], w.pads[1]}, count_pad);
  // Our pools pad both sides equally; uneven pads are added explicitly first. An average that
  // must not count them divides the padded sums by the share of each window that is input:
  // the same pool over ones padded with zeros.
  if (is_max) return pool(pad_spatial(c, x, w, lowest(c.type_of(x).dtype)), {0, 0}, false);
  const ValueId sums = pool(pad_spatial(c, x, w, 0.0), {0, 0}, true);
  if (count_pad) return sums;
  const ValueId ones = c.op("broadcast_to", {c.scalar(c.type_of(x).dtype, 1)}, {{"shape", c.type_of(x).dims}});
  return c.op("div", {sums, pool(pad_spatial(c, ones, w, 0.0), {0, 0}, true)});
}

using Pool2d = std::function<ValueId(ValueId x, const Window& w)>;

// 3-D pooling of [N, C, D, H, W] as two 2-D ones: over (H, W) with D folded into the
// channels, then over D with H and W folded into one axis. Max, average and sum pooling are
// all separable: the window is a box, so its maximum is the maximum over D of the maxima over
// (H, W), its sum the sum of sums, and its average the average of averages, the divisors
// (counting the padding or not) being the product of the per-axis counts.
ValueId pool_3d(NodeContext& c, ValueId x, const Window& w, const Pool2d& pool) {
  const std::vector<Dim> d = c.type_of(x).dims;
  const Window hw{{w.kernel[1], w.kernel[2]},
                  {w.strides[1], w.strides[2]},
                  {w.dilations[1], w.dilations[2]},
                  {w.pads[1], w.pads[2], w.pads[4], w.pads[5]}};
  const Window dw{{w.kernel[0], 1}, {w.strides[0], 1}, {w.dilations[0], 1}, {w.pads[0], 0, w.pads[3], 0}};
  ValueId y = pool(c.reshape(x, {d[0], d[1] * d[2], d[3], d[4]}), hw);
  const std::vector<Dim> e = c.type_of(y).dims;  // [N, C*D, H', W']
  y = pool(c.reshape(y, {d[0], d[1], d[2], e[2] * e[3]}), dw);
  return c.reshape(y, {d[0], d[1], c.type_of(y).dims[2], e[2], e[3]});
}

// `pool` over the node's 1-D, 2-D or 3-D window of x (rank 3, 4 or 5).
ValueId pool_nd(NodeContext& c, ValueId x, const Pool2d& pool) {
  const int64_t r = c.type_of(x).rank();
  if (r < 3 || r > 5) c.unsupported("only 1-D, 2-D and 3-D pooling (input rank 3 to 5), got rank ", r);
  auto kernel = c.attr_ints("kernel_shape");
  if (!kernel) c.invalid("attribute 'kernel_shape' is required");
  Window w = window(c, *kernel, spatial_of(c.type_of(x)));
  if (r == 5) return pool_3d(c, x, w, pool);
  if (r == 4) return pool(x, w);
  widen_to_2d(w);
  return drop_unit_height(c, pool(insert_unit_height(c, x), w));
}

// ---- MaxPool's Indices ----

// The most elements of the window table built for Indices (windows x taps).
constexpr int64_t kMaxWindowTable = int64_t{1} << 24;

int64_t static_extent(NodeContext& c, const Dim& d, std::string_view what) {
  if (!d.is_static()) c.unsupported("the Indices output needs static ", what, " dims, got ", d);
  return d.static_value();
}

// Steps the multi-index `at` to the next element of `dims` in row-major order.
void advance(std::vector<int64_t>& at, const std::vector<int64_t>& dims) {
  for (size_t j = at.size(); j-- > 0 && ++at[j] == dims[j];) at[j] = 0;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Every window's taps as positions in the flattened spatial input, [windows, taps] in the
// reference's scan order: `read` row-major (to gather them), `report` in the storage order
// Indices is asked in. A tap in the padding repeats the window's first tap inside: it can
// only tie with that tap, and argmax keeps the first maximum, so it never changes the answer
// (nor needs a fill value below every element of the dtype).
struct WindowTable {
  std::vector<double> read, report;
  int64_t windows = 0, taps = 0;
};

using TapAt = std::optional<std::pair<int64_t, int64_t>>;  // (row-major, column-major); none in padding

// The taps of the window at output position `o`.
std::vector<TapAt> window_taps(const Window& w, const std::vector<int64_t>& in, const std::vector<int64_t>& o) {
  const size_t r = in.size();
  std::vector<int64_t> row_step(r, 1), col_step(r, 1), k(r, 0);
  for (size_t a = r - 1; a-- > 0;) row_step[a] = row_step[a + 1] * in[a + 1];
  for (size_t a = 1; a < r; ++a) col_step[a] = col_step[a - 1] * in[a - 1];
  std::vector<TapAt> taps;
  for (int64_t j = 0; j < product(w.kernel); ++j, advance(k, w.kernel)) {
    int64_t row = 0, col = 0;
    bool inside = true;
    for (size_t a = 0; a < r; ++a) {
      const int64_t pos = o[a] * w.strides[a] - w.pads[a] + k[a] * w.dilations[a];
      inside = inside && pos >= 0 && pos < in[a];
      row += pos * row_step[a], col += pos * col_step[a];
    }
    taps.push_back(inside ? TapAt(std::pair(row, col)) : std::nullopt);
  }
  return taps;
}

WindowTable window_table(const Window& w, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                         bool column_major) {
  WindowTable t{{}, {}, product(out), product(w.kernel)};
  std::vector<int64_t> o(in.size(), 0);
  for (int64_t p = 0; p < t.windows; ++p, advance(o, out)) {
    const std::vector<TapAt> taps = window_taps(w, in, o);
    TapAt first;
    for (const TapAt& tap : taps)
      if (tap && !first) first = tap;
    for (const TapAt& tap : taps) {
      const std::pair<int64_t, int64_t> at = tap.value_or(first.value_or(std::pair<int64_t, int64_t>(0, 0)));
      t.read.push_back(static_cast<double>(at.first));
      t.report.push_back(static_cast<double>(column_major ? at.second : at.first));
    }
  }
  return t;
}

// Indices: each window's taps gathered from x as [N*C, windows, taps], the first maximum
// picked by argmax and mapped back through the table to its input position, then offset by
// the (n, c) plane's start, as ONNX flattens the whole input.
ValueId max_pool_indices(NodeContext& c, ValueId x, const std::vector<Dim>& y_dims) {
  const int64_t order = c.attr_int("storage_order", 0);
  if (order != 0 && order != 1) c.invalid("storage_order must be 0 or 1, got ", order);
  const std::vector<Dim> xd = c.type_of(x).dims;
  std::vector<int64_t> in, out;
  for (size_t a = 2; a < xd.size(); ++a) {
    in.push_back(static_extent(c, xd[a], "spatial input"));
    out.push_back(static_extent(c, y_dims[a], "spatial output"));
  }
  const Window w = window(c, *c.attr_ints("kernel_shape"), spatial_of(c.type_of(x)));
  std::vector<int64_t> table_dims = out;
  table_dims.insert(table_dims.end(), w.kernel.begin(), w.kernel.end());
  bounded_elements(c, table_dims, "the Indices output's window table (windows x taps)", kMaxWindowTable);
  const WindowTable t = window_table(w, in, out, order == 1);
  auto table = [&](const std::vector<double>& v, std::vector<int64_t> shape) {
    return c.constant(KnownValue::from_doubles(DType::kInt64, std::move(shape), v));
  };
  const Dim planes = xd[0] * xd[1];
  const ValueId flat = c.reshape(order_key(c, x), {planes, Dim(product(in))});
  const ValueId taps = c.op("gather", {flat, table(t.read, {t.windows, t.taps})}, {{"axis", int64_t{1}}});
  ValueId at = c.op("argmax", {taps}, {{"axis", int64_t{2}}});  // [N*C, windows, 1]
  std::vector<double> row_start;
  for (int64_t p = 0; p < t.windows; ++p) row_start.push_back(static_cast<double>(p * t.taps));
  at = c.op("add", {at, table(row_start, {t.windows, 1})});
  const ValueId pos = c.op("gather", {table(t.report, {t.windows * t.taps}), at}, {{"axis", int64_t{0}}});
  const ValueId plane_start = c.op("mul", {c.reshape(arange(c, planes), {planes, Dim(1), Dim(1)}),
                                           c.scalar(DType::kInt64, static_cast<double>(product(in)))});
  return c.reshape(c.op("add", {pos, plane_start}), y_dims);
}

void import_pool(NodeContext& c, bool is_max) {
  const bool count_pad = c.attr_int("count_include_pad", 0) != 0;
  const ValueId y =
      pool_nd(c, c.input(0), [&](ValueId x, const Window& w) { return pool_2d(c, x, w, is_max, count_pad); });
  c.set_output(0, y);
  if (is_max && c.wants_output(1)) c.set_output(1, max_pool_indices(c, c.input(0), c.type_of(y).dims));
}

void import_global_pool(NodeContext& c, const char* op) {
  ValueId x = c.input(0);
  for (int64_t a = 2; a < c.rank(0); ++a) x = c.op(op, {x}, {{"axis", a}});
  c.set_output(0, x);
}

// LpPool: (sum of |x|^p over each window)^(1/p). The window sums are an average pool over
// zero-padded input that counts the padding, times the window size: the zeros add nothing to
// a sum, and every window holds the full kernel.
ValueId window_sums(NodeContext& c, ValueId x, const Window& w) {
  if (c.attr_int("ceil_mode", 0) != 0 && ceil_adds_windows(c, x, w))
    c.unsupported("ceil_mode = 1 where it adds a partial window");
  const ValueId avg = pool_2d(c, x, w, /*is_max=*/false, /*count_pad=*/true);
  return c.op("mul", {avg, c.scalar(c.type_of(x).dtype, static_cast<double>(w.kernel[0] * w.kernel[1]))});
}

void import_lp_pool(NodeContext& c) {
  int64_t p = c.attr_int("p", 2);
  if (p < 1) c.invalid("p must be >= 1, got ", p);
  const DType dt = c.type(0).dtype;
  ValueId powered = p == 2 ? c.op("mul", {c.input(0), c.input(0)}) : c.op("abs", {c.input(0)});
  if (p > 2) powered = c.op("pow", {powered, c.scalar(dt, static_cast<double>(p))});
  ValueId sums = pool_nd(c, powered, [&](ValueId x, const Window& w) { return window_sums(c, x, w); });
  if (p == 2) sums = c.op("sqrt", {sums});
  else if (p > 2) sums = c.op("pow", {sums, c.scalar(dt, 1.0 / static_cast<double>(p))});
  c.set_output(0, sums);
}

// ---- normalizations ----

// A per-channel vector [C] shaped to broadcast against an N, C, ... input of rank r.
ValueId per_channel(NodeContext& c, ValueId v, int64_t r) {
  std::vector<Dim> d = c.type_of(v).dims;
  for (int64_t i = 2; i < r; ++i) d.push_back(1);
  return c.reshape(v, d);
}

// y = x * a + b with a = scale / sqrt(var + eps) and b = bias - mean * a, computed here (in
// double) when the four parameters are initializers, as an inference model's are: the
// compiler then sees constants, folds them into the convolution before (a scaled filter and
// a bias, engine/lower/conv.cc), and no parameter is bound as a weight. Nothing when one is
// computed at run time or the type is not float32/64.
std::optional<std::pair<ValueId, ValueId>> known_batch_norm_affine(NodeContext& c, DType dt, int64_t r) {
  if (dt != DType::kFloat32 && dt != DType::kFloat64) return std::nullopt;
  std::vector<std::vector<double>> p;
  for (size_t i = 1; i <= 4; ++i) {
    const KnownValue* k = c.known(i);
    std::optional<std::vector<double>> v = k && k->shape.size() == 1 ? k->doubles() : std::nullopt;
    if (!v || (!p.empty() && v->size() != p[0].size())) return std::nullopt;
    p.push_back(std::move(*v));
  }
  const double eps = c.attr_float("epsilon", 1e-5f);
  std::vector<double> a(p[0].size()), b(p[0].size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = p[0][i] / std::sqrt(p[3][i] + eps);
    b[i] = p[1][i] - p[2][i] * a[i];
  }
  std::vector<int64_t> shape{static_cast<int64_t>(a.size())};
  for (int64_t i = 2; i < r; ++i) shape.push_back(1);
  return std::pair{c.constant(KnownValue::from_doubles(dt, shape, a)), c.constant(KnownValue::from_doubles(dt, shape, b))};
}

// training_mode = 1: y normalized by the batch's own mean and (population) variance over
// every axis but 1, and the running statistics updated as
// running = input * momentum + batch * (1 - momentum), all in x's type.
void import_batch_norm_training(NodeContext& c) {
  const int64_t r = c.rank(0);
  if (r < 2) c.invalid("training needs X of rank >= 2, got rank ", r);
  const ValueId x = c.input(0);
  const DType dt = c.type_of(x).dtype;
  if (!dtype_is_float(dt)) c.invalid("BatchNormalization of ", dtype_name(dt));
  auto mean_over = [&](ValueId v) {  // over axes 0, 2, 3, ... with dims kept: [1, C, 1, ...]
    for (int64_t a = 0; a < r; ++a)
      if (a != 1) v = c.op("mean", {v}, {{"axis", a}});
    return v;
  };
  const ValueId mean = mean_over(x);
  const ValueId centered = c.op("sub", {x, mean});
  const ValueId var = mean_over(c.op("mul", {centered, centered}));
  const ValueId inv = c.op("rsqrt", {c.op("add", {var, c.scalar(dt, c.attr_float("epsilon", 1e-5f))})});
  ValueId y = c.op("mul", {c.op("mul", {centered, inv}), per_channel(c, c.cast(c.input(1), dt), r)});
  c.set_output(0, c.op("add", {y, per_channel(c, c.cast(c.input(2), dt), r)}));
  const double momentum = c.attr_float("momentum", 0.9f);
  const Dim channels = c.type(0).dims[1];
  auto running = [&](size_t input, ValueId batch) {
    const ValueId old = c.op("mul", {c.cast(c.input(input), dt), c.scalar(dt, momentum)});
    return c.op("add", {old, c.op("mul", {c.reshape(batch, {channels}), c.scalar(dt, 1 - momentum)})});
  };
  if (c.wants_output(1)) c.set_output(1, running(3, mean));
  if (c.wants_output(2)) c.set_output(2, running(4, var));
}

void import_batch_norm(NodeContext& c) {
  // Opset 7 and 8 could normalize per activation instead of per channel.
  if (c.opset() < 9 && c.attr_int("spatial", 1) != 1) c.unsupported("spatial = 0 (statistics per activation)");
  if (c.attr_int("training_mode", 0) != 0) return import_batch_norm_training(c);
  if (c.wants_output(1) || c.wants_output(2)) c.unsupported("the running mean/variance outputs (training)");
  int64_t r = c.rank(0);
  ValueId x = c.input(0);
  DType dt = c.type_of(x).dtype;
  if (std::optional<std::pair<ValueId, ValueId>> ab = known_batch_norm_affine(c, dt, r)) {
    c.set_output(0, c.op("add", {c.op("mul", {x, ab->first}), ab->second}));
    return;
  }
  auto param = [&](size_t i) { return per_channel(c, c.cast(c.input(i), dt), r); };
  ValueId scale = param(1), bias = param(2), mean = param(3), var = param(4);
  ValueId eps = c.scalar(dt, c.attr_float("epsilon", 1e-5f));
  ValueId inv = c.op("rsqrt", {c.op("add", {var, eps})});
  ValueId a = c.op("mul", {scale, inv});
  ValueId b = c.op("sub", {bias, c.op("mul", {mean, a})});
  c.set_output(0, c.op("add", {c.op("mul", {x, a}), b}));
}

// (x - mean) / sqrt(var + eps) over `axes`, with the mean and variance kept for broadcasting.
ValueId normalize(NodeContext& c, ValueId x, const std::vector<int64_t>& axes, double eps) {
  auto mean_over = [&](ValueId v) {
    for (int64_t a : axes) v = c.op("mean", {v}, {{"axis", a}});
    return v;
  };
  ValueId centered = c.op("sub", {x, mean_over(x)});
  ValueId var = mean_over(c.op("mul", {centered, centered}));
  ValueId e = c.scalar(c.type_of(x).dtype, eps);
  return c.op("mul", {centered, c.op("rsqrt", {c.op("add", {var, e})})});
}

void import_instance_norm(NodeContext& c) {
  int64_t r = c.rank(0);
  std::vector<int64_t> axes;
  for (int64_t a = 2; a < r; ++a) axes.push_back(a);
  ValueId y = normalize(c, c.input(0), axes, c.attr_float("epsilon", 1e-5f));
  y = c.op("mul", {y, per_channel(c, c.input(1), r)});
  c.set_output(0, c.op("add", {y, per_channel(c, c.input(2), r)}));
}

void import_mvn(NodeContext& c) {
  std::vector<int64_t> axes = c.attr_ints("axes").value_or(std::vector<int64_t>{0, 2, 3});
  for (int64_t& a : axes) a = c.axis(a, c.rank(0));
  c.set_output(0, normalize(c, c.input(0), axes, 1e-9));
}

// LayerNormalization over the axes from `axis` on: our layer_norm normalizes the last axis,
// so trailing axes are merged into one first (and Scale/B with them).
// With the Mean and InvStdDev outputs asked for, the normalization is composed from
// reductions so they can be returned (kept dims, as ONNX gives them).
void import_layer_norm_with_stats(NodeContext& c, int64_t axis, double eps) {
  ValueId x = c.input(0);
  DType dt = c.type_of(x).dtype;
  ValueId mean = x;
  for (int64_t a = axis; a < c.rank(0); ++a) mean = c.op("mean", {mean}, {{"axis", a}});
  ValueId centered = c.op("sub", {x, mean});
  ValueId var = c.op("mul", {centered, centered});
  for (int64_t a = axis; a < c.rank(0); ++a) var = c.op("mean", {var}, {{"axis", a}});
  ValueId inv = c.op("rsqrt", {c.op("add", {var, c.scalar(dt, eps)})});
  ValueId y = c.op("mul", {c.op("mul", {centered, inv}), c.cast(c.input(1), dt)});
  if (c.has_input(2)) y = c.op("add", {y, c.cast(c.input(2), dt)});
  c.set_output(0, y);
  c.set_output(1, mean);
  c.set_output(2, inv);
}

void import_layer_norm(NodeContext& c) {
  if (c.wants_output(1) || c.wants_output(2))
    return import_layer_norm_with_stats(c, c.axis(c.attr_int("axis", -1), c.rank(0)), c.attr_float("epsilon", 1e-5f));
  const std::vector<Dim>& in = c.type(0).dims;
  int64_t r = static_cast<int64_t>(in.size());
  int64_t axis = c.axis(c.attr_int("axis", -1), r);
  double eps = c.attr_float("epsilon", 1e-5f);
  ValueId x = c.input(0);
  DType dt = c.type_of(x).dtype;
  std::vector<Dim> merged(in.begin(), in.begin() + axis);
  Dim inner = dims_product({in.begin() + axis, in.end()});
  merged.push_back(inner);
  auto param = [&](ValueId v) {
    v = c.cast(v, dt);
    const std::vector<Dim>& pd = c.type_of(v).dims;
    std::vector<Dim> trailing(in.begin() + axis, in.end());
    if (pd.size() > trailing.size() ||
        !std::equal(pd.begin(), pd.end(), trailing.end() - static_cast<std::ptrdiff_t>(pd.size())))
      v = c.op("broadcast_to", {v}, {{"shape", trailing}});
    return c.reshape(v, {inner});
  };
  ValueId gamma = param(c.input(1));
  ValueId beta;
  if (c.has_input(2)) {
    beta = param(c.input(2));
  } else {
    ValueId zero = c.scalar(dt, 0);
    beta = c.op("broadcast_to", {zero}, {{"shape", std::vector<Dim>{inner}}});
  }
  ValueId y = c.op("layer_norm", {c.reshape(x, merged), gamma, beta}, {{"epsilon", eps}});
  c.set_output(0, c.reshape(y, in));
}

// RMSNormalization (opset 23) over the axes from `axis` on, merged into one like LayerNorm.
void import_rms_norm(NodeContext& c) {
  const std::vector<Dim>& in = c.type(0).dims;
  int64_t r = static_cast<int64_t>(in.size());
  int64_t axis = c.axis(c.attr_int("axis", -1), r);
  ValueId x = c.input(0);
  DType dt = c.type_of(x).dtype;
  std::vector<Dim> trailing(in.begin() + axis, in.end());
  std::vector<Dim> merged(in.begin(), in.begin() + axis);
  Dim inner = dims_product(trailing);
  merged.push_back(inner);
  ValueId scale = c.cast(c.input(1), dt);
  if (c.type_of(scale).dims != trailing) scale = c.op("broadcast_to", {scale}, {{"shape", trailing}});
  ValueId y = c.op("rms_norm", {c.reshape(x, merged), c.reshape(scale, {inner})},
                   {{"epsilon", static_cast<double>(c.attr_float("epsilon", 1e-5f))}});
  c.set_output(0, c.reshape(y, in));
}

// Before opset 13, Softmax, LogSoftmax and Hardmax saw their input as a matrix: the dims
// before `axis` (default 1) flattened into rows, those from it on into one row of values.
// `along_last` applies the opset-13 form along the last axis of that matrix.
template <typename Fn>
void import_as_matrix(NodeContext& c, Fn along_last) {
  const std::vector<Dim> dims = c.type(0).dims;
  const auto r = static_cast<int64_t>(dims.size());
  const int64_t axis = c.axis(c.attr_int("axis", 1), r);
  if (axis == r - 1) return c.set_output(0, along_last(c.input(0), axis));
  const Dim rows = dims_product({dims.begin(), dims.begin() + axis});
  const Dim row = dims_product({dims.begin() + axis, dims.end()});
  c.set_output(0, c.reshape(along_last(c.reshape(c.input(0), {rows, row}), 1), dims));
}

// Hardmax: 1 where the (first) maximum along the axis is, else 0.
ValueId hardmax(NodeContext& c, ValueId x, int64_t axis) {
  const TensorType t = c.type_of(x);
  const int64_t r = t.rank();
  axis = c.axis(axis, r);
  const Dim& d = t.dims[static_cast<size_t>(axis)];
  if (!d.is_static()) c.unsupported("needs a static dim along the axis");
  ValueId idx = c.op("argmax", {x}, {{"axis", axis}});
  std::vector<int64_t> shape(static_cast<size_t>(r), 1);
  shape[static_cast<size_t>(axis)] = d.static_value();
  std::vector<double> seq(static_cast<size_t>(bounded_elements(c, {d.static_value()}, "the position range")));
  for (size_t i = 0; i < seq.size(); ++i) seq[i] = static_cast<double>(i);
  ValueId range = c.constant(KnownValue::from_doubles(DType::kInt64, shape, seq));
  return c.cast(c.op("equal", {idx, range}), t.dtype);
}

void import_hardmax(NodeContext& c) {
  auto along = [&](ValueId x, int64_t axis) { return hardmax(c, x, axis); };
  if (c.opset() < 13) return import_as_matrix(c, along);
  c.set_output(0, along(c.input(0), c.attr_int("axis", -1)));
}

void import_lp_norm(NodeContext& c) {
  ValueId x = c.input(0);
  int64_t axis = c.axis(c.attr_int("axis", -1), c.rank(0));
  int64_t p = c.attr_int("p", 2);
  ValueId norm;
  if (p == 1) norm = c.op("sum", {c.op("abs", {x})}, {{"axis", axis}});
  else if (p == 2) norm = c.op("sqrt", {c.op("sum", {c.op("mul", {x, x})}, {{"axis", axis}})});
  else c.invalid("p must be 1 or 2, got ", p);
  ValueId zero = c.scalar(c.type_of(x).dtype, 0);
  ValueId is_zero = c.op("equal", {norm, zero});
  ValueId safe = c.op("where", {is_zero, c.scalar(c.type_of(x).dtype, 1), norm});
  c.set_output(0, c.op("where", {is_zero, zero, c.op("div", {x, safe})}));  // 0 / 0 is 0 here
}

// X [N, C, spatial...] against W [F, C/group, kernel...]: the same rank, a group that divides
// both channel counts, checked before any dim of W is read.
void check_conv_channels(NodeContext& c, const std::vector<Dim>& xd, const std::vector<Dim>& wd) {
  if (wd.size() != xd.size()) c.invalid("W has rank ", wd.size(), " but X has rank ", xd.size());
  const int64_t group = c.attr_int("group", 1);
  if (group < 1) c.invalid("group must be positive, got ", group);
  if (wd[0].is_static() && wd[0].static_value() % group != 0)
    c.invalid("group ", group, " does not divide W's ", wd[0].static_value(), " filters");
  if (xd[1].is_static() && wd[1].is_static() && xd[1].static_value() != wd[1].static_value() * group)
    c.invalid("X has ", xd[1].static_value(), " channels but W takes ", wd[1].static_value(), " per group x ", group,
              " groups");
}

// ONNX orders the pads as all begins, then all ends.
Conv3dParams conv3d_params(NodeContext& c, const Window& w) {
  Conv3dParams p;
  p.groups = c.attr_int("group", 1);
  for (size_t i = 0; i < 3; ++i) {
    p.stride[i] = w.strides[i], p.dilation[i] = w.dilations[i];
    p.pad_begin[i] = w.pads[i], p.pad_end[i] = w.pads[i + 3];
  }
  return p;
}

}  // namespace

// A convolution of x by filter (both NCHW / FCRS) under the node's Conv attributes (auto_pad,
// dilations, group, kernel_shape, pads, strides), which ConvInteger and QLinearConv share.
ValueId conv_from_attrs(NodeContext& c, ValueId x, ValueId filter, std::optional<ValueId> bias) {
  int64_t r = c.type_of(x).rank();
  if (r < 3 || r > 5) c.unsupported("only 1-D, 2-D and 3-D convolutions (input rank 3 to 5), got rank ", r);
  const std::vector<Dim> wd = c.type_of(filter).dims;
  check_conv_channels(c, c.type_of(x).dims, wd);
  std::vector<int64_t> kernel;
  for (size_t i = 2; i < wd.size(); ++i) {
    if (!wd[i].is_static()) c.unsupported("the kernel dims must be static");
    kernel.push_back(wd[i].static_value());
  }
  if (auto k = c.attr_ints("kernel_shape"); k && *k != kernel) c.invalid("kernel_shape disagrees with the weight");
  Window w = window(c, kernel, spatial_of(c.type_of(x)));
  if (r == 5) return conv3d(c, x, filter, bias, conv3d_params(c, w));
  if (r == 3) {
    widen_to_2d(w);
    x = insert_unit_height(c, x);
    filter = insert_unit_height(c, filter);
  }
  std::vector<ValueId> ins = {x, filter};
  if (bias) ins.push_back(*bias);
  Attrs attrs{{"stride", w.strides},
              {"dilation", w.dilations},
              {"padding", std::vector<int64_t>{w.pads[0], w.pads[2], w.pads[1], w.pads[3]}},
              {"groups", c.attr_int("group", 1)},
              {"input_layout", std::string("NCHW")},
              {"filter_layout", std::string("FCRS")}};
  ValueId y = c.op("conv2d", ins, attrs);
  return r == 3 ? drop_unit_height(c, y) : y;
}

// Our softmax works in float32 inside and rounds once; ONNX computes it in the input's type,
// so for float16/bfloat16 it is composed step by step, each step rounded to the type as the
// reference does (a 2-ulp difference otherwise, more than the conformance tolerance).
ValueId softmax_in_type(NodeContext& c, ValueId x, int64_t axis) {
  if (!dtype_is_half(c.type_of(x).dtype)) return c.op("softmax", {x}, {{"axis", axis}});
  ValueId e = c.op("exp", {c.op("sub", {x, c.op("max", {x}, {{"axis", axis}})})});
  return c.op("div", {e, c.op("sum", {e}, {{"axis", axis}})});
}

namespace {

void import_softmax(NodeContext& c, const char* op) {
  auto along = [&](ValueId x, int64_t axis) {
    return std::string_view(op) == "softmax" ? softmax_in_type(c, x, axis) : c.op(op, {x}, {{"axis", axis}});
  };
  if (c.opset() < 13) return import_as_matrix(c, along);
  c.set_output(0, along(c.input(0), c.attr_int("axis", -1)));
}

}  // namespace

void register_nn_importers(ImportTable& t) {
  t["Conv"] = import_conv;
  t["MaxPool"] = [](NodeContext& c) { import_pool(c, true); };
  t["AveragePool"] = [](NodeContext& c) { import_pool(c, false); };
  t["GlobalAveragePool"] = [](NodeContext& c) { import_global_pool(c, "mean"); };
  t["GlobalMaxPool"] = [](NodeContext& c) { import_global_pool(c, "max"); };
  t["LpPool"] = import_lp_pool;
  t["BatchNormalization"] = import_batch_norm;
  t["InstanceNormalization"] = import_instance_norm;
  t["MeanVarianceNormalization"] = import_mvn;
  t["LayerNormalization"] = import_layer_norm;
  t["LpNormalization"] = import_lp_norm;
  t["RMSNormalization"] = import_rms_norm;
  t["Hardmax"] = import_hardmax;
  t["Softmax"] = [](NodeContext& c) { import_softmax(c, "softmax"); };
  t["LogSoftmax"] = [](NodeContext& c) { import_softmax(c, "logsoftmax"); };
}

}  // namespace maxc::onnx

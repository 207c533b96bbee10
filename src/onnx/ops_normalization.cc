// GroupNormalization and LRN (local response normalization), composed from reductions,
// slices and elementwise ops: we have no group-norm or LRN op of our own.
#include <cmath>

#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

// A per-channel vector [C] shaped to broadcast against an N, C, ... tensor of rank r.
ValueId channel_vector(NodeContext& c, ValueId v, int64_t r) {
  std::vector<Dim> d = c.type_of(v).dims;
  for (int64_t i = 2; i < r; ++i) d.push_back(Dim(1));
  return c.reshape(v, d);
}

// ---- GroupNormalization ----

// The type the statistics are computed in: opset 21's stash_type (float32 by default), so a
// float16 input is not normalized in float16.
DType stash_dtype(NodeContext& c, DType x) {
  if (c.opset() < 21 || c.attr_int("stash_type", 1) != 1) return x;
  return dtype_is_half(x) ? DType::kFloat32 : x;
}

// Opset 18 gives scale and bias per group, opset 21 per channel; a per-group parameter is
// repeated over its group's channels.
ValueId group_param(NodeContext& c, size_t i, int64_t groups, int64_t channels, DType dt) {
  ValueId v = c.cast(c.input(i), dt);
  Dim n = c.type_of(v).num_elements();
  if (c.type_of(v).rank() != 1) c.invalid("input ", i, " must be a vector");
  if (n == Dim(channels)) return v;
  if (n == Dim(groups) && c.opset() < 21)
    return c.op("repeat_interleave", {v}, {{"repeats", channels / groups}, {"axis", int64_t{0}}});
  c.invalid("input ", i, " has ", n, " entries; expected ", c.opset() < 21 ? groups : channels);
}

// x [N, C, ...] is viewed as [N, G, C/G * spatial], normalized over the last axis, and given
// the per-channel affine transform in the original shape.
void import_group_norm(NodeContext& c) {
  const std::vector<Dim>& in = c.type(0).dims;
  int64_t r = static_cast<int64_t>(in.size());
  if (r < 2) c.invalid("input must have rank >= 2, got ", r);
  if (!in[1].is_static()) c.unsupported("needs a static channel dim, got ", in[1]);
  int64_t channels = in[1].static_value(), groups = c.attr_int("num_groups", 0);
  if (groups <= 0 || channels % groups != 0)
    c.invalid("num_groups ", groups, " does not divide the ", channels, " channels");
  DType dt = c.dtype(0), work = stash_dtype(c, dt);
  Dim inner = Dim(channels / groups) * dims_product({in.begin() + 2, in.end()});
  ValueId x = c.reshape(c.cast(c.input(0), work), {in[0], Dim(groups), inner});
  ValueId mean = c.op("mean", {x}, {{"axis", int64_t{2}}});
  ValueId centered = c.op("sub", {x, mean});
  ValueId var = c.op("mean", {c.op("mul", {centered, centered})}, {{"axis", int64_t{2}}});
  ValueId eps = c.scalar(work, c.attr_float("epsilon", 1e-5f));
  ValueId y = c.reshape(c.op("mul", {centered, c.op("rsqrt", {c.op("add", {var, eps})})}), in);
  y = c.op("mul", {y, channel_vector(c, group_param(c, 1, groups, channels, work), r)});
  y = c.op("add", {y, channel_vector(c, group_param(c, 2, groups, channels, work), r)});
  c.set_output(0, c.cast(y, dt));
}

// ---- LRN ----

// y = x / (bias + alpha / size * s)^beta, with s the sum of x^2 over the `size` channels
// around each one (floor((size-1)/2) before, ceil((size-1)/2) after, clipped at the ends):
// the squares are zero-padded along the channels and `size` shifted slices are added.
void import_lrn(NodeContext& c) {
  const std::vector<Dim>& in = c.type(0).dims;
  int64_t r = static_cast<int64_t>(in.size());
  if (r < 3) c.invalid("input must have rank >= 3, got ", r);
  int64_t size = c.attr_int("size", 0);
  if (size < 1) c.invalid("attribute 'size' must be >= 1, got ", size);
  // One slice and add per element of the window: bounded like the windows of a pool.
  if (size > kMaxUnrolledWindow) c.exhausted("attribute 'size' is ", size, " (at most ", kMaxUnrolledWindow, ")");
  double alpha = c.attr_float("alpha", 1e-4f), beta = c.attr_float("beta", 0.75f), bias = c.attr_float("bias", 1.f);
  ValueId x = c.input(0);
  DType dt = c.type_of(x).dtype;
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<int64_t> paddings(static_cast<size_t>(2 * r), 0);
  paddings[2] = before;
  paddings[3] = after;
  ValueId sq = c.op("pad", {c.op("mul", {x, x})}, {{"paddings", paddings}, {"value", 0.0}});
  std::optional<ValueId> sum;
  for (int64_t k = 0; k < size; ++k) {
    std::vector<Dim> starts(in.size(), Dim(0)), stops = in;
    starts[1] = Dim(k);
    stops[1] = in[1] + Dim(k);
    ValueId part = c.op("slice_tensor", {sq}, {{"starts", starts}, {"stops", stops}});
    sum = sum ? c.op("add", {*sum, part}) : part;
  }
  ValueId base = c.op("add", {c.scalar(dt, bias), c.op("mul", {*sum, c.scalar(dt, alpha / static_cast<double>(size))})});
  c.set_output(0, c.op("div", {x, c.op("pow", {base, c.scalar(dt, beta)})}));
}

}  // namespace

void register_normalization_importers(ImportTable& t) {
  t["GroupNormalization"] = import_group_norm;
  t["LRN"] = import_lrn;
}

}  // namespace maxc::onnx

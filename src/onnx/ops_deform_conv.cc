// DeformConv (opset 19): a 2-D convolution whose every kernel tap reads the input at its own
// learned offset from the regular grid position, by bilinear interpolation (zero outside the
// input), optionally scaled by a mask. There is no deformable kernel, so it is composed as
// im2col: each tap's four neighbours are read with one gather_nd per (batch, offset group),
// weighed and summed into columns [N, G, C/G * kH * kW, oH * oW], and the columns are
// multiplied by the filter, group by group, in one batched matmul.
//
// The taps' positions are those of onnx/reference/ops/op_deform_conv.py: output (i, j) and
// kernel tap (a, b) read X at (i * stride_h - pad_top + a * dilation_h + offset_h,
// j * stride_w - pad_left + b * dilation_w + offset_w), with offset channels ordered
// [offset_group, kH, kW, (h, w)] and mask channels [offset_group, kH, kW].
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

// The sizes of one node, all static but the batch.
struct DeformShape {
  Dim batch;
  int64_t channels = 0, height = 0, width = 0;  // X
  int64_t out_channels = 0, kh = 0, kw = 0;     // W
  int64_t oh = 0, ow = 0;                       // offset's spatial dims: the output's
  int64_t group = 1, offset_group = 1;
  std::vector<int64_t> strides, dilations, pads;  // pads: top, left, bottom, right
  DType dtype = DType::kFloat32;                  // X's
  DType work = DType::kFloat32;                   // the positions': X's, at least float32

  int64_t taps() const { return kh * kw; }
  int64_t points() const { return oh * ow; }
};

int64_t static_dim(NodeContext& c, const Dim& d, std::string_view what) {
  if (!d.is_static()) c.unsupported(what, " is the symbolic dim ", d, "; it must be static");
  return d.static_value();
}

std::vector<int64_t> ints_attr(NodeContext& c, std::string_view name, size_t n, int64_t def) {
  std::vector<int64_t> v = c.attr_ints(name).value_or(std::vector<int64_t>(n, def));
  if (v.size() != n) c.invalid("attribute '", name, "' has ", v.size(), " entries; expected ", n);
  return v;
}

void read_sizes(NodeContext& c, DeformShape& s) {
  const std::vector<Dim> xd = c.type(0).dims, wd = c.type(1).dims, od = c.type(2).dims;
  s.batch = xd[0];
  s.channels = static_dim(c, xd[1], "X's channel dim");
  s.height = static_dim(c, xd[2], "X's height");
  s.width = static_dim(c, xd[3], "X's width");
  s.out_channels = static_dim(c, wd[0], "W's output-channel dim");
  s.kh = static_dim(c, wd[2], "W's kernel height");
  s.kw = static_dim(c, wd[3], "W's kernel width");
  s.oh = static_dim(c, od[2], "offset's height");
  s.ow = static_dim(c, od[3], "offset's width");
  if (auto k = c.attr_ints("kernel_shape"); k && *k != std::vector<int64_t>{s.kh, s.kw})
    c.invalid("kernel_shape disagrees with the weight");
  s.strides = ints_attr(c, "strides", 2, 1);
  s.dilations = ints_attr(c, "dilations", 2, 1);
  s.pads = ints_attr(c, "pads", 4, 0);
  s.group = c.attr_int("group", 1);
  s.offset_group = c.attr_int("offset_group", 1);
  // Before check_sizes divides by the strides and grid_positions visits every tap and point.
  check_values_in(c, "attribute 'strides'", s.strides, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'dilations'", s.dilations, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'pads'", s.pads, 0, kMaxWindowValue);
  check_values_in(c, "W's kernel dims", {s.kh, s.kw}, 1, kMaxWindowValue);
  check_values_in(c, "X's spatial dims", {s.height, s.width}, 0, kMaxWindowValue);
  bounded_elements(c, {s.kh, s.kw, s.oh, s.ow}, "the sampling grid (taps x output points)");
}

// What ONNX requires of the shapes, checked where the dims are static.
void check_sizes(NodeContext& c, const DeformShape& s) {
  const std::vector<Dim> wd = c.type(1).dims, od = c.type(2).dims;
  if (s.group < 1 || s.offset_group < 1) c.invalid("group and offset_group must be positive");
  if (s.channels % s.group != 0 || s.out_channels % s.group != 0 || !(wd[1] == Dim(s.channels / s.group)))
    c.invalid("X's ", s.channels, " channels, W's ", wd[0], " x ", wd[1], " and group ", s.group, " disagree");
  if (s.channels % s.offset_group != 0)
    c.invalid("X's ", s.channels, " channels are no multiple of offset_group ", s.offset_group);
  const int64_t sampled = s.offset_group * s.taps();
  if (!(od[1] == Dim(sampled * 2)))
    c.invalid("offset has ", od[1], " channels; expected offset_group * kH * kW * 2 = ", sampled * 2);
  if (c.has_input(4) && !(c.type(4).dims[1] == Dim(sampled)))
    c.invalid("mask has ", c.type(4).dims[1], " channels; expected offset_group * kH * kW = ", sampled);
  const int64_t span_h = (s.kh - 1) * s.dilations[0] + 1, span_w = (s.kw - 1) * s.dilations[1] + 1;
  const int64_t oh = (s.height + s.pads[0] + s.pads[2] - span_h) / s.strides[0] + 1;
  const int64_t ow = (s.width + s.pads[1] + s.pads[3] - span_w) / s.strides[1] + 1;
  if (oh != s.oh || ow != s.ow)
    c.invalid("offset's spatial dims ", s.oh, " x ", s.ow, " are not the output's ", oh, " x ", ow);
}

DeformShape read_shape(NodeContext& c) {
  for (size_t i = 0; i < 3; ++i)
    if (c.rank(i) != 4)
      c.unsupported("only 2-D DeformConv (X, W and offset of rank 4), input ", i, " has rank ", c.rank(i));
  if (c.has_input(4) && c.rank(4) != 4) c.invalid("mask must have rank 4, got ", c.rank(4));
  DeformShape s;
  s.dtype = c.dtype(0);
  if (!dtype_is_float(s.dtype)) c.unsupported("X of ", dtype_name(s.dtype), " (a float type is needed)");
  s.work = s.dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  read_sizes(c, s);
  check_sizes(c, s);
  return s;
}

class DeformSampler {
 public:
  DeformSampler(NodeContext& c, DeformShape s) : c_(c), s_(std::move(s)) {}

  // [N, G, C/G * kH * kW, oH * oW]: the sampled (and masked) input under each filter tap.
  ValueId columns() {
    const ValueId off = c_.reshape(input(2), grouped({s_.taps(), 2, s_.points()}));
    const Axis h = axis_taps(off, 0, s_.height), w = axis_taps(off, 1, s_.width);
    // The four neighbours [N, OG, K, P, 2 (h), 2 (w)] as positions in X padded by one.
    auto cross = [&](ValueId v, int64_t nh, int64_t nw) {
      return c_.reshape(v, grouped({s_.taps(), s_.points(), nh, nw}));
    };
    const ValueId row = c_.scalar(DType::kInt64, static_cast<double>(s_.width + 2));
    const ValueId index = op("add", op("mul", cross(h.index, 2, 1), row), cross(w.index, 1, 2));
    ValueId weight = op("mul", cross(h.weight, 2, 1), cross(w.weight, 1, 2));
    if (c_.has_input(4)) weight = op("mul", weight, cross(input(4), 1, 1));
    return weigh(gather(index), weight);
  }

 private:
  struct Axis {
    ValueId index, weight;  // [N, OG, K, P, 2]: the two taps' positions in the padded axis, weights
  };

  // [N, OG, rest...]
  std::vector<Dim> grouped(const std::vector<int64_t>& rest) const {
    std::vector<Dim> d = {s_.batch, Dim(s_.offset_group)};
    for (int64_t v : rest) d.push_back(Dim(v));
    return d;
  }

  ValueId op(const char* name, ValueId a, ValueId b) { return c_.op(name, {a, b}); }
  ValueId work_vec(const std::vector<double>& v, std::vector<int64_t> shape) {
    return c_.constant(KnownValue::from_doubles(s_.work, std::move(shape), v));
  }

  // offset or mask in the positions' dtype. They may name the batch differently from X:
  // asserted equal at run time, so that the gather and the products see one batch dim.
  ValueId input(size_t i) {
    const ValueId v = c_.cast(c_.input(i), s_.work);
    std::vector<Dim> d = c_.type_of(v).dims;
    if (d[0] == s_.batch) return v;
    if (d[0].is_static() && s_.batch.is_static()) c_.invalid("X has batch ", s_.batch, " but input ", i, " has ", d[0]);
    d[0] = s_.batch;
    const std::string message = "DeformConv: X and input " + std::to_string(i) + " differ in batch";
    return c_.op("rebind", {v}, {{"shape", d}, {"message", message}});
  }

  // The grid position of each tap along axis `a` (0: h, 1: w), [K, P] kernel tap by output point.
  std::vector<double> grid_positions(int a) const {
    std::vector<double> v;
    for (int64_t ki = 0; ki < s_.kh; ++ki)
      for (int64_t kj = 0; kj < s_.kw; ++kj)
        for (int64_t i = 0; i < s_.oh; ++i)
          for (int64_t j = 0; j < s_.ow; ++j) {
            const int64_t out = a == 0 ? i : j, tap = a == 0 ? ki : kj;
            v.push_back(static_cast<double>(out * s_.strides[a] - s_.pads[a] + tap * s_.dilations[a]));
          }
    return v;
  }

  // The two bilinear taps of each sample along one axis: floor(p) and floor(p) + 1, weighted
  // 1 - frac and frac. X is padded by one zero on each side (so the taps sit at +1 and +2 in
  // the padded axis), and a tap outside X is clamped onto that zero border: it reads 0, as
  // the reference's, with no mask; the clamp also keeps a huge or NaN position from becoming
  // a bad index.
  Axis axis_taps(ValueId off, int a, int64_t size) {
    const ValueId a_index = c_.constant(KnownValue::from_doubles(DType::kInt64, {}, {static_cast<double>(a)}));
    ValueId pos = c_.op("gather", {off, a_index}, {{"axis", int64_t{3}}});  // [N, OG, K, P]
    pos = op("add", pos, work_vec(grid_positions(a), {s_.taps(), s_.points()}));
    const ValueId base = c_.op("floor", {pos});
    const ValueId frac = c_.op("unsqueeze", {op("sub", pos, base)}, {{"axis", int64_t{-1}}});
    const ValueId taps = op("add", c_.op("unsqueeze", {base}, {{"axis", int64_t{-1}}}), work_vec({1, 2}, {2}));
    const ValueId clamped = c_.op("clamp", {taps}, {{"min", 0.0}, {"max", static_cast<double>(size + 1)}});
    const ValueId weight = c_.op("concat", {op("sub", c_.scalar(s_.work, 1), frac), frac}, {{"axis", int64_t{-1}}});
    return {c_.cast(clamped, DType::kInt64), weight};
  }

  // X padded by one zero on each side as rows [N, OG, (H+2)(W+2), C/OG], read at the flat
  // positions `index` [N, OG, K, P, 2, 2]: [N, OG, K*P*4, C/OG].
  ValueId gather(ValueId index) {
    const std::vector<int64_t> border = {0, 0, 0, 0, 1, 1, 1, 1};
    const ValueId x = c_.op("pad", {c_.input(0)}, {{"paddings", border}, {"value", 0.0}});
    const int64_t plane = (s_.height + 2) * (s_.width + 2), per_group = s_.channels / s_.offset_group;
    const ValueId rows = c_.op("permute", {c_.reshape(x, grouped({per_group, plane}))},
                               {{"dims", std::vector<int64_t>{0, 1, 3, 2}}});
    const ValueId flat = c_.reshape(index, grouped({s_.taps() * s_.points() * 4, 1}));
    return c_.op("gather_nd", {rows, flat}, {{"batch_dims", int64_t{2}}});
  }

  // The four neighbours weighed and summed, as columns [N, G, C/G * K, P].
  ValueId weigh(ValueId v, ValueId weight) {
    const int64_t per_group = s_.channels / s_.offset_group;
    v = c_.reshape(v, grouped({s_.taps(), s_.points(), 4, per_group}));
    v = op("mul", v, c_.cast(c_.reshape(weight, grouped({s_.taps(), s_.points(), 4, 1})), s_.dtype));
    v = c_.op("sum", {v}, {{"axis", int64_t{4}}});  // [N, OG, K, P, 1, C/OG]
    v = c_.op("permute", {c_.reshape(v, grouped({s_.taps(), s_.points(), per_group}))},
              {{"dims", std::vector<int64_t>{0, 1, 4, 2, 3}}});  // [N, OG, C/OG, K, P]
    const int64_t per_conv_group = s_.channels / s_.group;
    return c_.reshape(v, {s_.batch, Dim(s_.group), Dim(per_conv_group * s_.taps()), Dim(s_.points())});
  }

  NodeContext& c_;
  DeformShape s_;
};

void import_deform_conv(NodeContext& c) {
  const DeformShape s = read_shape(c);
  const ValueId cols = DeformSampler(c, s).columns();
  const int64_t per_group_out = s.out_channels / s.group, per_group_in = s.channels / s.group;
  const ValueId filter =
      c.reshape(c.cast(c.input(1), s.dtype), {Dim(s.group), Dim(per_group_out), Dim(per_group_in * s.taps())});
  ValueId y = c.op("matmul", {filter, cols});  // [N, G, OC/G, P]
  y = c.reshape(y, {s.batch, Dim(s.out_channels), Dim(s.oh), Dim(s.ow)});
  if (c.has_input(3))
    y = c.op("add", {y, c.reshape(c.cast(c.input(3), s.dtype), {Dim(s.out_channels), Dim(1), Dim(1)})});
  c.set_output(0, y);
}

}  // namespace

void register_deform_conv_importers(ImportTable& t) { t["DeformConv"] = import_deform_conv; }

}  // namespace maxc::onnx

#include "onnx/conv3d.h"

#include <string_view>
#include <vector>

#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

constexpr int64_t kOpen = INT64_MAX;  // slice_tensor's open start/stop

int64_t static_dim(NodeContext& c, const Dim& d, std::string_view what) {
  if (!d.is_static()) c.unsupported("a 3-D convolution needs a static ", what, ", got ", d);
  return d.static_value();
}

ValueId permute(NodeContext& c, ValueId v, std::vector<int64_t> dims) {
  return c.op("permute", {v}, {{"dims", std::move(dims)}});
}

// [N, C, D, H, W] -> [N*D, C, H, W], after the depth padding (zeros; our conv2d pads only
// height and width).
ValueId planes_of(NodeContext& c, ValueId x, const Conv3dParams& p) {
  if (p.pad_begin[0] != 0 || p.pad_end[0] != 0)
    x = c.op("pad", {x}, {{"paddings", std::vector<int64_t>{0, 0, 0, 0, p.pad_begin[0], p.pad_end[0], 0, 0, 0, 0}},
                          {"value", 0.0}});
  const std::vector<Dim> d = c.type_of(x).dims;
  return c.reshape(permute(c, x, {0, 2, 1, 3, 4}), {d[0] * d[2], d[1], d[3], d[4]});
}

// [F, C/g, kd, kh, kw] -> [g*kd*F/g, C/g, kh, kw]: each group's output channels repeated
// once per depth tap, so the grouping of conv2d's channels still holds.
ValueId stacked_taps(NodeContext& c, ValueId w, int64_t groups) {
  const std::vector<Dim> d = c.type_of(w).dims;
  const int64_t f = static_dim(c, d[0], "number of filters"), kd = static_dim(c, d[2], "filter depth");
  if (f % groups != 0) c.invalid("group ", groups, " does not divide the ", f, " filters");
  const Dim fg(f / groups);
  ValueId v = c.reshape(w, {Dim(groups), fg, d[1], d[2], d[3], d[4]});
  v = permute(c, v, {0, 3, 1, 2, 4, 5});  // [g, kd, F/g, C/g, kh, kw]
  return c.reshape(v, {Dim(groups * kd) * fg, d[1], d[3], d[4]});
}

}  // namespace

ValueId conv3d(NodeContext& c, ValueId x, ValueId w, std::optional<ValueId> bias, const Conv3dParams& p) {
  const std::vector<Dim> xd = c.type_of(x).dims, wd = c.type_of(w).dims;
  const int64_t depth = static_dim(c, xd[2], "input depth") + p.pad_begin[0] + p.pad_end[0];
  const int64_t kd = static_dim(c, wd[2], "filter depth");
  const int64_t f = static_dim(c, wd[0], "number of filters");
  // Each depth tap is one slice and one add (a real 3-D filter has a handful).
  if (kd < 1 || kd > kMaxUnrolledWindow)
    c.exhausted("a 3-D convolution's filter depth must lie in [1, ", kMaxUnrolledWindow, "] (one slice per tap), got ",
                kd);
  if (p.groups < 1 || f % p.groups != 0) c.invalid("group ", p.groups, " does not divide the ", f, " filters");
  const int64_t reach = p.dilation[0] * (kd - 1) + 1;
  if (depth < reach) c.invalid("the filter's depth reach ", reach, " exceeds the padded input depth ", depth);
  const int64_t out_depth = (depth - reach) / p.stride[0] + 1;
  Attrs attrs{{"stride", std::vector<int64_t>{p.stride[1], p.stride[2]}},
              {"dilation", std::vector<int64_t>{p.dilation[1], p.dilation[2]}},
              {"padding", std::vector<int64_t>{p.pad_begin[1], p.pad_end[1], p.pad_begin[2], p.pad_end[2]}},
              {"groups", p.groups},
              {"input_layout", std::string("NCHW")},
              {"filter_layout", std::string("FCRS")}};
  ValueId y = c.op("conv2d", {planes_of(c, x, p), c.cast(stacked_taps(c, w, p.groups), c.type_of(x).dtype)}, attrs);
  const std::vector<Dim> yd = c.type_of(y).dims;  // [N*D, g*kd*F/g, H', W']
  y = c.reshape(y, {xd[0], Dim(depth), Dim(p.groups), Dim(kd), Dim(f / p.groups), yd[2], yd[3]});
  std::optional<ValueId> sum;
  for (int64_t t = 0; t < kd; ++t) {
    const int64_t first = t * p.dilation[0];
    ValueId tap = c.op("slice_tensor", {y},
                       {{"starts", std::vector<Dim>{Dim(kOpen), Dim(first), Dim(kOpen), Dim(t)}},
                        {"stops", std::vector<Dim>{Dim(kOpen), Dim(first + (out_depth - 1) * p.stride[0] + 1),
                                                   Dim(kOpen), Dim(t + 1)}},
                        {"steps", std::vector<int64_t>{1, p.stride[0], 1, 1}}});
    sum = sum ? c.op("add", {*sum, tap}) : tap;
  }
  ValueId out = permute(c, c.reshape(*sum, {xd[0], Dim(out_depth), Dim(f), yd[2], yd[3]}), {0, 2, 1, 3, 4});
  if (bias) out = c.op("add", {out, c.reshape(c.cast(*bias, c.type_of(out).dtype), {Dim(f), Dim(1), Dim(1), Dim(1)})});
  return out;
}

}  // namespace maxc::onnx

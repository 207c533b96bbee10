// Convolution and pooling (inventory §5.10, P0 part): conv2d, max_pool2d, avg_pool2d.
// Output spatial dims come from Dim arithmetic, so symbolic heights and widths work:
//   out = (in + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1
// (with ceil_mode, pools round the division up instead, without PyTorch's extra rule that drops
// a last window starting in the padding).
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/ops/shape_checks.h"

namespace maxc {
namespace {

// Axis positions of a 4-D layout.
struct Layout4 {
  size_t h, w, c;
};

const char* const kSpatialNames[] = {"H", "W"};

Dim window_count(const InferContext& ctx, const Dim& in, const Dim& pads, const Dim& kernel, int64_t dilation,
                 int64_t stride, bool ceil_mode, size_t spatial) {
  Dim span = in + pads - (kernel - 1) * dilation - 1;  // the padded input minus the dilated kernel
  if (ceil_mode) span = span + (stride - 1);
  Dim out = floordiv(span, stride) + 1;
  if (out.is_static() && out.static_value() < 1)
    ctx.fail("the dilated kernel (", (kernel - 1) * dilation + 1, ") is larger than the padded input (", in + pads,
             ") along ", kSpatialNames[spatial]);
  return out;
}

// A pooling attribute given for both spatial dims, or once for both (MAX's int | tuple).
std::vector<int64_t> pair_attr(const InferContext& ctx, std::string_view name, int64_t min) {
  std::vector<int64_t> v = ctx.attr<std::vector<int64_t>>(name);
  if (v.size() == 1) v.push_back(v[0]);
  if (v.size() != 2) ctx.fail("attribute '", name, "' must have 1 or 2 entries, got ", v.size(), " ", ints_to_string(v));
  require_ints_at_least(ctx, name, v, min);
  return v;
}

// ---- conv2d ------------------------------------------------------------------------------------

// x: NHWC (or NCHW); filter: RSCF = [kH, kW, C/groups, F] (or FCRS = [F, C/groups, kH, kW]);
// bias: [F]. The result has x's layout with F channels.
std::vector<TensorType> infer_conv2d(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kFloat);
  require_same_dtype(ctx);
  DeviceRef device = common_device(ctx);
  require_rank(ctx, 0, 4);
  require_rank(ctx, 1, 4);
  const std::string& in_layout = ctx.attr<std::string>("input_layout");
  const std::string& f_layout = ctx.attr<std::string>("filter_layout");
  Layout4 in_axes;
  if (in_layout == "NHWC") in_axes = {1, 2, 3};
  else if (in_layout == "NCHW") in_axes = {2, 3, 1};
  else ctx.fail("attribute 'input_layout' is \"", in_layout, "\"; expected \"NHWC\" or \"NCHW\"");
  size_t fr, fs, fc, ff;
  if (f_layout == "RSCF") fr = 0, fs = 1, fc = 2, ff = 3;
  else if (f_layout == "FCRS") ff = 0, fc = 1, fr = 2, fs = 3;
  else ctx.fail("attribute 'filter_layout' is \"", f_layout, "\"; expected \"RSCF\" or \"FCRS\"");

  const auto& stride = ints_attr_of_size(ctx, "stride", 2);
  require_ints_at_least(ctx, "stride", stride, 1);
  const auto& dilation = ints_attr_of_size(ctx, "dilation", 2);
  require_ints_at_least(ctx, "dilation", dilation, 1);
  const auto& padding = ints_attr_of_size(ctx, "padding", 4);
  require_ints_at_least(ctx, "padding", padding, 0);
  int64_t groups = ctx.attr<int64_t>("groups");
  if (groups < 1) ctx.fail("attribute 'groups' is ", groups, "; it must be >= 1");

  const std::vector<Dim>& x = ctx.input(0).dims;
  const std::vector<Dim>& f = ctx.input(1).dims;
  const Dim& channels = x[in_axes.c];
  if (!(f[fc] * groups == channels))
    ctx.fail(ctx.input_label(1), " ", dims_to_string(f), " (", f_layout, ") has ", f[fc],
             " input channels per group but ", ctx.input_label(0), " ", dims_to_string(x), " (", in_layout, ") has ",
             channels, " channels and groups is ", groups, " (expected ", channels, " / ", groups, ")");
  const Dim& out_channels = f[ff];
  if (!exact_div(out_channels, groups))
    ctx.fail("the ", out_channels, " output channels of ", ctx.input_label(1), " ", dims_to_string(f),
             " are not divisible by groups (", groups, ")");
  if (ctx.num_inputs() == 3) require_shape(ctx, 2, {out_channels}, "the output channels of input 1 'filter'");

  std::vector<Dim> out = x;
  out[in_axes.c] = out_channels;
  out[in_axes.h] = window_count(ctx, x[in_axes.h], Dim(padding[0]) + padding[1], f[fr], dilation[0], stride[0], false, 0);
  out[in_axes.w] = window_count(ctx, x[in_axes.w], Dim(padding[2]) + padding[3], f[fs], dilation[1], stride[1], false, 1);
  return {TensorType{ctx.input(0).dtype, std::move(out), device}};
}

// ---- max_pool2d, avg_pool2d ----------------------------------------------------------------------

// input: NHWC; padding is added on both sides of each spatial dim.
std::vector<TensorType> infer_pool2d(const InferContext& ctx, DTypeClass accepts) {
  require_dtype(ctx, 0, accepts);
  require_rank(ctx, 0, 4);
  const auto& kernel = ints_attr_of_size(ctx, "kernel_size", 2);
  require_ints_at_least(ctx, "kernel_size", kernel, 1);
  std::vector<int64_t> stride = pair_attr(ctx, "stride", 1);
  std::vector<int64_t> dilation = pair_attr(ctx, "dilation", 1);
  std::vector<int64_t> padding = pair_attr(ctx, "padding", 0);
  bool ceil_mode = ctx.attr<bool>("ceil_mode");
  TensorType out = ctx.input(0);
  for (size_t i = 0; i < 2; ++i)
    out.dims[1 + i] =
        window_count(ctx, out.dims[1 + i], Dim(padding[i]) * 2, kernel[i], dilation[i], stride[i], ceil_mode, i);
  return {out};
}

std::vector<AttrSpec> pool_attrs() {
  return {AttrSpec::required("kernel_size", AttrKind::kInts),
          AttrSpec::with_default("stride", std::vector<int64_t>{1}),
          AttrSpec::with_default("dilation", std::vector<int64_t>{1}),
          AttrSpec::with_default("padding", std::vector<int64_t>{0}),
          AttrSpec::with_default("ceil_mode", false)};
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "conv2d",
                 .inputs = {{"x"}, {"filter"}, {"bias", Arity::kOptional}},
                 .attrs = {AttrSpec::with_default("stride", std::vector<int64_t>{1, 1}),
                           AttrSpec::with_default("dilation", std::vector<int64_t>{1, 1}),
                           AttrSpec::with_default("padding", std::vector<int64_t>{0, 0, 0, 0}),
                           AttrSpec::with_default("groups", int64_t{1}),
                           AttrSpec::with_default("input_layout", std::string("NHWC")),
                           AttrSpec::with_default("filter_layout", std::string("RSCF"))},
                 .infer = infer_conv2d});
  r.add(OpSchema{.name = "max_pool2d",
                 .inputs = {{"input"}},
                 .attrs = pool_attrs(),
                 .infer = [](const InferContext& ctx) { return infer_pool2d(ctx, DTypeClass::kNumeric); }});
  std::vector<AttrSpec> avg = pool_attrs();
  avg.push_back(AttrSpec::with_default("count_boundary", true));
  r.add(OpSchema{.name = "avg_pool2d",
                 .inputs = {{"input"}},
                 .attrs = std::move(avg),
                 .infer = [](const InferContext& ctx) { return infer_pool2d(ctx, DTypeClass::kFloat); }});
}

}  // namespace maxc

// ConvTranspose as our conv2d (we have no transposed-convolution kernel): a transposed
// convolution is the ordinary convolution of the input with stride-1 zeros inserted between
// its pixels, padded by dilation*(k-1) - pad on each side, with the filter flipped and its
// in/out channels swapped. A negative padding (large pads, or an output_shape smaller than
// the full result) crops the input instead. 1-D runs as 2-D over a unit height, 3-D as the
// conv2d composition of conv3d.h.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include "onnx/conv3d.h"
#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

constexpr int64_t kOpen = INT64_MAX;  // slice_tensor's open start/stop

// Per spatial axis ([depth,] height, width): the ONNX attributes and the input length.
struct Axis {
  int64_t in = 0, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, output_padding = 0;
  std::optional<int64_t> output_size;  // from output_shape
};

int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

int64_t full_size(const Axis& a) {
  return a.stride * (a.in - 1) + a.output_padding + (a.kernel - 1) * a.dilation + 1;
}

// output_shape or auto_pad SAME: the total padding is what the full result has beyond the
// wanted size, split as ONNX says (the odd one at the end for SAME_UPPER, else at the start).
void derive_pads(Axis& a, int64_t wanted, bool upper) {
  int64_t total = full_size(a) - wanted;
  int64_t half = floor_div2(total);
  a.pad_begin = upper ? half : total - half;
  a.pad_end = upper ? total - half : half;
}

std::vector<Axis> read_axes(NodeContext& c, size_t n) {
  const std::vector<Dim>& xd = c.type(0).dims;
  const std::vector<Dim>& wd = c.type(1).dims;
  auto ints = [&](std::string_view name, int64_t def, size_t count) {
    std::vector<int64_t> v = c.attr_ints(name).value_or(std::vector<int64_t>(count, def));
    if (v.size() != count) c.invalid("attribute '", name, "' has ", v.size(), " entries; expected ", count);
    return v;
  };
  std::vector<int64_t> strides = ints("strides", 1, n), dilations = ints("dilations", 1, n),
                       pads = ints("pads", 0, 2 * n), out_pad = ints("output_padding", 0, n);
  check_values_in(c, "attribute 'strides'", strides, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'dilations'", dilations, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'pads'", pads, 0, kMaxWindowValue);
  check_values_in(c, "attribute 'output_padding'", out_pad, 0, kMaxWindowValue);
  std::optional<std::vector<int64_t>> out_shape = c.attr_ints("output_shape");
  if (out_shape && out_shape->size() != n) {
    if (out_shape->size() != n + 2) c.invalid("output_shape has ", out_shape->size(), " entries; expected ", n);
    out_shape->erase(out_shape->begin(), out_shape->begin() + 2);  // the full N, C, spatial form
  }
  if (out_shape) check_values_in(c, "attribute 'output_shape'", *out_shape, 0, kMaxWindowValue);
  std::vector<Axis> axes(n);
  for (size_t i = 0; i < n; ++i) {
    Axis& a = axes[i];
    if (!wd[2 + i].is_static()) c.unsupported("the kernel dims must be static, got ", wd[2 + i]);
    a.kernel = wd[2 + i].static_value();
    if (a.kernel < 1 || a.kernel > kMaxWindowValue)
      c.invalid("W's kernel dim ", i, " is ", a.kernel, "; it must lie in [1, ", kMaxWindowValue, "]");
    a.stride = strides[i], a.dilation = dilations[i], a.output_padding = out_pad[i];
    a.pad_begin = pads[i], a.pad_end = pads[i + n];
    if (xd[2 + i].is_static()) a.in = xd[2 + i].static_value();
    if (a.in > kMaxWindowValue) c.exhausted("X's spatial dim ", i, " is ", a.in, " (at most ", kMaxWindowValue, ")");
    if (out_shape) a.output_size = (*out_shape)[i];
  }
  if (auto k = c.attr_ints("kernel_shape")) {
    for (size_t i = 0; i < n && i < k->size(); ++i)
      if ((*k)[i] != axes[i].kernel) c.invalid("kernel_shape disagrees with the weight");
  }
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && !same) c.invalid("auto_pad \"", auto_pad, "\"");
  for (size_t i = 0; i < n; ++i) {
    Axis& a = axes[i];
    if (auto_pad == "VALID") a.pad_begin = a.pad_end = 0;
    if (!same && !a.output_size) continue;
    if (!xd[2 + i].is_static()) c.unsupported("output_shape and auto_pad SAME need static spatial dims, got ", xd[2 + i]);
    derive_pads(a, a.output_size.value_or(a.in * a.stride), auto_pad == "SAME_UPPER");
  }
  return axes;
}

// ---- the input: zeros between pixels ----

// [N, C, H, W] -> [N, C, H*sh, W*sw] (and so on for any number of spatial axes) with each
// pixel followed by stride-1 zeros (the zeros after the last pixel are accounted for in the
// padding).
ValueId insert_zeros(NodeContext& c, ValueId x, const std::vector<Axis>& axes) {
  if (std::all_of(axes.begin(), axes.end(), [](const Axis& a) { return a.stride == 1; })) return x;
  const std::vector<Dim> d = c.type_of(x).dims;
  std::vector<Dim> split = {d[0], d[1]}, merged = {d[0], d[1]};
  std::vector<int64_t> pads(4, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    split.insert(split.end(), {d[2 + i], Dim(1)});
    merged.push_back(d[2 + i] * Dim(axes[i].stride));
    pads.insert(pads.end(), {0, 0, 0, axes[i].stride - 1});
  }
  ValueId v = c.op("pad", {c.reshape(x, split)}, {{"paddings", pads}, {"value", 0.0}});
  return c.reshape(v, merged);
}

// Padding of the zero-inserted input, before and after (negative: crop).
std::pair<int64_t, int64_t> conv_padding(const Axis& a) {
  int64_t reach = a.dilation * (a.kernel - 1);
  int64_t before = reach - a.pad_begin;
  int64_t after = reach - a.pad_end + a.output_padding - (a.stride - 1);
  return {before, after};
}

// Crops the spatial axes where the padding is negative (our conv2d pads only outward).
ValueId crop(NodeContext& c, ValueId x, const std::vector<std::pair<int64_t, int64_t>>& pads) {
  bool any = false;
  const std::vector<Dim> d = c.type_of(x).dims;
  std::vector<Dim> starts(d.size(), Dim(kOpen)), stops(d.size(), Dim(kOpen));
  for (size_t i = 0; i < pads.size(); ++i) {
    if (pads[i].first < 0) starts[2 + i] = Dim(-pads[i].first), any = true;
    if (pads[i].second < 0) stops[2 + i] = d[2 + i] + Dim(pads[i].second), any = true;
  }
  if (!any) return x;
  return c.op("slice_tensor", {x}, {{"starts", starts}, {"stops", stops}});
}

// ---- the filter: [Cin, Cout/g, k..] -> [Cout, Cin/g, k..], flipped ----

// The flipped, swapped filter computed here when its bytes are known (an initializer).
// Flipping every spatial axis of a row-major block reverses its flat order. A 1-D filter
// comes out over a unit height, as the 1-D input runs.
std::optional<ValueId> known_filter(NodeContext& c, int64_t groups) {
  const KnownValue* k = c.known(1);
  if (!k || !k->is_static() || k->shape.size() < 3 || k->shape.size() > 5) return std::nullopt;
  if (dtype_size_in_bits(k->dtype) % 8 != 0 || !k->data->is_contiguous()) return std::nullopt;
  const int64_t cin = k->shape[0], cout_g = k->shape[1], cin_g = cin / groups, es = dtype_size_in_bytes(k->dtype);
  std::vector<int64_t> spatial(k->shape.begin() + 2, k->shape.end());
  if (spatial.size() == 1) spatial.insert(spatial.begin(), 1);
  int64_t taps = 1;
  for (int64_t s : spatial) taps *= s;
  std::vector<int64_t> dims = {cout_g * groups, cin_g};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  auto out = Tensor::create(Device::cpu(), k->dtype, dims);
  const uint8_t* src = k->data->data();
  uint8_t* dst = out->data();
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int64_t co = 0; co < cout_g; ++co)
        for (int64_t t = 0; t < taps; ++t) {
          int64_t from = ((g * cin_g + ci) * cout_g + co) * taps + t;
          int64_t to = ((g * cout_g + co) * cin_g + ci) * taps + (taps - 1 - t);
          std::memcpy(dst + to * es, src + from * es, static_cast<size_t>(es));
        }
  return c.constant(KnownValue::from_tensor(out));
}

ValueId filter_by_ops(NodeContext& c, ValueId w, int64_t groups) {
  const std::vector<Dim> d = c.type_of(w).dims;
  if (!d[0].is_static()) c.unsupported("W's input channels must be static, got ", d[0]);
  Dim cin_g(d[0].static_value() / groups);
  const std::vector<Dim> spatial(d.begin() + 2, d.end());
  std::vector<Dim> grouped = {Dim(groups), cin_g, d[1]}, swapped = {Dim(groups) * d[1], cin_g};
  grouped.insert(grouped.end(), spatial.begin(), spatial.end());
  swapped.insert(swapped.end(), spatial.begin(), spatial.end());
  std::vector<int64_t> order = {0, 2, 1};
  for (size_t i = 0; i < spatial.size(); ++i) order.push_back(static_cast<int64_t>(3 + i));
  ValueId v = c.op("permute", {c.reshape(w, grouped)}, {{"dims", order}});
  v = c.reshape(v, swapped);
  std::vector<Dim> open(d.size(), Dim(kOpen));
  std::vector<int64_t> steps(d.size(), -1);
  steps[0] = steps[1] = 1;
  return c.op("slice_tensor", {v}, {{"starts", open}, {"stops", open}, {"steps", steps}});
}

ValueId insert_unit_height(NodeContext& c, ValueId x) {
  std::vector<Dim> d = c.type_of(x).dims;
  d.insert(d.begin() + 2, Dim(1));
  return c.reshape(x, d);
}

ValueId conv_2d(NodeContext& c, ValueId x, ValueId f, const std::vector<Axis>& axes,
                const std::vector<std::pair<int64_t, int64_t>>& pads, int64_t groups) {
  std::vector<ValueId> ins = {x, f};
  if (c.has_input(2)) ins.push_back(c.input(2));
  auto out = [](int64_t p) { return std::max<int64_t>(p, 0); };
  Attrs attrs{{"stride", std::vector<int64_t>{1, 1}},
              {"dilation", std::vector<int64_t>{axes[0].dilation, axes[1].dilation}},
              {"padding", std::vector<int64_t>{out(pads[0].first), out(pads[0].second), out(pads[1].first),
                                               out(pads[1].second)}},
              {"groups", groups},
              {"input_layout", std::string("NCHW")},
              {"filter_layout", std::string("FCRS")}};
  return c.op("conv2d", ins, attrs);
}

ValueId conv_3d(NodeContext& c, ValueId x, ValueId f, const std::vector<Axis>& axes,
                const std::vector<std::pair<int64_t, int64_t>>& pads, int64_t groups) {
  Conv3dParams p;
  p.groups = groups;
  for (size_t i = 0; i < 3; ++i) {
    p.dilation[i] = axes[i].dilation;
    p.pad_begin[i] = std::max<int64_t>(pads[i].first, 0);
    p.pad_end[i] = std::max<int64_t>(pads[i].second, 0);
  }
  return conv3d(c, x, f, c.has_input(2) ? std::optional<ValueId>(c.input(2)) : std::nullopt, p);
}

void import_conv_transpose(NodeContext& c) {
  int64_t r = c.rank(0);
  if (r < 3 || r > 5) c.unsupported("only 1-D, 2-D and 3-D transposed convolutions (input rank 3 to 5), got rank ", r);
  if (c.rank(1) != r) c.invalid("W has rank ", c.rank(1), " but X has rank ", r);
  int64_t groups = c.attr_int("group", 1);
  const Dim& cin = c.type(1).dims[0];
  if (groups <= 0 || (cin.is_static() && cin.static_value() % groups != 0))
    c.invalid("group ", groups, " does not divide W's ", cin, " input channels");
  const Dim& x_channels = c.type(0).dims[1];
  if (x_channels.is_static() && cin.is_static() && x_channels != cin)
    c.invalid("X has ", x_channels, " channels but W takes ", cin);
  std::vector<Axis> axes = read_axes(c, static_cast<size_t>(r - 2));
  ValueId x = c.input(0), w = c.input(1);
  if (r == 3) {
    axes.insert(axes.begin(), Axis{});
    axes[0].in = 1;
    x = insert_unit_height(c, x);
    w = insert_unit_height(c, w);
  }
  std::optional<ValueId> known = known_filter(c, groups);
  ValueId f = known ? *known : filter_by_ops(c, w, groups);
  x = insert_zeros(c, x, axes);
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (const Axis& a : axes) pads.push_back(conv_padding(a));
  x = crop(c, x, pads);
  f = c.cast(f, c.type_of(x).dtype);
  ValueId y = axes.size() == 3 ? conv_3d(c, x, f, axes, pads, groups) : conv_2d(c, x, f, axes, pads, groups);
  if (r == 3) {
    std::vector<Dim> d = c.type_of(y).dims;
    d.erase(d.begin() + 2);
    y = c.reshape(y, d);
  }
  c.set_output(0, y);
}

}  // namespace

void register_conv_transpose_importers(ImportTable& t) { t["ConvTranspose"] = import_conv_transpose; }

}  // namespace maxc::onnx

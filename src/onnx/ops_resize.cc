// Resize with scales or sizes known at import, one axis at a time (interpolation is
// separable). For each output position along an axis the source taps and their weights are
// computed here, in double, exactly as the ONNX reference does (onnx/reference/ops/
// op_resize.py): nearest becomes one gather of the chosen index; linear and cubic (with
// antialias and exclude_outside) gather an [out, taps] index table and sum it weighted.
// tf_crop_and_resize's positions outside the input take extrapolation_value. Upsample, its
// predecessor, maps onto the same tables.
#include <algorithm>
#include <cmath>
#include <optional>

#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

// The largest output along one axis (its index and weight tables are made at import).
constexpr int64_t kMaxResized = int64_t{1} << 20;

struct Spec {
  std::string mode, coords, nearest_mode;
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false, antialias = false;
};

struct AxisPlan {
  int64_t axis = 0, in = 0, out = 0;
  double scale = 1;
  double roi_start = 0, roi_end = 1;
  // A symbolic axis (in and out are then 0): its dim, and how many times each element
  // repeats (0 when the axis is left as it is).
  std::optional<Dim> symbolic;
  int64_t repeat = 0;
};

// Per output position: `taps` source indices (clamped into the input) and weights.
struct Taps {
  size_t taps = 0;
  std::vector<int64_t> index;  // [out, taps]
  std::vector<double> weight;  // [out, taps]
  std::vector<bool> outside;   // [out]: tf_crop_and_resize extrapolates there
};

Spec read_spec(NodeContext& c) {
  Spec s;
  s.mode = c.attr_string("mode", "nearest");
  s.coords = c.attr_string("coordinate_transformation_mode", "half_pixel");
  s.nearest_mode = c.attr_string("nearest_mode", "round_prefer_floor");
  s.cubic_a = c.attr_float("cubic_coeff_a", -0.75f);
  s.extrapolation = c.attr_float("extrapolation_value", 0.f);
  s.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
  s.antialias = c.attr_int("antialias", 0) != 0;
  if (s.mode != "nearest" && s.mode != "linear" && s.mode != "cubic") c.invalid("mode \"", s.mode, "\"");
  if (s.mode == "nearest" && s.antialias) c.invalid("antialias with mode \"nearest\"");
  for (const char* m : {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                        "tf_crop_and_resize"})
    if (s.coords == m) return s;
  c.unsupported("coordinate_transformation_mode \"", s.coords, "\"");
}

// ---- the reference's arithmetic ----

// The source coordinate of output position y (mode by mode, as the spec defines them).
double source_coord(const Spec& s, const AxisPlan& p, double y, bool* outside) {
  double in = static_cast<double>(p.in), out_w = p.scale * in;  // the real-valued output width
  double x = 0;
  if (s.coords == "align_corners") x = out_w == 1 ? 0 : y * (in - 1) / (out_w - 1);
  else if (s.coords == "asymmetric") x = y / p.scale;
  else if (s.coords == "pytorch_half_pixel") x = out_w == 1 ? -0.5 : (y + 0.5) / p.scale - 0.5;
  else if (s.coords == "half_pixel") x = (y + 0.5) / p.scale - 0.5;
  else if (s.coords == "half_pixel_symmetric") {
    double offset = in / 2 * (1 - static_cast<double>(p.out) / out_w);
    x = offset + (y + 0.5) / p.scale - 0.5;
  } else {  // tf_crop_and_resize
    double span = p.roi_end - p.roi_start;
    x = (out_w == 1 ? span * (in - 1) / 2 : y * span * (in - 1) / (out_w - 1)) + p.roi_start * (in - 1);
    *outside = x < 0 || x > in - 1;
  }
  return x;
}

std::vector<double> nearest_weights(const Spec& s, double ratio) {
  if (ratio == std::floor(ratio)) return {0, 1};
  if (s.nearest_mode == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
  if (s.nearest_mode == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
  if (s.nearest_mode == "floor") return {1, 0};
  return {0, 1};  // ceil
}

std::vector<double> normalized(std::vector<double> w) {
  double sum = 0;
  for (double v : w) sum += v;
  for (double& v : w) v /= sum;
  return w;
}

std::vector<double> linear_weights(const Spec& s, double ratio, double scale) {
  if (!s.antialias) return {1 - ratio, ratio};
  scale = std::min(scale, 1.0);
  int64_t start = static_cast<int64_t>(std::floor(-1 / scale)) + 1, footprint = 2 - 2 * start;
  std::vector<double> w;
  for (int64_t i = start; i < start + footprint; ++i)
    w.push_back(std::clamp(1 - std::abs((static_cast<double>(i) - ratio) * scale), 0.0, 1.0));
  return normalized(w);
}

double cubic(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

std::vector<double> cubic_weights(const Spec& s, double ratio, double scale) {
  if (!s.antialias) return {cubic(ratio + 1, s.cubic_a), cubic(ratio, s.cubic_a), cubic(1 - ratio, s.cubic_a),
                            cubic(2 - ratio, s.cubic_a)};
  scale = std::min(scale, 1.0);
  int64_t start = static_cast<int64_t>(std::floor(-2 / scale)) + 1, end = 2 - start;
  std::vector<double> w;
  for (int64_t i = start; i < end; ++i) w.push_back(cubic(scale * (static_cast<double>(i) - ratio), s.cubic_a));
  return normalized(w);
}

std::vector<double> weights_for(const Spec& s, double ratio, double scale) {
  if (s.mode == "nearest") return nearest_weights(s, ratio);
  if (s.mode == "linear") return linear_weights(s, ratio, scale);
  return cubic_weights(s, ratio, scale);
}

// The first of the n taps nearest x (ties to the smaller index), as the reference picks them.
int64_t first_tap(double x, size_t n) {
  int64_t pad = static_cast<int64_t>((n + 1) / 2), half = static_cast<int64_t>(n / 2);
  double padded = x + static_cast<double>(pad);
  double p = std::floor(padded), frac = padded - p;
  int64_t offset = n % 2 == 0 ? (frac == 0 ? -half : -half + 1) : (frac <= 0.5 ? -half : -half + 1);
  return static_cast<int64_t>(p) + offset - pad;
}

Taps taps_for(const Spec& s, const AxisPlan& p) {
  Taps t;
  t.outside.assign(static_cast<size_t>(p.out), false);
  for (int64_t y = 0; y < p.out; ++y) {
    bool outside = false;
    double x = source_coord(s, p, static_cast<double>(y), &outside);
    t.outside[static_cast<size_t>(y)] = outside;
    double ratio = x == std::floor(x) ? 1.0 : x - std::floor(x);  // prefer the left pixel
    std::vector<double> w = weights_for(s, ratio, p.scale);
    t.taps = w.size();
    int64_t start = first_tap(x, w.size());
    if (s.exclude_outside) {
      double sum = 0;
      for (size_t k = 0; k < w.size(); ++k) {
        int64_t i = start + static_cast<int64_t>(k);
        if (i < 0 || i >= p.in) w[k] = 0;
        sum += w[k];
      }
      for (double& v : w) v /= sum == 0 ? 1 : sum;
    }
    for (size_t k = 0; k < w.size(); ++k) {
      t.index.push_back(std::clamp<int64_t>(start + static_cast<int64_t>(k), 0, p.in - 1));  // edge padding
      t.weight.push_back(w[k]);
    }
  }
  return t;
}

// ---- graph building ----

// The shape of a constant that broadcasts from `axis` on in a value of rank `rank`:
// [1.., dims.., 1..].
std::vector<int64_t> along(int64_t axis, int64_t rank, const std::vector<int64_t>& dims) {
  std::vector<int64_t> shape(static_cast<size_t>(axis), 1);
  shape.insert(shape.end(), dims.begin(), dims.end());
  shape.resize(static_cast<size_t>(rank), 1);
  return shape;
}

ValueId float_constant(NodeContext& c, DType dt, std::vector<int64_t> shape, const std::vector<double>& v) {
  if (dt == DType::kFloat64) return c.constant(KnownValue::from_doubles(dt, std::move(shape), v));
  return c.cast(c.constant(KnownValue::from_doubles(DType::kFloat32, std::move(shape), v)), dt);
}

// Nearest: each output position reads the one tap weighted 1.
ValueId gather_nearest(NodeContext& c, ValueId x, const AxisPlan& p, const Taps& t) {
  std::vector<double> pick;
  for (int64_t y = 0; y < p.out; ++y)
    for (size_t k = 0; k < t.taps; ++k)
      if (t.weight[static_cast<size_t>(y) * t.taps + k] != 0) {
        pick.push_back(static_cast<double>(t.index[static_cast<size_t>(y) * t.taps + k]));
        break;
      }
  ValueId idx = c.constant(KnownValue::from_doubles(DType::kInt64, {p.out}, pick));
  return c.op("gather", {x, idx}, {{"axis", p.axis}});
}

ValueId weighted_sum(NodeContext& c, ValueId x, const AxisPlan& p, const Taps& t) {
  if (!dtype_is_float(c.type_of(x).dtype)) c.unsupported("mode \"linear\"/\"cubic\" on a non-float input");
  int64_t r = c.type_of(x).rank(), taps = static_cast<int64_t>(t.taps);
  std::vector<double> idx(t.index.begin(), t.index.end());
  ValueId table = c.constant(KnownValue::from_doubles(DType::kInt64, {p.out, taps}, idx));
  ValueId gathered = c.op("gather", {x, table}, {{"axis", p.axis}});  // [.., out, taps, ..]
  ValueId w = float_constant(c, c.type_of(x).dtype, along(p.axis, r + 1, {p.out, taps}), t.weight);
  ValueId sum = c.op("sum", {c.op("mul", {gathered, w})}, {{"axis", p.axis + 1}});
  std::vector<Dim> dims = c.type_of(sum).dims;
  dims.erase(dims.begin() + p.axis + 1);
  return c.reshape(sum, dims);
}

ValueId resize_axis(NodeContext& c, const Spec& s, ValueId x, const AxisPlan& p) {
  // An antialiased downscale reads about 2 (linear) or 4 (cubic) input elements per 1/scale:
  // the table is bounded before it is filled (and before 1/scale is made an integer).
  if (s.antialias && s.mode != "nearest" && 4.0 / std::min(p.scale, 1.0) * static_cast<double>(p.out) > kMaxBuiltElements)
    c.exhausted("axis ", p.axis, " downscales by ", p.scale, " to ", p.out,
                " elements with antialias: its tap table would pass ", kMaxBuiltElements, " elements");
  Taps t = taps_for(s, p);
  ValueId y = s.mode == "nearest" ? gather_nearest(c, x, p, t) : weighted_sum(c, x, p, t);
  if (std::none_of(t.outside.begin(), t.outside.end(), [](bool b) { return b; })) return y;
  std::vector<double> mask(t.outside.begin(), t.outside.end());
  int64_t r = c.type_of(x).rank();
  ValueId outside = c.constant(KnownValue::from_doubles(DType::kBool, along(p.axis, r, {p.out}), mask));
  return c.op("where", {outside, c.scalar(c.type_of(y).dtype, s.extrapolation), y});
}

// ---- scales, sizes, axes, roi ----

std::vector<double> known_doubles(NodeContext& c, size_t i, std::string_view what) {
  const KnownValue* k = c.known(i);
  auto v = k ? k->doubles() : std::nullopt;
  if (!v)
    c.needs_known({i}, "input ", i, " '", what, "' must be known when the model is imported; it is computed at run time");
  return *v;
}

bool has_values(NodeContext& c, size_t i) { return c.has_input(i) && !(c.type(i).num_elements() == Dim(0)); }

// A size truncated toward zero as the reference does; -1 for what is no count (checked after).
int64_t to_count(double v) { return std::isfinite(v) && std::abs(v) < 1e18 ? static_cast<int64_t>(v) : -1; }

// With sizes, keep_aspect_ratio_policy may scale every axis alike: by the smallest ratio
// (not_larger) or the largest (not_smaller), the sizes then rounded half up.
void keep_aspect_ratio(NodeContext& c, std::vector<AxisPlan>& plans) {
  std::string policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy == "stretch") return;
  if (policy != "not_larger" && policy != "not_smaller") c.invalid("keep_aspect_ratio_policy \"", policy, "\"");
  double scale = plans.front().scale;
  for (const AxisPlan& p : plans) scale = policy == "not_larger" ? std::min(scale, p.scale) : std::max(scale, p.scale);
  for (AxisPlan& p : plans) {
    p.scale = scale;
    p.out = to_count(scale * static_cast<double>(p.in) + 0.5);
  }
}

// The tables are built here, so their sizes are bounded; the arithmetic needs finite values.
void check_plan(NodeContext& c, const AxisPlan& p) {
  if (!std::isfinite(p.scale) || p.scale <= 0 || !std::isfinite(p.roi_start) || !std::isfinite(p.roi_end))
    c.invalid("axis ", p.axis, " has the scale ", p.scale, " and roi ", p.roi_start, " to ", p.roi_end);
  if (p.in < 1 || p.out < 1) c.unsupported("axis ", p.axis, " resizes ", p.in, " to ", p.out, " elements");
  if (p.out > kMaxResized)
    c.unsupported("axis ", p.axis, " resizes to ", p.out, " elements (at most ", kMaxResized, ")");
}

// The plan of `axis` before its scale is known: its input length, or its symbolic dim.
AxisPlan plan_of(NodeContext& c, int64_t axis) {
  AxisPlan p;
  p.axis = axis;
  const Dim& d = c.type(0).dims[static_cast<size_t>(axis)];
  if (d.is_static()) p.in = d.static_value();
  else p.symbolic = d;
  return p;
}

// ---- symbolic axes ----
// Their tables cannot be built at import. Two resizes need none: the identity, and an
// upscale by an integer k that reads source floor(y / k) for output y (nearest, under most
// coordinate modes), which is repeating each element k times.

// Whether nearest resizing by the integer k maps y to y / k at every length: checked
// against the reference's own arithmetic (taps_for) on a few lengths, rather than derived
// mode by mode.
bool is_repeat(const Spec& s, int64_t k) {
  if (s.mode != "nearest" || s.coords == "tf_crop_and_resize") return false;
  for (int64_t n : {1, 2, 3, 5, 8, 13}) {
    AxisPlan p;
    p.in = n, p.out = n * k, p.scale = static_cast<double>(k);
    Taps t = taps_for(s, p);
    for (int64_t y = 0; y < p.out; ++y) {
      size_t at = static_cast<size_t>(y) * t.taps;
      size_t tap = t.weight[at] != 0 ? at : at + 1;
      if (t.index[tap] != y / k) return false;
    }
  }
  return true;
}

// The factor k with out == in * k (1 to 64), when the algebra shows one.
std::optional<int64_t> integer_factor(const Dim& in, const Dim& out) {
  for (int64_t k = 1; k <= 64; ++k)
    if (in * Dim(k) == out) return k;
  return std::nullopt;
}

// A symbolic axis scaled by `scale` (or resized to `size`): the identity or a repeat.
AxisPlan symbolic_plan(NodeContext& c, const Spec& s, AxisPlan p, std::optional<double> scale,
                       std::optional<Dim> size) {
  std::optional<int64_t> k;
  if (scale && *scale >= 1 && *scale <= 64 && *scale == std::floor(*scale)) k = static_cast<int64_t>(*scale);
  if (size) k = integer_factor(*p.symbolic, *size);
  if (k && *k == 1) return p;
  if (k && is_repeat(s, *k)) {
    p.repeat = *k;
    return p;
  }
  std::string by = scale ? str_cat("the scale ", *scale) : str_cat("the size ", *size);
  c.unsupported("axis ", p.axis, " has the symbolic dim ", *p.symbolic, " and ", by,
                "; max_c resizes a symbolic axis only to itself or, in mode \"nearest\", by an integer factor "
                "that repeats each element");
}

// Resized by `scale`: the output length is floor(in * scale).
AxisPlan scaled(AxisPlan p, double scale) {
  p.scale = scale;
  p.out = to_count(scale * static_cast<double>(p.in));
  return p;
}

// One plan per resized axis, in the order `axes` lists them.
std::vector<AxisPlan> plan_axes(NodeContext& c, const Spec& s) {
  int64_t r = c.rank(0);
  std::vector<int64_t> axes(static_cast<size_t>(r));
  for (int64_t a = 0; a < r; ++a) axes[static_cast<size_t>(a)] = a;
  if (auto a = c.attr_ints("axes")) axes = *a;
  for (int64_t& a : axes) a = c.axis(a, r, "axes entry");
  bool by_scales = has_values(c, 2);
  if (!by_scales && !has_values(c, 3)) c.invalid("needs scales or sizes");
  // Sizes read from shapes hold the input's own symbols ([n, c, 2 * h, 2 * w]).
  std::vector<Dim> sizes;
  if (!by_scales && c.known(3) && !c.known(3)->is_static()) sizes = c.known_dims(3, "sizes");
  std::vector<double> given;
  if (sizes.empty()) given = known_doubles(c, by_scales ? 2 : 3, by_scales ? "scales" : "sizes");
  size_t entries = sizes.empty() ? given.size() : sizes.size();
  if (entries != axes.size()) c.invalid("scales/sizes has ", entries, " entries for ", axes.size(), " axes");
  std::vector<double> roi;
  if (s.coords == "tf_crop_and_resize") {
    roi = known_doubles(c, 1, "roi");
    if (roi.size() != 2 * axes.size()) c.invalid("roi has ", roi.size(), " entries for ", axes.size(), " axes");
  }
  std::vector<AxisPlan> plans;
  bool any_symbolic = false;
  for (size_t i = 0; i < axes.size(); ++i) {
    AxisPlan p = plan_of(c, axes[i]);
    if (!roi.empty()) p.roi_start = roi[i], p.roi_end = roi[i + axes.size()];
    if (p.symbolic) {
      if (!roi.empty()) c.unsupported("tf_crop_and_resize on axis ", p.axis, ", whose dim ", *p.symbolic, " is symbolic");
      std::optional<Dim> size;
      if (!by_scales) size = sizes.empty() ? Dim(to_count(given[i])) : sizes[i];
      plans.push_back(symbolic_plan(c, s, p, by_scales ? std::optional<double>(given[i]) : std::nullopt, size));
      any_symbolic = true;
      continue;
    }
    if (!sizes.empty() && !sizes[i].is_static())
      c.unsupported("axis ", p.axis, " (static ", p.in, ") is resized to the symbolic size ", sizes[i]);
    double size = sizes.empty() ? given[i] : static_cast<double>(sizes[i].static_value());
    if (by_scales) p = scaled(p, given[i]);
    else p.out = to_count(size), p.scale = size / static_cast<double>(p.in);
    plans.push_back(p);
  }
  if (!by_scales && any_symbolic && c.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
    c.unsupported("keep_aspect_ratio_policy with a symbolic resized axis");
  if (!by_scales) keep_aspect_ratio(c, plans);
  for (const AxisPlan& p : plans)
    if (!p.symbolic) check_plan(c, p);
  return plans;
}

// An axis resized to itself (scale 1, the whole roi) is left alone, as the reference does.
bool is_identity(const AxisPlan& p) {
  auto close = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); };
  return close(p.scale, 1) && p.out == p.in && std::abs(p.roi_start) <= 1e-9 && close(p.roi_end, 1);
}

ValueId resize(NodeContext& c, const Spec& s, const std::vector<AxisPlan>& plans) {
  ValueId x = c.input(0);
  for (const AxisPlan& p : plans) {
    if (p.symbolic) {
      if (p.repeat) x = c.op("repeat_interleave", {x}, {{"repeats", p.repeat}, {"axis", p.axis}});
    } else if (!is_identity(p)) {
      x = resize_axis(c, s, x, p);
    }
  }
  return x;
}

void import_resize(NodeContext& c) {
  Spec s = read_spec(c);
  c.set_output(0, resize(c, s, plan_axes(c, s)));
}

// Upsample's scales, one per axis: the attribute before opset 9, input 1 from it on.
std::vector<double> upsample_scales(NodeContext& c) {
  if (c.opset() >= 9) return known_doubles(c, 1, "scales");
  std::optional<std::vector<float>> a = c.attr_floats("scales");
  if (!a) c.invalid("attribute 'scales' is required before opset 9");
  return {a->begin(), a->end()};
}

// Upsample (opsets 7 to 9) is the Resize that came before coordinate transformation modes:
// a source position is y / scale (asymmetric) and nearest rounds it down, as ONNX's version
// converter maps it onto Resize-11. It only enlarges: every scale is at least 1.
void import_upsample(NodeContext& c) {
  if (c.opset() >= 10) c.invalid("Upsample is deprecated from opset 10 on (Resize replaces it)");
  Spec s;
  s.mode = c.attr_string("mode", "nearest");
  if (s.mode != "nearest" && s.mode != "linear") c.invalid("mode \"", s.mode, "\" (expected nearest or linear)");
  s.coords = "asymmetric";
  s.nearest_mode = "floor";
  std::vector<double> scales = upsample_scales(c);
  if (static_cast<int64_t>(scales.size()) != c.rank(0))
    c.invalid("scales has ", scales.size(), " entries for an input of rank ", c.rank(0));
  std::vector<AxisPlan> plans;
  for (size_t a = 0; a < scales.size(); ++a) {
    if (!(scales[a] >= 1)) c.invalid("scales[", a, "] is ", scales[a], "; Upsample's scales must be >= 1");
    AxisPlan p = plan_of(c, static_cast<int64_t>(a));
    if (p.symbolic) {
      plans.push_back(symbolic_plan(c, s, p, scales[a], std::nullopt));
      continue;
    }
    plans.push_back(scaled(p, scales[a]));
    check_plan(c, plans.back());
  }
  c.set_output(0, resize(c, s, plans));
}

}  // namespace

void register_resize_importers(ImportTable& t) {
  t["Resize"] = import_resize;
  t["Upsample"] = import_upsample;
}

}  // namespace maxc::onnx

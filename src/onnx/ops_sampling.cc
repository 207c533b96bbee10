// Sampling operators: GridSample, AffineGrid and Col2Im, composed from gathers, matmuls and
// elementwise ops (there is no sampling kernel).
//
// GridSample's grid is a run-time input, so the source positions, their padding and the
// interpolation weights are computed in the graph, axis by axis, as the ONNX reference does
// (onnx/reference/ops/op_grid_sample.py): every tap of every axis becomes a clamped index
// into the flattened spatial input, read with one batched gather_nd; out-of-range taps under
// padding_mode "zeros" read zero. AffineGrid multiplies theta by a constant grid of
// homogeneous positions built here, so its size must be known at import. Col2Im sums the
// patch elements that land on each image element through a constant index table, so its
// image_shape and block_shape must be known at import.
#include <algorithm>
#include <cmath>

#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

// The most elements of a constant table or grid built here (as for the DFT matrices).
constexpr int64_t kMaxTable = int64_t{1} << 26;

// A float constant of `dt`: float32/float64 directly, 16-bit floats through float32.
ValueId float_constant(NodeContext& c, DType dt, std::vector<int64_t> shape, const std::vector<double>& v) {
  if (dt == DType::kFloat64 || dt == DType::kFloat32)
    return c.constant(KnownValue::from_doubles(dt, std::move(shape), v));
  return c.cast(c.constant(KnownValue::from_doubles(DType::kFloat32, std::move(shape), v)), dt);
}

int64_t static_dim(NodeContext& c, const Dim& d, std::string_view what) {
  if (!d.is_static()) c.unsupported(what, " is the symbolic dim ", d, "; it must be static");
  return d.static_value();
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Steps the multi-index `at` to the next element of `dims` in row-major order.
void advance(std::vector<int64_t>& at, const std::vector<int64_t>& dims) {
  for (size_t j = at.size(); j-- > 0 && ++at[j] == dims[j];) at[j] = 0;
}

// ---- GridSample ----

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct SampleSpec {
  Mode mode = Mode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
  DType work = DType::kFloat32;  // the coordinates' dtype: the grid's, at least float32
};

// Opset 16 spells the modes bilinear/bicubic, opset 20 linear/cubic; both are accepted.
SampleSpec read_sample_spec(NodeContext& c) {
  SampleSpec s;
  std::string mode = c.attr_string("mode", c.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "nearest") s.mode = Mode::kNearest;
  else if (mode == "linear" || mode == "bilinear") s.mode = Mode::kLinear;
  else if (mode == "cubic" || mode == "bicubic") s.mode = Mode::kCubic;
  else c.invalid("mode \"", mode, "\"");
  std::string padding = c.attr_string("padding_mode", "zeros");
  if (padding == "zeros") s.padding = Padding::kZeros;
  else if (padding == "border") s.padding = Padding::kBorder;
  else if (padding == "reflection") s.padding = Padding::kReflection;
  else c.invalid("padding_mode \"", padding, "\"");
  s.align_corners = c.attr_int("align_corners", 0) != 0;
  if (!dtype_is_float(c.dtype(1))) c.invalid("grid must be a float tensor");
  s.work = c.dtype(1) == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  return s;
}

// One spatial axis of X: its length and the range a coordinate is kept in (ONNX's borders:
// pixel centers with align_corners, pixel edges without).
struct SpatialAxis {
  int64_t size = 1;
  double lo = 0, hi = 0;
};

SpatialAxis spatial_axis(const SampleSpec& s, int64_t d) {
  double n = static_cast<double>(d);
  return s.align_corners ? SpatialAxis{d, 0, n - 1} : SpatialAxis{d, -0.5, n - 0.5};
}

// The taps of one axis, each [N, P, t]: the index (clamped into the axis), the weight
// (none for nearest) and whether the tap lies inside the axis (only under zeros padding).
struct AxisTaps {
  ValueId index = 0;
  std::optional<ValueId> weight, inside;
  int64_t count = 1;
};

class GridSampler {
 public:
  GridSampler(NodeContext& c, SampleSpec s) : c_(c), s_(s) {}

  ValueId sample(ValueId x, ValueId grid) {
    xt_ = c_.type_of(x);
    TensorType gt = c_.type_of(grid);
    int64_t r = xt_.rank() - 2;
    std::vector<int64_t> dims;
    for (int64_t k = 0; k < r; ++k) dims.push_back(spatial_size(xt_.dims[static_cast<size_t>(k + 2)], k));
    if (!(gt.dims[0] == xt_.dims[0])) grid = same_batch(grid, gt);
    for (int64_t k = 1; k <= r; ++k) points_ = points_ * gt.dims[static_cast<size_t>(k)];
    ValueId g = c_.reshape(c_.cast(grid, s_.work), {xt_.dims[0], points_, Dim(r)});
    std::vector<AxisTaps> taps;
    for (int64_t k = 0; k < r; ++k)
      taps.push_back(axis_taps(coordinate(g, r - 1 - k), spatial_axis(s_, dims[static_cast<size_t>(k)])));
    std::vector<Dim> out = {xt_.dims[0], xt_.dims[1]};
    out.insert(out.end(), gt.dims.begin() + 1, gt.dims.end() - 1);
    return c_.reshape(gather_and_weigh(x, combine(taps, dims)), out);
  }

 private:
  int64_t spatial_size(const Dim& d, int64_t k) {
    int64_t v = static_dim(c_, d, "spatial axis " + std::to_string(k) + " of X");
    if (v < 1) c_.unsupported("spatial axis ", k, " of X is empty");
    return v;
  }

  // X and grid name their batch differently: asserted equal at run time, so that every
  // later op sees one batch dim.
  ValueId same_batch(ValueId grid, const TensorType& gt) {
    const Dim& n = xt_.dims[0];
    if (gt.dims[0].is_static() && n.is_static()) c_.invalid("X has batch ", n, " but grid has ", gt.dims[0]);
    std::vector<Dim> dims = gt.dims;
    dims[0] = n;
    return c_.op("rebind", {grid}, {{"shape", dims}, {"message", std::string("GridSample: X and grid batch differ")}});
  }

  // ---- small builders, in the coordinates' dtype ----
  ValueId scalar(double v) { return c_.scalar(s_.work, v); }
  ValueId vec(const std::vector<double>& v) {
    return c_.constant(KnownValue::from_doubles(s_.work, {static_cast<int64_t>(v.size())}, v));
  }
  // ValueId is an integer, so the constant operand's overload has its own name.
  ValueId op(const char* name, ValueId a, ValueId b) { return c_.op(name, {a, b}); }
  ValueId op_k(const char* name, ValueId a, double k) { return c_.op(name, {a, scalar(k)}); }
  ValueId clamp(ValueId v, double lo, double hi) { return c_.op("clamp", {v}, {{"min", lo}, {"max", hi}}); }
  ValueId unsqueeze_last(ValueId v) { return c_.op("unsqueeze", {v}, {{"axis", int64_t{-1}}}); }

  // grid[..., j] as [N, P] (the grid lists the innermost axis first).
  ValueId coordinate(ValueId g, int64_t j) {
    ValueId j_index = c_.constant(KnownValue::from_doubles(DType::kInt64, {}, {static_cast<double>(j)}));
    return c_.op("gather", {g, j_index}, {{"axis", int64_t{2}}});
  }

  // The normalized [-1, 1] coordinate in pixels, in the reference's order of operations
  // (rounding decides ties of nearest and which positions count as outside).
  ValueId unnormalize(ValueId g, int64_t d) {
    ValueId plus_one = op_k("add", g, 1);
    if (s_.align_corners) return op_k("mul", op_k("mul", plus_one, 0.5), static_cast<double>(d - 1));
    return op_k("mul", op_k("sub", op_k("mul", plus_one, static_cast<double>(d)), 1), 0.5);
  }

  // Folds v into [lo, hi] by mirroring at the ends, repeatedly: a triangle wave of period
  // 2(hi - lo). A one-pixel axis with align_corners has no width; everything maps onto it.
  ValueId reflect(ValueId v, const SpatialAxis& a) {
    double span = a.hi - a.lo;
    if (span <= 0) return op_k("add", op_k("mul", v, 0), a.lo);
    ValueId m = op_k("mod", op_k("sub", v, a.lo), 2 * span);
    ValueId folded = c_.op("where", {op_k("greater", m, span), op("sub", scalar(2 * span), m), m});
    return op_k("add", folded, a.lo);
  }

  // Border and reflection padding move a coordinate outside [lo, hi] back in; one inside is
  // kept exactly as it is.
  ValueId keep_inside(ValueId x, const SpatialAxis& a) {
    if (s_.padding == Padding::kZeros) return x;
    ValueId outside = op("logical_or", op_k("less", x, a.lo), op_k("greater", x, a.hi));
    ValueId moved = s_.padding == Padding::kBorder ? clamp(x, 0, static_cast<double>(a.size - 1)) : reflect(x, a);
    return c_.op("where", {outside, moved, x});
  }

  // Integer-valued tap positions to indices inside the axis, as the reference reads pixels:
  // zeros marks the outside ones (read as 0), border clamps, reflection mirrors.
  void index_taps(ValueId pos, const SpatialAxis& a, AxisTaps& t) {
    double last = static_cast<double>(a.size - 1);
    if (s_.padding == Padding::kZeros)
      t.inside = op("logical_and", op_k("greater_equal", pos, 0), op_k("less_equal", pos, last));
    if (s_.padding == Padding::kReflection) pos = c_.op("round", {reflect(pos, a)});
    // The clamp also keeps a NaN or huge coordinate from becoming a bad index.
    t.index = c_.cast(clamp(pos, 0, last), DType::kInt64);
  }

  // Keys' cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 from floor(x),
  // at distances s = |frac - tap|: s <= 1 for the middle two, 1 < s < 2 for the outer two.
  ValueId cubic_weights(ValueId frac) {
    constexpr double A = -0.75;
    ValueId s = c_.op("abs", {op("sub", frac, vec({-1, 0, 1, 2}))});
    ValueId inner = op_k("add", op("mul", op_k("sub", op_k("mul", s, A + 2), A + 3), op("mul", s, s)), 1);
    ValueId outer = op("mul", op_k("sub", op_k("mul", s, A), 5 * A), s);  // ((A s - 5A) s + 8A) s - 4A
    outer = op_k("sub", op("mul", op_k("add", outer, 8 * A), s), 4 * A);
    ValueId middle = c_.constant(KnownValue::from_doubles(DType::kBool, {4}, {0, 1, 1, 0}));
    return c_.op("where", {middle, inner, outer});
  }

  AxisTaps axis_taps(ValueId g, const SpatialAxis& a) {
    ValueId x = unnormalize(g, a.size);
    if (s_.mode == Mode::kNearest) x = c_.op("round", {x});  // ties to even, as PyTorch
    x = keep_inside(x, a);
    AxisTaps t;
    if (s_.mode == Mode::kNearest) {
      index_taps(unsqueeze_last(x), a, t);
      return t;
    }
    ValueId base = c_.op("floor", {x});
    ValueId frac = unsqueeze_last(op("sub", x, base));
    bool cubic = s_.mode == Mode::kCubic;
    t.count = cubic ? 4 : 2;
    index_taps(op("add", unsqueeze_last(base), cubic ? vec({-1, 0, 1, 2}) : vec({0, 1})), a, t);
    t.weight = cubic ? cubic_weights(frac)
                     : c_.op("concat", {op("sub", scalar(1), frac), frac}, {{"axis", int64_t{-1}}});
    return t;
  }

  // The axes' taps crossed: [N, P, t_0, .., t_r-1] flat indices into the spatial axes,
  // weight products and masks.
  AxisTaps combine(const std::vector<AxisTaps>& taps, const std::vector<int64_t>& dims) {
    size_t r = taps.size();
    AxisTaps all;
    std::optional<ValueId> index;
    int64_t stride = 1;
    for (size_t k = r; k-- > 0;) {
      std::vector<Dim> shape = {xt_.dims[0], points_};
      for (size_t j = 0; j < r; ++j) shape.push_back(Dim(j == k ? taps[k].count : 1));
      ValueId idx = c_.reshape(taps[k].index, shape);
      if (stride != 1) idx = c_.op("mul", {idx, c_.scalar(DType::kInt64, static_cast<double>(stride))});
      index = index ? op("add", *index, idx) : idx;
      if (taps[k].weight) {
        ValueId w = c_.reshape(*taps[k].weight, shape);
        all.weight = all.weight ? op("mul", *all.weight, w) : w;
      }
      if (taps[k].inside) {
        ValueId m = c_.reshape(*taps[k].inside, shape);
        all.inside = all.inside ? op("logical_and", *all.inside, m) : m;
      }
      all.count *= taps[k].count;
      stride *= dims[k];
    }
    all.index = *index;
    return all;
  }

  // Gathers the taps from X as [N, S, C] rows (one gather_nd row per tap), zeroes the
  // outside ones, weighs and sums them: [N, C, P].
  ValueId gather_and_weigh(ValueId x, const AxisTaps& t) {
    const Dim &n = xt_.dims[0], &channels = xt_.dims[1];
    Dim spatial = 1;
    for (size_t k = 2; k < xt_.dims.size(); ++k) spatial = spatial * xt_.dims[k];
    auto flat = [&](ValueId v) { return c_.reshape(v, {n, points_ * Dim(t.count), Dim(1)}); };
    std::vector<int64_t> swap = {0, 2, 1};
    ValueId rows = c_.op("permute", {c_.reshape(x, {n, channels, spatial})}, {{"dims", swap}});
    ValueId v = c_.op("gather_nd", {rows, flat(t.index)}, {{"batch_dims", int64_t{1}}});  // [N, P*T, C]
    if (t.inside) v = c_.op("where", {flat(*t.inside), v, c_.scalar(xt_.dtype, 0)});
    if (t.weight) {
      v = op("mul", v, c_.cast(flat(*t.weight), xt_.dtype));
      v = c_.op("sum", {c_.reshape(v, {n, points_, Dim(t.count), channels})}, {{"axis", int64_t{2}}});
      v = c_.reshape(v, {n, points_, channels});
    }
    return c_.op("permute", {v}, {{"dims", swap}});
  }

  NodeContext& c_;
  SampleSpec s_;
  TensorType xt_;
  Dim points_ = 1;  // output positions per batch element
};

void import_grid_sample(NodeContext& c) {
  SampleSpec s = read_sample_spec(c);
  int64_t r = c.rank(0) - 2;
  if (r < 1) c.invalid("X must have rank >= 3 [N, C, spatial..], got ", c.rank(0));
  if (r > 3) c.unsupported("X of rank ", r + 2, "; 4-D and 5-D inputs (2 or 3 spatial axes) are supported");
  if (c.opset() < 20 && r != 2) c.invalid("opset ", c.opset(), " GridSample takes 4-D input only");
  TensorType gt = c.type(1);
  if (gt.rank() != r + 2) c.invalid("grid must have rank ", r + 2, " for X of rank ", r + 2, ", got ", gt.rank());
  if (!(gt.dims.back() == Dim(r))) c.invalid("grid's last dim must be ", r, ", got ", gt.dims.back());
  if (s.mode != Mode::kNearest && !dtype_is_float(c.dtype(0)))
    c.unsupported("mode linear/cubic on X of a non-float dtype (only nearest reads it unconverted)");
  c.set_output(0, GridSampler(c, s).sample(c.input(0), c.input(1)));
}

// ---- AffineGrid ----

// Evenly spaced positions in [-1, 1] along one axis: pixel centers of a [-1, 1] image
// (align_corners 0) or from -1 to 1 inclusive (align_corners 1; a single pixel sits at -1).
std::vector<double> base_positions(int64_t d, bool align_corners) {
  std::vector<double> p(static_cast<size_t>(d));
  double n = static_cast<double>(d);
  for (int64_t i = 0; i < d; ++i) {
    double fi = static_cast<double>(i);
    double centered = -1.0 + (2.0 * fi + 1.0) / n, spanned = d == 1 ? -1.0 : -1.0 + fi * 2.0 / (n - 1);
    p[static_cast<size_t>(i)] = align_corners ? spanned : centered;
  }
  return p;
}

// The [P, r+1] homogeneous positions, rows in the output's order, each (x, y[, z], 1): the
// innermost axis first, as GridSample reads them.
std::vector<double> base_grid(const std::vector<int64_t>& dims, bool align_corners) {
  size_t r = dims.size();
  std::vector<std::vector<double>> axes;
  for (int64_t d : dims) axes.push_back(base_positions(d, align_corners));
  std::vector<double> out;
  std::vector<int64_t> at(r, 0);
  for (int64_t p = 0; p < product(dims); ++p, advance(at, dims)) {
    for (size_t j = r; j-- > 0;) out.push_back(axes[j][static_cast<size_t>(at[j])]);
    out.push_back(1);
  }
  return out;
}

void import_affine_grid(NodeContext& c) {
  std::vector<Dim> size = c.known_dims(1, "size");
  if (size.size() != 4 && size.size() != 5)
    c.invalid("size must have 4 or 5 entries (N, C, [D,] H, W), got ", size.size());
  int64_t r = static_cast<int64_t>(size.size()) - 2;
  std::vector<int64_t> dims;
  for (size_t k = 2; k < size.size(); ++k) {
    dims.push_back(static_dim(c, size[k], "size entry " + std::to_string(k)));
    if (dims.back() < 1) c.unsupported("size entry ", k, " is ", dims.back(), "; an empty grid is not built");
  }
  std::vector<int64_t> grid_dims = dims;
  grid_dims.push_back(r + 1);
  bounded_elements(c, grid_dims, "the base grid (positions x coordinates)", kMaxTable);
  TensorType tt = c.type(0);
  if (tt.rank() != 3 || !(tt.dims[1] == Dim(r)) || !(tt.dims[2] == Dim(r + 1)))
    c.invalid("theta must be [N, ", r, ", ", r + 1, "] for a size of ", size.size(), " entries");
  if (!dtype_is_float(tt.dtype)) c.invalid("theta must be a float tensor");
  bool align = c.attr_int("align_corners", 0) != 0;
  ValueId base = float_constant(c, tt.dtype, {product(dims), r + 1}, base_grid(dims, align));
  ValueId theta_t = c.op("permute", {c.input(0)}, {{"dims", std::vector<int64_t>{0, 2, 1}}});
  ValueId grid = c.op("matmul", {base, theta_t});  // [N, P, r]
  std::vector<Dim> out = {tt.dims[0]};
  for (int64_t d : dims) out.push_back(Dim(d));
  out.push_back(Dim(r));
  c.set_output(0, c.reshape(grid, out));
}

// ---- Col2Im ----

struct Col2ImPlan {
  std::vector<int64_t> image, block, dilations, pads, strides, blocks;  // blocks: per axis
  int64_t kernel = 1, length = 1;  // elements of a block, number of blocks
};

std::vector<int64_t> attr_or(NodeContext& c, std::string_view name, size_t n, int64_t def) {
  std::vector<int64_t> v = c.attr_ints(name).value_or(std::vector<int64_t>(n, def));
  if (v.size() != n) c.invalid("attribute '", name, "' has ", v.size(), " entries, expected ", n);
  return v;
}

Col2ImPlan plan_col2im(NodeContext& c) {
  Col2ImPlan p;
  p.image = c.known_ints(1, "image_shape");
  p.block = c.known_ints(2, "block_shape");
  size_t n = p.image.size();
  if (n == 0 || p.block.size() != n) c.invalid("image_shape and block_shape must have the same, nonzero length");
  p.dilations = attr_or(c, "dilations", n, 1);
  p.strides = attr_or(c, "strides", n, 1);
  p.pads = attr_or(c, "pads", 2 * n, 0);
  // Bounded first, so the spans and block counts below cannot overflow.
  check_values_in(c, "image_shape", p.image, 1, kMaxWindowValue);
  check_values_in(c, "block_shape", p.block, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'dilations'", p.dilations, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'strides'", p.strides, 1, kMaxWindowValue);
  check_values_in(c, "attribute 'pads'", p.pads, 0, kMaxWindowValue);
  for (size_t i = 0; i < n; ++i) {
    bool positive = p.image[i] > 0 && p.block[i] > 0 && p.dilations[i] > 0 && p.strides[i] > 0;
    if (!positive || p.pads[i] < 0 || p.pads[i + n] < 0)
      c.invalid("axis ", i, ": image, block, dilation and stride must be positive and pads non-negative");
    int64_t span = p.dilations[i] * (p.block[i] - 1) + 1;
    int64_t blocks = (p.image[i] + p.pads[i] + p.pads[i + n] - span) / p.strides[i] + 1;
    if (blocks < 1) c.invalid("axis ", i, " fits no block (", span, " elements) in the padded image");
    p.blocks.push_back(blocks);
  }
  // col2im_sources visits every (block element, block) pair and fills one list per image
  // element: both are bounded like the tables they become.
  bounded_elements(c, p.image, "the image", kMaxTable);
  p.kernel = bounded_elements(c, p.block, "the block", kMaxTable);
  p.length = bounded_elements(c, p.blocks, "the blocks", kMaxTable);
  bounded_elements(c, {p.kernel, p.length}, "the column (block elements x blocks)", kMaxTable);
  return p;
}

// For each image element, the positions (k * L + l) of the column elements that land on it,
// by increasing k (the reference's order of addition).
std::vector<std::vector<int64_t>> col2im_sources(const Col2ImPlan& p) {
  size_t n = p.image.size();
  std::vector<std::vector<int64_t>> src(static_cast<size_t>(product(p.image)));
  std::vector<int64_t> k_at(n, 0);
  for (int64_t k = 0; k < p.kernel; ++k, advance(k_at, p.block)) {
    std::vector<int64_t> l_at(n, 0);
    for (int64_t l = 0; l < p.length; ++l, advance(l_at, p.blocks)) {
      int64_t flat = 0;
      bool inside = true;
      for (size_t i = 0; i < n; ++i) {
        int64_t pos = l_at[i] * p.strides[i] - p.pads[i] + k_at[i] * p.dilations[i];
        inside = inside && pos >= 0 && pos < p.image[i];
        flat = flat * p.image[i] + pos;
      }
      if (inside) src[static_cast<size_t>(flat)].push_back(k * p.length + l);
    }
  }
  return src;
}

void import_col2im(NodeContext& c) {
  if (c.rank(0) != 3) c.invalid("input must have rank 3 [N, C * prod(block_shape), L], got ", c.rank(0));
  Col2ImPlan p = plan_col2im(c);
  TensorType xt = c.type(0);
  int64_t ck = static_dim(c, xt.dims[1], "input dim 1 (C * prod(block_shape))");
  int64_t len = static_dim(c, xt.dims[2], "input dim 2 (the number of blocks)");
  if (ck % p.kernel != 0) c.invalid("input dim 1 (", ck, ") is no multiple of the block's ", p.kernel, " elements");
  if (len != p.length) c.invalid("input dim 2 is ", len, " but the image holds ", p.length, " blocks");
  std::vector<std::vector<int64_t>> src = col2im_sources(p);
  int64_t width = 1, image = product(p.image), zero = p.kernel * p.length;
  for (const auto& s : src) width = std::max<int64_t>(width, static_cast<int64_t>(s.size()));
  bounded_elements(c, {image, width}, "the index table (image elements x sources)", kMaxTable);
  if (width > 1 && !(dtype_is_float(xt.dtype) || dtype_is_integral(xt.dtype)))
    c.unsupported("overlapping blocks of a non-numeric dtype");
  std::vector<double> table;
  bool padded = false;
  for (const auto& s : src)
    for (int64_t j = 0; j < width; ++j) {
      bool have = j < static_cast<int64_t>(s.size());
      padded = padded || !have;
      table.push_back(static_cast<double>(have ? s[static_cast<size_t>(j)] : zero));
    }
  Dim channels(ck / p.kernel);
  ValueId x = c.reshape(c.input(0), {xt.dims[0], channels, Dim(zero)});
  // Image elements with fewer sources read an appended zero.
  if (padded) x = c.op("pad", {x}, {{"paddings", std::vector<int64_t>{0, 0, 0, 0, 0, 1}}, {"value", 0.0}});
  ValueId index = c.constant(KnownValue::from_doubles(DType::kInt64, {image, width}, table));
  ValueId y = c.op("gather", {x, index}, {{"axis", int64_t{2}}});  // [N, C, S, width]
  if (width > 1) y = c.op("sum", {y}, {{"axis", int64_t{3}}});
  std::vector<Dim> out = {xt.dims[0], channels};
  for (int64_t d : p.image) out.push_back(Dim(d));
  c.set_output(0, c.reshape(y, out));
}

}  // namespace

void register_sampling_importers(ImportTable& t) {
  t["GridSample"] = import_grid_sample;
  t["AffineGrid"] = import_affine_grid;
  t["Col2Im"] = import_col2im;
}

}  // namespace maxc::onnx

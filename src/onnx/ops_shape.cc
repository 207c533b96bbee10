// Shape and layout operators. Our shape ops take their shapes and axes as attributes, so
// ONNX's shape operands must be known at import time; Shape itself yields a known value
// (the input's Dims, symbols included), which is how dynamic-shape exports stay importable.
// Small known integer tensors stay known through these ops (folded here).
#include <algorithm>
#include <numeric>

#include "onnx/bound_dims.h"
#include "onnx/dim_agreement.h"
#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

constexpr int64_t kOpen = INT64_MAX;

std::vector<Dim> dims_from(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

// Re-labels a known input's elements with a new static shape (Reshape, Unsqueeze, ...).
bool fold_relabel(NodeContext& c, const std::vector<Dim>& out_dims) {
  const KnownValue* k = c.known(0);
  if (!k || !k->ints) return false;
  std::vector<int64_t> shape;
  for (const Dim& d : out_dims) {
    if (!d.is_static()) return false;
    shape.push_back(d.static_value());
  }
  // Another element count is no relabelling: left to the reshape, which refuses it by name.
  if (checked_product(shape) != static_cast<int64_t>(k->ints->size())) return false;
  c.set_known_output(0, KnownValue::from_dims(k->dtype, shape, *k->ints));
  return true;
}

void reshape_to(NodeContext& c, std::vector<Dim> dims) {
  if (fold_relabel(c, dims)) return;
  c.set_output(0, c.reshape(c.input(0), std::move(dims)));
}

// ---- Shape, Size ----

void import_shape(NodeContext& c) {
  const std::vector<Dim>& dims = c.type(0).dims;
  int64_t r = static_cast<int64_t>(dims.size());
  auto clamp = [r](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
  int64_t start = clamp(c.attr_int("start", 0)), end = clamp(c.attr_int("end", r));
  std::vector<Dim> out;
  for (int64_t i = start; i < end; ++i) out.push_back(dims[static_cast<size_t>(i)]);
  int64_t n = static_cast<int64_t>(out.size());
  c.set_known_output(0, KnownValue::from_dims(DType::kInt64, {n}, std::move(out)));
}

void import_size(NodeContext& c) {
  c.set_known_output(0, KnownValue::from_dims(DType::kInt64, {}, {c.type(0).num_elements()}));
}

// ---- Reshape, Flatten, Squeeze, Unsqueeze ----

// A static product when possible, else -1 is left for the op to infer.
std::vector<Dim> reshape_dims(NodeContext& c) {
  std::vector<Dim> shape = c.known_dims(1, "shape");
  const std::vector<Dim>& in = c.type(0).dims;
  bool allow_zero = c.attr_int("allowzero", 0) != 0;
  std::optional<size_t> minus_one;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].is_static()) continue;
    int64_t v = shape[i].static_value();
    if (v == 0 && !allow_zero) {
      if (i >= in.size()) c.invalid("shape entry ", i, " is 0 (copy) but the input has rank ", in.size());
      shape[i] = in[i];
    } else if (v == -1) {
      if (minus_one) c.invalid("shape has more than one -1");
      minus_one = i;
    } else if (v < 0) {
      c.invalid("shape entry ", i, " is ", v);
    }
  }
  if (minus_one) {  // resolve it here when everything is static, so known values can fold
    Dim known(1);
    for (size_t i = 0; i < shape.size(); ++i)
      if (i != *minus_one) known = known * shape[i];
    Dim total = dims_product(in);
    if (known.is_static() && total.is_static() && known.static_value() != 0)
      shape[*minus_one] = Dim(total.static_value() / known.static_value());
  }
  return shape;
}

// The element count of `shape` with its -1 (if any) resolved as total // (the others'
// product): exact when the run-time check of checked_count passes.
std::vector<Dim> resolve_minus_one(std::vector<Dim> shape, const Dim& total) {
  Dim known(1);
  std::optional<size_t> minus_one;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].is_static() && shape[i].static_value() == -1) minus_one = i;
    else known = known * shape[i];
  }
  if (minus_one && !(known == Dim(0)) && !(floordiv(total, known) * known == total))
    shape[*minus_one] = floordiv(total, known);
  return shape;
}

// x's elements as [count], asserted at run time (rebind): for a Reshape whose element counts
// the Dim algebra cannot prove equal ((h*w)//4 against (h//2)*(w//2), ...). ONNX Runtime
// checks them when the model runs; so does the plan of each binding, naming this node.
ValueId checked_count(NodeContext& c, ValueId x, const Dim& count) {
  const Dim elements = c.type_of(x).num_elements();
  ValueId flat = c.reshape(x, {elements});
  std::string message = str_cat(c.label(), ": the shape asks for ", count, " elements but the input has ", elements);
  return c.op("rebind", {flat}, {{"shape", std::vector<Dim>{count}}, {"message", std::move(message)}});
}

// Entry k of an int64 [n] tensor whose entries are `dims` (symbols read from the shapes).
ValueId dims_tensor(NodeContext& c, std::vector<Dim> dims) {
  const int64_t n = static_cast<int64_t>(dims.size());
  return c.constant(KnownValue::from_dims(DType::kInt64, {n}, std::move(dims)));
}

ValueId equals(NodeContext& c, ValueId v, int64_t k) { return c.op("equal", {v, c.scalar(DType::kInt64, k)}); }

// A shape computed at run time with its 0 entries (copy the input's dim, unless allowzero)
// and its -1 (the element count over the other entries' product) resolved in the graph,
// as ONNX Runtime resolves them, before bind_dims names the entries.
ValueId resolved_shape(NodeContext& c) {
  ValueId s = c.cast(c.input(1), DType::kInt64);
  const size_t n = static_cast<size_t>(c.type(1).dims[0].static_value());
  const std::vector<Dim>& in = c.type(0).dims;
  if (c.attr_int("allowzero", 0) == 0) {
    std::vector<Dim> copy(n, Dim(0));
    for (size_t i = 0; i < std::min(n, in.size()); ++i) copy[i] = in[i];
    s = c.op("where", {equals(c, s, 0), dims_tensor(c, copy), s});
  }
  const ValueId one = c.scalar(DType::kInt64, 1), minus_one = equals(c, s, -1);
  std::vector<ValueId> others = {c.op("where", {minus_one, one, s})};
  if (n > 1) others = c.ops("split", {others[0]}, {{"split_sizes", std::vector<Dim>(n, Dim(1))}, {"axis", int64_t{0}}});
  ValueId product = others[0];
  for (size_t i = 1; i < others.size(); ++i) product = c.op("mul", {product, others[i]});
  product = c.op("where", {equals(c, product, 0), one, product});
  // Exact in float64 for any count a tensor can have; a count the product does not divide
  // fails the element-count check when the model runs.
  const ValueId total = c.constant(KnownValue::from_dims(DType::kInt64, {1}, {c.type(0).num_elements()}));
  ValueId rest = c.op("div", {c.cast(total, DType::kFloat64), c.cast(product, DType::kFloat64)});
  return c.op("where", {minus_one, c.cast(rest, DType::kInt64), s});
}

void import_reshape(NodeContext& c) {
  if (bindable(c, 1) && c.type(1).dims[0].static_value() > 0) {
    std::vector<Dim> dims = bind_dims(c, resolved_shape(c), "reshape");
    return c.set_output(0, c.reshape(checked_count(c, c.input(0), dims_product(dims)), dims));
  }
  std::vector<Dim> shape = reshape_dims(c);
  const Dim total = c.type(0).num_elements();
  std::vector<Dim> resolved = resolve_minus_one(shape, total);
  const Dim count = dims_product(resolved);
  bool has_minus_one = std::any_of(resolved.begin(), resolved.end(),
                                   [](const Dim& d) { return d.is_static() && d.static_value() == -1; });
  // Static counts, provably equal counts and a -1 the algebra divides stay the plain reshape
  // (which refuses a static mismatch at import, by name).
  if (has_minus_one || count == total || (count.is_static() && total.is_static()))
    return reshape_to(c, std::move(shape));
  c.set_output(0, c.reshape(checked_count(c, c.input(0), count), std::move(resolved)));
}

void import_flatten(NodeContext& c) {
  const std::vector<Dim>& in = c.type(0).dims;
  int64_t r = static_cast<int64_t>(in.size());
  int64_t axis = c.attr_int("axis", 1);
  if (axis < -r || axis > r) c.invalid("axis ", axis, " is out of range for rank ", r);
  if (axis < 0) axis += r;
  Dim outer = dims_product({in.begin(), in.begin() + axis}), inner = dims_product({in.begin() + axis, in.end()});
  reshape_to(c, {outer, inner});
}

std::vector<int64_t> axes_operand(NodeContext& c, size_t input, const char* attr) {
  if (c.opset() >= 13 && c.has_input(input)) return c.known_ints(input, "axes");
  return c.attr_ints(attr).value_or(std::vector<int64_t>{});
}

void import_unsqueeze(NodeContext& c) {
  std::vector<int64_t> axes = axes_operand(c, 1, "axes");
  std::vector<Dim> in = c.type(0).dims;
  int64_t out_rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> is_new(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) {
    int64_t n = c.axis(a, out_rank, "axes entry");
    if (is_new[static_cast<size_t>(n)]) c.invalid("axes names axis ", n, " twice");
    is_new[static_cast<size_t>(n)] = true;
  }
  std::vector<Dim> out;
  size_t j = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(is_new[static_cast<size_t>(i)] ? Dim(1) : in[j++]);
  reshape_to(c, std::move(out));
}

// A named axis whose dim is an expression the algebra cannot show to be 1 (a height that
// one input size brings down to 1) is asserted 1 when the model runs, as ONNX Runtime checks.
void import_squeeze(NodeContext& c) {
  const std::vector<Dim> in = c.type(0).dims;
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  std::vector<Dim> asserted = in;
  if (c.has_input(1) || c.attr("axes")) {
    for (int64_t a : axes_operand(c, 1, "axes")) {
      size_t n = static_cast<size_t>(c.axis(a, r, "axes entry"));
      if (undecided(in[n], Dim(1))) asserted[n] = Dim(1);
      else if (!(in[n] == Dim(1))) c.invalid("axis ", n, " has dim ", in[n], ", not 1");
      drop[n] = true;
    }
  } else {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == Dim(1);
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  if (asserted == in) return reshape_to(c, std::move(out));
  c.set_output(0, c.reshape(assert_dims(c, c.input(0), asserted, "input 0"), std::move(out)));
}

// ---- Transpose ----

// A known value's elements permuted (a pads list [[b0, e0], [b1, e1]] transposed into
// [b0, b1, e0, e1] order, as PyTorch's exporter writes F.pad).
bool fold_transpose(NodeContext& c, const std::vector<int64_t>& perm) {
  const KnownValue* k = c.known(0);
  if (!k || !k->ints || perm.size() != k->shape.size()) return false;
  const size_t r = perm.size();
  std::vector<int64_t> out_shape(r), in_strides(r, 1);
  for (size_t i = r; i-- > 1;) in_strides[i - 1] = in_strides[i] * k->shape[i];
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < r; ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(r) || seen[static_cast<size_t>(perm[i])])
      return false;  // left to the op, which names the bad perm
    seen[static_cast<size_t>(perm[i])] = true;
    out_shape[i] = k->shape[static_cast<size_t>(perm[i])];
  }
  std::vector<Dim> out;
  std::vector<int64_t> index(r, 0);  // the output position, last axis fastest
  for (size_t n = 0; n < k->ints->size(); ++n) {
    int64_t from = 0;
    for (size_t i = 0; i < r; ++i) from += index[i] * in_strides[static_cast<size_t>(perm[i])];
    out.push_back((*k->ints)[static_cast<size_t>(from)]);
    for (size_t i = r; i-- > 0;) {
      if (++index[i] < out_shape[i]) break;
      index[i] = 0;
    }
  }
  c.set_known_output(0, KnownValue::from_dims(k->dtype, std::move(out_shape), std::move(out)));
  return true;
}

void import_transpose(NodeContext& c) {
  int64_t r = c.rank(0);
  std::vector<int64_t> perm(static_cast<size_t>(r));
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (auto p = c.attr_ints("perm")) perm = *p;
  std::vector<int64_t> identity(static_cast<size_t>(r));
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) return c.set_output(0, c.input(0));
  if (fold_transpose(c, perm)) return;
  c.set_output(0, c.op("permute", {c.input(0)}, {{"dims", perm}}));
}

// ---- Concat, Split ----

bool fold_concat(NodeContext& c) {
  std::vector<Dim> out;
  DType dtype = DType::kInvalid;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    const KnownValue* k = c.known(i);
    if (!k || !k->ints || k->shape.size() != 1) return false;
    dtype = k->dtype;
    out.insert(out.end(), k->ints->begin(), k->ints->end());
  }
  int64_t n = static_cast<int64_t>(out.size());
  c.set_known_output(0, KnownValue::from_dims(dtype, {n}, std::move(out)));
  return true;
}

void import_concat(NodeContext& c) {
  if (c.num_inputs() == 0) c.invalid("needs at least one input");
  if (!c.attr("axis")) c.invalid("attribute 'axis' is required");
  if (fold_concat(c)) return;
  std::vector<ValueId> ins;
  for (size_t i = 0; i < c.num_inputs(); ++i) ins.push_back(c.input(i));
  if (ins.size() == 1) return c.set_output(0, ins[0]);
  const int64_t axis = c.attr_int("axis", 0);
  c.set_output(0, c.op("concat", assert_concatenable(c, std::move(ins), axis), {{"axis", axis}}));
}

// A known vector split into known parts: a shape split into its dims (AffineGrid's function
// body splits its size input into N, C, H, W) stays shape arithmetic.
bool fold_split(NodeContext& c, const std::vector<Dim>& sizes) {
  const KnownValue* k = c.known(0);
  if (!k || !k->ints || k->shape.size() != 1) return false;
  // Folded only when the parts cover the vector exactly; split's own check refuses the rest.
  uint64_t total = 0;
  for (const Dim& s : sizes) {
    if (!s.is_static() || s.static_value() < 0 || static_cast<uint64_t>(s.static_value()) > k->ints->size()) return false;
    total += static_cast<uint64_t>(s.static_value());  // at most sizes x 2^14: no overflow
  }
  if (total != k->ints->size()) return false;
  size_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    size_t n = static_cast<size_t>(sizes[i].static_value());
    std::vector<Dim> part(k->ints->begin() + static_cast<std::ptrdiff_t>(at),
                          k->ints->begin() + static_cast<std::ptrdiff_t>(at + n));
    c.set_known_output(i, KnownValue::from_dims(k->dtype, {static_cast<int64_t>(n)}, std::move(part)));
    at += n;
  }
  return true;
}

void import_split(NodeContext& c) {
  const std::vector<Dim>& in = c.type(0).dims;
  int64_t axis = c.axis(c.attr_int("axis", 0), static_cast<int64_t>(in.size()));
  const Dim& d = in[static_cast<size_t>(axis)];
  int64_t outputs = static_cast<int64_t>(c.num_outputs());
  std::vector<Dim> sizes;
  if (c.has_input(1)) {
    for (int64_t s : c.known_ints(1, "split")) sizes.push_back(s);
  } else if (auto s = c.attr_ints("split")) {
    for (int64_t v : *s) sizes.push_back(v);
  } else if (c.attr("num_outputs")) {
    int64_t n = c.attr_int("num_outputs", 1);
    if (n != outputs) c.invalid("num_outputs is ", n, " but the node has ", outputs, " outputs");
    if (!d.is_static()) c.unsupported("num_outputs needs a static dim along the axis, got ", d);
    int64_t each = (d.static_value() + n - 1) / n;
    for (int64_t i = 0, left = d.static_value(); i < n; ++i, left -= each) sizes.push_back(std::min(each, left));
  } else {
    std::vector<ValueId> parts = c.ops("chunk", {c.input(0)}, {{"chunks", outputs}, {"axis", axis}});
    for (size_t i = 0; i < parts.size(); ++i) c.set_output(i, parts[i]);
    return;
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    c.invalid("splits into ", sizes.size(), " parts but has ", outputs, " outputs");
  if (fold_split(c, sizes)) return;
  std::vector<ValueId> parts = c.ops("split", {c.input(0)}, {{"split_sizes", sizes}, {"axis", axis}});
  for (size_t i = 0; i < parts.size(); ++i) c.set_output(i, parts[i]);
}

// ---- Expand, Tile ----

// ONNX Expand broadcasts both ways: the result is broadcast(input shape, shape).
//
// A shape computed at run time has its 1 entries replaced by the input's dims in the graph
// before bind_dims names them; the input's dims that are not a static 1 are asserted equal
// to the bound ones when the model runs (a broadcast ONNX forbids fails there).
void expand_to_bound_shape(NodeContext& c) {
  const std::vector<Dim> in = c.type(0).dims;
  const size_t n = static_cast<size_t>(c.type(1).dims[0].static_value());
  const size_t rank = std::max(in.size(), n);
  std::vector<Dim> aligned(n, Dim(1));  // the input's dim under each entry of the shape
  for (size_t j = 0; j < n; ++j)
    if (j + in.size() >= n) aligned[j] = in[j + in.size() - n];
  ValueId s = c.cast(c.input(1), DType::kInt64);
  s = c.op("where", {equals(c, s, 1), dims_tensor(c, aligned), s});
  const std::vector<Dim> bound = bind_dims(c, s, "expand");
  std::vector<Dim> out(rank), want = in;
  for (size_t i = 0; i < rank; ++i) {
    const bool has_in = i + in.size() >= rank, has_shape = i + n >= rank;
    const Dim a = has_in ? in[i + in.size() - rank] : Dim(1);
    out[i] = has_shape ? bound[i + n - rank] : a;
    if (has_in && has_shape && !(a == Dim(1))) want[i + in.size() - rank] = out[i];
  }
  const ValueId x = assert_dims(c, c.input(0), want, "input 0");
  c.set_output(0, c.op("broadcast_to", {x}, {{"shape", out}}));
}

void import_expand(NodeContext& c) {
  if (bindable(c, 1)) return expand_to_bound_shape(c);
  std::vector<Dim> target = c.known_dims(1, "shape");
  std::vector<Dim> in = c.type(0).dims;
  size_t n = std::max(in.size(), target.size());
  std::vector<Dim> out(n);
  for (size_t i = 0; i < n; ++i) {
    Dim a = i < n - in.size() ? Dim(1) : in[i - (n - in.size())];
    Dim b = i < n - target.size() ? Dim(1) : target[i - (n - target.size())];
    if (b == Dim(1) || a == b) out[i] = a;
    else if (a == Dim(1)) out[i] = b;
    else c.unsupported("cannot broadcast dim ", a, " of the input to ", b, " (axis ", i, ")");
  }
  if (out == in) return c.set_output(0, c.input(0));
  c.set_output(0, c.op("broadcast_to", {c.input(0)}, {{"shape", out}}));
}

void import_tile(NodeContext& c) {
  std::vector<Dim> repeats = input_dims(c, 1, "repeats", "tile");
  c.set_output(0, c.op("tile", {c.input(0)}, {{"repeats", repeats}}));
}

// ---- Pad ----

// Our pad takes its fill as an attribute; a fill known only at run time (a CastLike of -inf
// to float16 in Attention's function body) is selected into the padded cells, which are
// found by padding an all-false tensor with true.
ValueId pad_with_runtime_value(NodeContext& c, ValueId x, const std::vector<int64_t>& paddings, ValueId value) {
  ValueId padded = c.op("pad", {x}, {{"paddings", paddings}, {"value", 0.0}});
  ValueId all_false = c.constant(KnownValue::from_doubles(DType::kBool, {}, {0}));
  all_false = c.op("broadcast_to", {all_false}, {{"shape", c.type_of(x).dims}});
  ValueId is_pad = c.op("pad", {all_false}, {{"paddings", paddings}, {"value", 1.0}});
  ValueId fill = c.reshape(c.cast(value, c.type_of(x).dtype), {});
  return c.op("where", {is_pad, fill, padded});
}

// Where output position j (counted from the input's first element, so negative in the
// leading pad) reads from along an axis of length d: the nearest end (edge), the mirror image
// that does not repeat the end element (reflect, periodic past 2(d-1)), or modulo d (wrap).
int64_t pad_source_index(std::string_view mode, int64_t j, int64_t d) {
  if (j >= 0 && j < d) return j;
  if (mode == "edge") return std::clamp<int64_t>(j, 0, d - 1);
  if (mode == "wrap") return ((j % d) + d) % d;
  if (d == 1) return 0;
  int64_t period = 2 * (d - 1), m = ((j % period) + period) % period;
  return m < d ? m : period - m;
}

// x[start:stop] along `axis`, asserted at run time to be `length` long (a symbolic axis too
// short for its pads fails there, naming the slice, as ONNX Runtime fails).
ValueId slice_along(NodeContext& c, ValueId x, int64_t axis, const Dim& start, const Dim& stop, int64_t length) {
  std::vector<Dim> starts(static_cast<size_t>(axis + 1), Dim(0)), stops = c.type_of(x).dims;
  stops.resize(static_cast<size_t>(axis + 1));
  std::vector<Dim> out_dims(stops.begin(), stops.end());
  starts.back() = start, stops.back() = stop, out_dims.back() = Dim(length);
  return c.op("slice_tensor", {x}, {{"starts", starts}, {"stops", stops}, {"out_dims", out_dims}});
}

// The `count` elements of a static-length piece along `axis`, picked by index (reversed, or
// one element repeated).
ValueId pick_along(NodeContext& c, ValueId piece, int64_t axis, const std::vector<double>& index) {
  int64_t n = static_cast<int64_t>(index.size());
  return c.op("gather", {piece, c.constant(KnownValue::from_doubles(DType::kInt64, {n}, index))}, {{"axis", axis}});
}

// The `n` elements that pad a symbolic axis of length d before (leading) or after it: the
// mirror image without the end element (reflect), the end element repeated (edge), or the
// other end's elements (wrap). Pieces of static length sliced at symbolic offsets, so one
// plan serves every d.
ValueId pad_piece(NodeContext& c, std::string_view mode, ValueId x, int64_t axis, int64_t n, bool leading) {
  const Dim d = c.type_of(x).dims[static_cast<size_t>(axis)];
  std::vector<double> reversed, repeated(static_cast<size_t>(n), 0.0);
  for (int64_t i = n - 1; i >= 0; --i) reversed.push_back(static_cast<double>(i));
  if (mode == "reflect")
    return pick_along(c, leading ? slice_along(c, x, axis, 1, n + 1, n) : slice_along(c, x, axis, d - n - 1, d - 1, n),
                      axis, reversed);
  if (mode == "edge")
    return pick_along(c, leading ? slice_along(c, x, axis, 0, 1, 1) : slice_along(c, x, axis, d - 1, d, 1), axis,
                      repeated);
  return leading ? slice_along(c, x, axis, d - n, d, n) : slice_along(c, x, axis, 0, n, n);  // wrap
}

// edge, reflect or wrap padding of an axis whose length is a symbol: concat(before, x, after).
ValueId pad_symbolic_axis(NodeContext& c, std::string_view mode, ValueId x, int64_t axis, int64_t before,
                          int64_t after) {
  const Dim d = c.type_of(x).dims[static_cast<size_t>(axis)];
  if (before < 0 || after < 0)
    c.unsupported("mode \"", mode, "\" with the negative pads ", before, " and ", after, " on axis ", axis,
                  ", whose dim ", d, " is symbolic");
  std::vector<ValueId> parts;
  if (before > 0) parts.push_back(pad_piece(c, mode, x, axis, before, true));
  parts.push_back(x);
  if (after > 0) parts.push_back(pad_piece(c, mode, x, axis, after, false));
  return c.op("concat", parts, {{"axis", axis}});
}

// edge, reflect and wrap pads read existing elements, so each padded axis is one gather with
// a constant index list (negative pads simply leave positions out); a symbolic axis is
// padded by pieces (pad_symbolic_axis).
void import_pad_by_index(NodeContext& c, std::string_view mode, const std::vector<int64_t>& axes,
                         const std::vector<int64_t>& pads) {
  ValueId x = c.input(0);
  int64_t r = c.rank(0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = c.axis(axes[i], r, "axes entry"), before = pads[i], after = pads[i + axes.size()];
    if (before == 0 && after == 0) continue;
    const Dim dim = c.type_of(x).dims[static_cast<size_t>(a)];
    if (!dim.is_static()) {
      x = pad_symbolic_axis(c, mode, x, a, before, after);
      continue;
    }
    int64_t d = dim.static_value(), n = d + before + after;
    if (d == 0) c.invalid("mode \"", mode, "\" cannot pad the empty axis ", a);
    if (n < 0) c.invalid("pads remove more than the ", d, " elements of axis ", a);
    std::vector<double> idx(static_cast<size_t>(bounded_elements(c, {n}, str_cat("mode \"", mode, "\"'s index list"))));
    for (int64_t k = 0; k < n; ++k) idx[static_cast<size_t>(k)] = static_cast<double>(pad_source_index(mode, k - before, d));
    ValueId indices = c.constant(KnownValue::from_doubles(DType::kInt64, {n}, idx));
    x = c.op("gather", {x, indices}, {{"axis", a}});
  }
  c.set_output(0, x);
}

void import_pad(NodeContext& c) {
  std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    c.invalid("mode \"", mode, "\" (ONNX has constant, edge, reflect and wrap)");
  int64_t r = c.rank(0);
  // Before opset 11, pads and the fill value were attributes.
  const bool attributes = c.opset() < 11;
  std::vector<int64_t> pads = attributes ? c.required_attr_ints("pads") : c.known_ints(1, "pads");
  std::vector<int64_t> axes(static_cast<size_t>(r));
  std::iota(axes.begin(), axes.end(), 0);
  if (!attributes && c.has_input(3)) axes = c.known_ints(3, "axes");
  if (pads.size() != 2 * axes.size()) c.invalid("pads has ", pads.size(), " entries for ", axes.size(), " axes");
  check_values_in(c, "pads", pads, -kMaxPadding, kMaxPadding);
  if (mode != "constant") return import_pad_by_index(c, mode, axes, pads);
  double value = attributes ? c.attr_float("value", 0.0f) : 0.0;
  std::optional<ValueId> runtime_value;  // a constant_value computed at run time
  if (!attributes && c.has_input(2)) {
    const KnownValue* k = c.known(2);
    auto v = k ? k->doubles() : std::nullopt;
    if (v && v->size() == 1) value = (*v)[0];
    else if (c.type(2).num_elements() == Dim(1)) runtime_value = c.input(2);
    else c.invalid("input 2 'constant_value' must hold one value");
  }
  std::vector<int64_t> paddings(static_cast<size_t>(2 * r), 0);
  std::vector<int64_t> cut(static_cast<size_t>(2 * r), 0);  // negative pads crop
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t a = static_cast<size_t>(c.axis(axes[i], r, "axes entry"));
    int64_t before = pads[i], after = pads[i + axes.size()];
    paddings[2 * a] = std::max<int64_t>(before, 0);
    paddings[2 * a + 1] = std::max<int64_t>(after, 0);
    cut[2 * a] = std::max<int64_t>(-before, 0);
    cut[2 * a + 1] = std::max<int64_t>(-after, 0);
  }
  ValueId x = c.input(0);
  if (std::any_of(paddings.begin(), paddings.end(), [](int64_t p) { return p != 0; }))
    x = runtime_value ? pad_with_runtime_value(c, x, paddings, *runtime_value)
                      : c.op("pad", {x}, {{"paddings", paddings}, {"value", value}});
  if (std::any_of(cut.begin(), cut.end(), [](int64_t p) { return p != 0; })) {
    std::vector<Dim> starts, stops;
    for (int64_t a = 0; a < r; ++a) {
      const Dim d = c.type_of(x).dims[static_cast<size_t>(a)];
      starts.push_back(cut[2 * a]);
      stops.push_back(d - cut[2 * a + 1]);
    }
    x = c.op("slice_tensor", {x}, {{"starts", starts}, {"stops", stops}});
  }
  c.set_output(0, x);
}

// ---- CenterCropPad ----

// Each listed axis is cut or zero-padded to its target length around the center; an odd
// difference puts the extra element at the end (crop) or after (pad), as ONNX defines.
void import_center_crop_pad(NodeContext& c) {
  std::vector<int64_t> shape = c.known_ints(1, "shape");
  const std::vector<Dim>& in = c.type(0).dims;
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes(static_cast<size_t>(r));
  std::iota(axes.begin(), axes.end(), 0);
  if (auto a = c.attr_ints("axes")) axes = *a;
  if (shape.size() != axes.size()) c.invalid("shape has ", shape.size(), " entries for ", axes.size(), " axes");
  std::vector<Dim> starts(in.size(), Dim(0)), stops = in;
  std::vector<int64_t> paddings(2 * in.size(), 0);
  bool crop = false, pad = false;
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t a = static_cast<size_t>(c.axis(axes[i], r, "axes entry"));
    int64_t target = shape[i];
    if (target < 0) c.invalid("shape entry ", i, " is ", target);
    if (in[a] == Dim(target)) continue;
    if (!in[a].is_static()) c.unsupported("needs a static dim on axis ", a, ", got ", in[a]);
    int64_t d = in[a].static_value();
    if (target < d) {
      starts[a] = Dim((d - target) / 2);
      stops[a] = Dim((d - target) / 2 + target);
      crop = true;
    } else {
      paddings[2 * a] = (target - d) / 2;
      paddings[2 * a + 1] = target - d - (target - d) / 2;
      pad = true;
    }
  }
  ValueId x = c.input(0);
  if (crop) x = c.op("slice_tensor", {x}, {{"starts", starts}, {"stops", stops}});
  if (pad) x = c.op("pad", {x}, {{"paddings", paddings}, {"value", 0.0}});
  c.set_output(0, x);
}

// ---- DepthToSpace, SpaceToDepth (NCHW, static dims) ----

std::vector<int64_t> static_dims(NodeContext& c, size_t i) {
  std::vector<int64_t> out;
  for (const Dim& d : c.type(i).dims) {
    if (!d.is_static()) c.unsupported("needs static dims, got ", dims_to_string(c.type(i).dims));
    out.push_back(d.static_value());
  }
  return out;
}

void rearrange(NodeContext& c, std::vector<int64_t> split, std::vector<int64_t> perm, std::vector<int64_t> out) {
  ValueId x = c.reshape(c.input(0), dims_from(split));
  x = c.op("permute", {x}, {{"dims", perm}});
  c.set_output(0, c.reshape(x, dims_from(out)));
}

void import_depth_to_space(NodeContext& c) {
  if (c.rank(0) != 4) c.invalid("input must have rank 4");
  auto d = static_dims(c, 0);
  int64_t b = c.attr_int("blocksize", 0);
  if (b < 1 || d[1] % (b * b)) c.invalid("blocksize ", b, " does not divide the ", d[1], " channels");
  int64_t n = d[0], ch = d[1] / (b * b), h = d[2], w = d[3];
  std::vector<int64_t> out = {n, ch, h * b, w * b};
  if (c.attr_string("mode", "DCR") == "DCR") rearrange(c, {n, b, b, ch, h, w}, {0, 3, 4, 1, 5, 2}, out);
  else rearrange(c, {n, ch, b, b, h, w}, {0, 1, 4, 2, 5, 3}, out);
}

void import_space_to_depth(NodeContext& c) {
  if (c.rank(0) != 4) c.invalid("input must have rank 4");
  auto d = static_dims(c, 0);
  int64_t b = c.attr_int("blocksize", 0);
  if (b < 1 || d[2] % b || d[3] % b) c.invalid("blocksize ", b, " does not divide the spatial dims");
  int64_t n = d[0], ch = d[1], h = d[2] / b, w = d[3] / b;
  std::vector<int64_t> perm = {0, 3, 5, 1, 2, 4};  // DCR: the block offsets lead the channels
  if (c.attr_string("mode", "DCR") == "CRD") perm = {0, 1, 3, 5, 2, 4};
  rearrange(c, {n, ch, h, b, w, b}, perm, {n, ch * b * b, h, w});
}

}  // namespace

void register_shape_importers(ImportTable& t) {
  t["Shape"] = import_shape;
  t["Size"] = import_size;
  t["Reshape"] = import_reshape;
  t["Flatten"] = import_flatten;
  t["Unsqueeze"] = import_unsqueeze;
  t["Squeeze"] = import_squeeze;
  t["Transpose"] = import_transpose;
  t["Concat"] = import_concat;
  t["Split"] = import_split;
  t["Expand"] = import_expand;
  t["Tile"] = import_tile;
  t["Pad"] = import_pad;
  t["CenterCropPad"] = import_center_crop_pad;
  t["DepthToSpace"] = import_depth_to_space;
  t["SpaceToDepth"] = import_space_to_depth;
}

}  // namespace maxc::onnx

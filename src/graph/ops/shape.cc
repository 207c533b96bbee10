// Shape and layout ops (inventory §5.11, 17): reshape, flatten, squeeze, unsqueeze,
// transpose, permute, broadcast_to, concat, stack, split, chunk, tile, repeat_interleave, pad,
// rebind, as_interleaved_complex, shape_to_tensor.
//
// Dims are compared structurally: where the graph cannot prove two dims equal (a reshape of
// [a] to [b], a split of [n] into [m, 3]) it is an error, and rebind is how a caller asserts
// a shape that the engine then checks at run time.
#include <numeric>

#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/ops/shape_checks.h"

namespace maxc {
namespace {

// More outputs than any real model uses; guards chunk against allocating absurd counts.
constexpr int64_t kMaxOutputs = int64_t{1} << 16;

TensorType with_dims(const TensorType& t, std::vector<Dim> dims) {
  TensorType out = t;
  out.dims = std::move(dims);
  return out;
}

std::string input0(const InferContext& ctx) {
  return ctx.input_label(0) + " " + dims_to_string(ctx.input(0).dims);
}

// ---- reshape, flatten, squeeze, unsqueeze ----------------------------------------------------

// One target dim may be -1: the element count divided by the others' product, when the graph
// can prove the division exact. Otherwise the element counts must be provably equal.
std::vector<TensorType> infer_reshape(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  std::vector<Dim> shape = ctx.attr<std::vector<Dim>>("shape");
  std::optional<size_t> inferred;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].is_static() || shape[i].static_value() >= 0) continue;
    if (shape[i].static_value() != -1)
      ctx.fail("attribute 'shape' ", dims_to_string(shape), " has the negative dim ", shape[i], " at entry ", i,
               "; only one -1 is allowed");
    if (inferred)
      ctx.fail("attribute 'shape' ", dims_to_string(shape), " has more than one -1 (entries ", *inferred, " and ", i,
               ")");
    inferred = i;
  }
  Dim elements = x.num_elements();
  Dim known(1);
  for (size_t i = 0; i < shape.size(); ++i)
    if (i != inferred) known = known * shape[i];
  if (inferred) {
    std::optional<Dim> q = exact_div(elements, known);
    if (!q)
      ctx.fail("cannot infer the -1 in attribute 'shape' ", dims_to_string(shape), ": ", input0(ctx), " has ",
               elements, " elements, which the other dims (", known, " elements) do not provably divide");
    shape[*inferred] = *q;
  } else if (!(elements == known)) {
    bool both_static = elements.is_static() && known.is_static();
    ctx.fail("attribute 'shape' ", dims_to_string(shape), " has ", known, " elements but ", input0(ctx), " has ",
             elements, both_static ? "" : "; they must be provably equal (rebind the input first)");
  }
  return {with_dims(x, std::move(shape))};
}

// Merges the dims from start_dim to end_dim (inclusive) into their product. A scalar becomes [1].
std::vector<TensorType> infer_flatten(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  int64_t start = ctx.attr<int64_t>("start_dim"), end = ctx.attr<int64_t>("end_dim");
  if (x.rank() == 0 && (start == 0 || start == -1) && (end == 0 || end == -1)) return {with_dims(x, {1})};
  start = normalize_axis(ctx, start, x.rank(), "attribute 'start_dim'");
  end = normalize_axis(ctx, end, x.rank(), "attribute 'end_dim'");
  if (start > end)
    ctx.fail("attribute 'start_dim' (axis ", start, ") comes after attribute 'end_dim' (axis ", end, ") for ",
             input0(ctx));
  std::vector<Dim> dims(x.dims.begin(), x.dims.begin() + start);
  dims.push_back(dims_product(std::vector<Dim>(x.dims.begin() + start, x.dims.begin() + end + 1)));
  dims.insert(dims.end(), x.dims.begin() + end + 1, x.dims.end());
  return {with_dims(x, std::move(dims))};
}

std::vector<TensorType> infer_squeeze(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  int64_t axis = normalize_axis(ctx, ctx.attr<int64_t>("axis"), x.rank());
  const Dim& d = x.dims[static_cast<size_t>(axis)];
  if (!(d == Dim(1))) ctx.fail("axis ", axis, " of ", input0(ctx), " is ", d, "; only a static 1 can be squeezed");
  std::vector<Dim> dims = x.dims;
  dims.erase(dims.begin() + axis);
  return {with_dims(x, std::move(dims))};
}

// The new axis is a static 1; a negative axis counts from rank + 1.
std::vector<TensorType> infer_unsqueeze(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  int64_t axis = normalize_axis(ctx, ctx.attr<int64_t>("axis"), x.rank() + 1);
  std::vector<Dim> dims = x.dims;
  dims.insert(dims.begin() + axis, Dim(1));
  return {with_dims(x, std::move(dims))};
}

// ---- transpose, permute, broadcast_to --------------------------------------------------------

std::vector<TensorType> infer_transpose(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  int64_t a = normalize_axis(ctx, ctx.attr<int64_t>("axis_1"), x.rank(), "attribute 'axis_1'");
  int64_t b = normalize_axis(ctx, ctx.attr<int64_t>("axis_2"), x.rank(), "attribute 'axis_2'");
  std::vector<Dim> dims = x.dims;
  std::swap(dims[static_cast<size_t>(a)], dims[static_cast<size_t>(b)]);
  return {with_dims(x, std::move(dims))};
}

// Output axis i is input axis dims[i]; `dims` must name every axis once (negatives count from
// the end).
std::vector<TensorType> infer_permute(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const auto& perm = ctx.attr<std::vector<int64_t>>("dims");
  if (static_cast<int64_t>(perm.size()) != x.rank())
    ctx.fail("attribute 'dims' ", ints_to_string(perm), " has ", perm.size(), " entries but ", input0(ctx),
             " has rank ", x.rank());
  std::vector<bool> seen(perm.size(), false);
  std::vector<Dim> dims;
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t axis = normalize_axis(ctx, perm[i], x.rank(), str_cat("entry ", i, " of attribute 'dims'"));
    if (seen[static_cast<size_t>(axis)])
      ctx.fail("attribute 'dims' ", ints_to_string(perm), " names axis ", axis, " twice; it must be a permutation");
    seen[static_cast<size_t>(axis)] = true;
    dims.push_back(x.dims[static_cast<size_t>(axis)]);
  }
  return {with_dims(x, std::move(dims))};
}

// Each input dim (aligned at the last axis) must be a static 1 or equal to the target's. The
// target is attribute `shape`, or, when the shape is a run-time tensor (input 1 `shape_tensor`,
// MAX's tensor-valued `shape`), attribute `out_dims`.
std::vector<TensorType> infer_broadcast_to(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  std::string target_name;
  if (ctx.num_inputs() == 2) {
    if (ctx.has_attr("shape"))
      ctx.fail("attribute 'shape' must be left out when input 1 'shape_tensor' gives the shape; name the result's "
               "dims with attribute 'out_dims'");
    if (!ctx.has_attr("out_dims"))
      ctx.fail("attribute 'out_dims' is required when the shape is a tensor (input 1 'shape_tensor')");
    require_dtype(ctx, 1, DTypeClass::kInteger);
    require_rank(ctx, 1, 1);
    target_name = "out_dims";
  } else {
    if (ctx.has_attr("out_dims"))
      ctx.fail("attribute 'out_dims' is only for a tensor shape (input 1 'shape_tensor'); give the dims as attribute "
               "'shape'");
    if (!ctx.has_attr("shape"))
      ctx.fail("attribute 'shape' is required (or a tensor shape as input 1 'shape_tensor' with attribute 'out_dims')");
    target_name = "shape";
  }
  const auto& target = ctx.attr<std::vector<Dim>>(target_name);
  require_non_negative_dims(ctx, target_name, target);
  if (ctx.num_inputs() == 2) {
    const Dim& n = ctx.input(1).dims[0];
    if (n.is_static() && n.static_value() != static_cast<int64_t>(target.size()))
      ctx.fail(ctx.input_label(1), " holds ", n, " dims but attribute 'out_dims' ", dims_to_string(target), " has ",
               target.size());
  }
  if (target.size() < x.dims.size())
    ctx.fail("cannot broadcast ", input0(ctx), " to the lower rank ", target.size(), " of attribute '", target_name,
             "' ", dims_to_string(target));
  size_t offset = target.size() - x.dims.size();
  for (size_t j = 0; j < x.dims.size(); ++j) {
    const Dim& in = x.dims[j];
    const Dim& want = target[offset + j];
    if (!(in == want) && !(in == Dim(1)))
      ctx.fail("cannot broadcast ", input0(ctx), " to ", dims_to_string(target), ": axis ", j, " is ", in,
               " but the target has ", want, "; only an equal dim or a static 1 broadcasts");
  }
  return {TensorType{x.dtype, target, x.device}};
}

// ---- concat, stack, split, chunk -------------------------------------------------------------

// Every input has input 0's dtype, device and rank; with `skip_axis` >= 0, its dims must equal
// input 0's everywhere but there.
void check_same_shapes(const InferContext& ctx, int64_t skip_axis) {
  const TensorType& first = ctx.input(0);
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input(i);
    if (t.rank() != first.rank())
      ctx.fail(ctx.input_label(i), " ", dims_to_string(t.dims), " has rank ", t.rank(), " but ", input0(ctx),
               " has rank ", first.rank());
    for (int64_t j = 0; j < first.rank(); ++j) {
      if (j == skip_axis || t.dims[static_cast<size_t>(j)] == first.dims[static_cast<size_t>(j)]) continue;
      ctx.fail(ctx.input_label(i), " ", dims_to_string(t.dims), " differs from ", input0(ctx), " at axis ", j, " (",
               t.dims[static_cast<size_t>(j)], " vs ", first.dims[static_cast<size_t>(j)], ")",
               skip_axis >= 0 ? str_cat("; only axis ", skip_axis, " may differ") : std::string());
    }
  }
}

std::vector<TensorType> infer_concat(const InferContext& ctx) {
  require_same_dtype(ctx);
  common_device(ctx);
  const TensorType& first = ctx.input(0);
  int64_t axis = normalize_axis(ctx, ctx.attr<int64_t>("axis"), first.rank());
  check_same_shapes(ctx, axis);
  Dim total(0);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) total = total + ctx.input(i).dims[static_cast<size_t>(axis)];
  return {with_dims(first, with_dim(first.dims, axis, total))};
}

// A new axis of size len(values); a negative axis counts from rank + 1.
std::vector<TensorType> infer_stack(const InferContext& ctx) {
  require_same_dtype(ctx);
  common_device(ctx);
  check_same_shapes(ctx, -1);
  const TensorType& first = ctx.input(0);
  int64_t axis = normalize_axis(ctx, ctx.attr<int64_t>("axis"), first.rank() + 1);
  std::vector<Dim> dims = first.dims;
  dims.insert(dims.begin() + axis, Dim(static_cast<int64_t>(ctx.num_inputs())));
  return {with_dims(first, std::move(dims))};
}

// One output per entry of split_sizes, which must provably sum to the axis' dim.
std::vector<TensorType> infer_split(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  int64_t axis = normalize_axis(ctx, ctx.attr<int64_t>("axis"), x.rank());
  const auto& sizes = ctx.attr<std::vector<Dim>>("split_sizes");
  if (sizes.empty()) ctx.fail("attribute 'split_sizes' is empty; it needs at least one size");
  require_non_negative_dims(ctx, "split_sizes", sizes);
  Dim total(0);
  for (const Dim& s : sizes) total = total + s;
  const Dim& d = x.dims[static_cast<size_t>(axis)];
  if (!(total == d))
    ctx.fail("attribute 'split_sizes' ", dims_to_string(sizes), " sums to ", total, " but axis ", axis, " of ",
             input0(ctx), " is ", d);
  std::vector<TensorType> out;
  for (const Dim& s : sizes) out.push_back(with_dims(x, with_dim(x.dims, axis, s)));
  return out;
}

// `chunks` outputs of equal size; chunks must provably divide the axis' dim.
std::vector<TensorType> infer_chunk(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  int64_t axis = normalize_axis(ctx, ctx.attr<int64_t>("axis"), x.rank());
  int64_t chunks = ctx.attr<int64_t>("chunks");
  if (chunks < 1 || chunks > kMaxOutputs)
    ctx.fail("attribute 'chunks' is ", chunks, "; it must be >= 1 and <= ", kMaxOutputs);
  const Dim& d = x.dims[static_cast<size_t>(axis)];
  std::optional<Dim> size = exact_div(d, chunks);
  if (!size)
    ctx.fail("attribute 'chunks' (", chunks, ") does not evenly divide axis ", axis, " of ", input0(ctx), " (", d,
             ")");
  return std::vector<TensorType>(static_cast<size_t>(chunks), with_dims(x, with_dim(x.dims, axis, *size)));
}

// ---- tile, repeat_interleave, pad --------------------------------------------------------------

std::vector<TensorType> infer_tile(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const auto& repeats = ctx.attr<std::vector<Dim>>("repeats");
  if (static_cast<int64_t>(repeats.size()) != x.rank())
    ctx.fail("attribute 'repeats' ", dims_to_string(repeats), " has ", repeats.size(), " entries but ", input0(ctx),
             " has rank ", x.rank());
  require_non_negative_dims(ctx, "repeats", repeats);
  std::vector<Dim> dims;
  for (size_t i = 0; i < repeats.size(); ++i) dims.push_back(x.dims[i] * repeats[i]);
  return {with_dims(x, std::move(dims))};
}

// Like torch.repeat_interleave. The repeats are attribute `repeats` (one count for every
// element) or input 1 `repeats_tensor` (a scalar or one count per element along the axis, known only at run
// time, so `out_dim` names the result's length). Without `axis` the input is flattened first.
std::vector<TensorType> infer_repeat_interleave(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  bool tensor_repeats = ctx.num_inputs() == 2;
  if (tensor_repeats && ctx.has_attr("repeats"))
    ctx.fail("attribute 'repeats' must be left out when input 1 'repeats_tensor' is given");
  if (!tensor_repeats && !ctx.has_attr("repeats"))
    ctx.fail("the repeats are missing: give attribute 'repeats' or input 1 'repeats_tensor'");
  std::vector<Dim> dims = x.dims;
  int64_t axis = 0;
  if (ctx.has_attr("axis")) axis = normalize_axis(ctx, ctx.attr<int64_t>("axis"), x.rank());
  else dims = {x.num_elements()};
  const Dim& d = dims[static_cast<size_t>(axis)];

  std::optional<Dim> computed;
  if (!tensor_repeats) {
    int64_t n = ctx.attr<int64_t>("repeats");
    if (n <= 0) ctx.fail("attribute 'repeats' is ", n, "; it must be > 0");
    computed = d * n;
  } else {
    require_dtype(ctx, 1, DTypeClass::kInteger);
    const TensorType& r = ctx.input(1);
    if (r.rank() > 1)
      ctx.fail(ctx.input_label(1), " must be a scalar or rank 1, got ", dims_to_string(r.dims));
    if (r.rank() == 1 && !(r.dims[0] == Dim(1)) && !(r.dims[0] == d) && r.dims[0].is_static() && d.is_static())
      ctx.fail(ctx.input_label(1), " ", dims_to_string(r.dims), " must hold 1 or ", d,
               " counts (one per element along the axis)");
  }
  if (ctx.has_attr("out_dim")) {
    const auto& out_dim = ctx.attr<std::vector<Dim>>("out_dim");
    if (out_dim.size() != 1) ctx.fail("attribute 'out_dim' must hold exactly one dim, got ", dims_to_string(out_dim));
    require_non_negative_dims(ctx, "out_dim", out_dim);
    if (computed && computed->is_static() && out_dim[0].is_static() && !(*computed == out_dim[0]))
      ctx.fail("attribute 'out_dim' is ", out_dim[0], " but the repeats give ", *computed);
    computed = out_dim[0];
  }
  if (!computed) ctx.fail("attribute 'out_dim' is required when the repeats are a tensor (input 1 'repeats_tensor')");
  return {with_dims(x, with_dim(dims, axis, *computed))};
}

// paddings = [before_0, after_0, before_1, ...], non-negative; only "constant" mode.
std::vector<TensorType> infer_pad(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const auto& paddings = ints_attr_of_size(ctx, "paddings", 2 * x.dims.size());
  require_ints_at_least(ctx, "paddings", paddings, 0);
  const std::string& mode = ctx.attr<std::string>("mode");
  if (mode != "constant") ctx.fail("attribute 'mode' is \"", mode, "\"; only \"constant\" is supported");
  std::vector<Dim> dims;
  for (size_t i = 0; i < x.dims.size(); ++i) dims.push_back(x.dims[i] + paddings[2 * i] + paddings[2 * i + 1]);
  return {with_dims(x, std::move(dims))};
}

// ---- rebind, as_interleaved_complex, shape_to_tensor -------------------------------------------

// A run-time assertion that x has `shape`; at build time only the rank and static dims are
// checked.
std::vector<TensorType> infer_rebind(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const auto& shape = ctx.attr<std::vector<Dim>>("shape");
  if (static_cast<int64_t>(shape.size()) != x.rank())
    ctx.fail("attribute 'shape' ", dims_to_string(shape), " has rank ", shape.size(), " but ", input0(ctx),
             " has rank ", x.rank());
  require_non_negative_dims(ctx, "shape", shape);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (x.dims[i].is_static() && shape[i].is_static() && !(x.dims[i] == shape[i]))
      ctx.fail("axis ", i, " of ", input0(ctx), " is ", x.dims[i], " but attribute 'shape' ", dims_to_string(shape),
               " asserts ", shape[i]);
  }
  return {with_dims(x, shape)};
}

// [..., 2n] -> [..., n, 2]: (real, imag) pairs.
std::vector<TensorType> infer_as_interleaved_complex(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kFloat);
  require_min_rank(ctx, 0, 1);
  const TensorType& x = ctx.input(0);
  std::optional<Dim> half = exact_div(x.dims.back(), 2);
  if (!half) ctx.fail("the last dim of ", input0(ctx), " is ", x.dims.back(), "; it must be (provably) even");
  std::vector<Dim> dims(x.dims.begin(), x.dims.end() - 1);
  dims.push_back(*half);
  dims.push_back(2);
  return {with_dims(x, std::move(dims))};
}

// The dims of `shape` as an int64 vector; symbolic dims take their run-time values.
std::vector<TensorType> infer_shape_to_tensor(const InferContext& ctx) {
  const auto& shape = ctx.attr<std::vector<Dim>>("shape");
  require_non_negative_dims(ctx, "shape", shape);
  return {TensorType{DType::kInt64, {static_cast<int64_t>(shape.size())}, ctx.attr<DeviceRef>("device")}};
}

OpSchema on_x(std::string name, std::vector<AttrSpec> attrs, InferFn infer) {
  return OpSchema{.name = std::move(name), .inputs = {{"x"}}, .attrs = std::move(attrs), .infer = std::move(infer)};
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  r.add(on_x("reshape", {AttrSpec::required("shape", AttrKind::kDims)}, infer_reshape));
  r.add(on_x("flatten", {AttrSpec::with_default("start_dim", int64_t{0}), AttrSpec::with_default("end_dim", int64_t{-1})},
             infer_flatten));
  r.add(on_x("squeeze", {AttrSpec::required("axis", AttrKind::kInt)}, infer_squeeze));
  r.add(on_x("unsqueeze", {AttrSpec::required("axis", AttrKind::kInt)}, infer_unsqueeze));
  r.add(on_x("transpose", {AttrSpec::required("axis_1", AttrKind::kInt), AttrSpec::required("axis_2", AttrKind::kInt)},
             infer_transpose));
  r.add(on_x("permute", {AttrSpec::required("dims", AttrKind::kInts)}, infer_permute));
  r.add(OpSchema{.name = "broadcast_to",
                 .inputs = {{"x"}, {"shape_tensor", Arity::kOptional}},
                 .attrs = {AttrSpec::optional("shape", AttrKind::kDims), AttrSpec::optional("out_dims", AttrKind::kDims)},
                 .infer = infer_broadcast_to});
  r.add(OpSchema{.name = "concat",
                 .inputs = {{"values", Arity::kVariadic}},
                 .attrs = {AttrSpec::with_default("axis", int64_t{0})},
                 .infer = infer_concat});
  r.add(OpSchema{.name = "stack",
                 .inputs = {{"values", Arity::kVariadic}},
                 .attrs = {AttrSpec::with_default("axis", int64_t{0})},
                 .infer = infer_stack});
  r.add(on_x("split", {AttrSpec::required("split_sizes", AttrKind::kDims), AttrSpec::with_default("axis", int64_t{0})},
             infer_split));
  r.add(on_x("chunk", {AttrSpec::required("chunks", AttrKind::kInt), AttrSpec::with_default("axis", int64_t{0})},
             infer_chunk));
  r.add(on_x("tile", {AttrSpec::required("repeats", AttrKind::kDims)}, infer_tile));
  r.add(OpSchema{.name = "repeat_interleave",
                 .inputs = {{"x"}, {"repeats_tensor", Arity::kOptional}},
                 .attrs = {AttrSpec::optional("repeats", AttrKind::kInt), AttrSpec::optional("axis", AttrKind::kInt),
                           AttrSpec::optional("out_dim", AttrKind::kDims)},
                 .infer = infer_repeat_interleave});
  r.add(OpSchema{.name = "pad",
                 .inputs = {{"input"}},
                 .attrs = {AttrSpec::required("paddings", AttrKind::kInts),
                           AttrSpec::with_default("mode", std::string("constant")),
                           AttrSpec::with_default("value", 0.0)},
                 .infer = infer_pad});
  r.add(on_x("rebind", {AttrSpec::required("shape", AttrKind::kDims), AttrSpec::with_default("message", std::string())},
             infer_rebind));
  r.add(on_x("as_interleaved_complex", {}, infer_as_interleaved_complex));
  r.add(OpSchema{.name = "shape_to_tensor",
                 .attrs = {AttrSpec::required("shape", AttrKind::kDims),
                           AttrSpec::with_default("device", DeviceRef::cpu())},
                 .infer = infer_shape_to_tensor});
}

}  // namespace maxc

// Lowerings of the shape and layout ops (inventory §5.11); the aliases among them are in
// alias.cc. The rest are data movement over opaque 1/2/4/8-byte elements, so every dtype of
// those widths is supported. The layout ops (register_layout_kernels) are one strided copy
// each, through lower_strided_copy, and serve every device; the others are the CPU's.
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

#include "engine/lower/extents.h"
#include "engine/lower/lower.h"
#include "engine/lowering.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/copy_concat.h"
#include "kernels/cpu/copy_repeat.h"
#include "kernels/cpu/gather_index.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/pad.h"

namespace maxc {
namespace {

using Dims = std::vector<int64_t>;

// The values of input i when it is an integer constant.
std::optional<Dims> constant_ints(const LowerContext& ctx, size_t i) {
  const Constant* c = ctx.input_constant(i);
  if (!c) return std::nullopt;
  Dims values;
  const int64_t n = ctx.inputs[i].num_elements();
  const bool ok = cpu::with_index_type(ctx.inputs[i].dtype, [&](auto t) {
    const auto* data = reinterpret_cast<const decltype(t)*>(c->data.get());
    for (int64_t k = 0; k < n; ++k) values.push_back(static_cast<int64_t>(data[k]));
  });
  if (!ok) return std::nullopt;
  return values;
}

Lowered strided(const LowerContext& ctx, const Dims& dims, const Dims& src_strides, int64_t src_offset = 0) {
  return lower_strided_copy(ctx, dims, src_strides, src_offset);
}

// ---- permute, transpose, broadcast_to, tile ------------------------------------------------------

Lowered permuted(const LowerContext& ctx, const Dims& perm) {
  const Dims in_strides = cpu::dense_strides(ctx.inputs[0].dims);
  Dims strides;
  for (int64_t p : perm) strides.push_back(in_strides[axis_in(ctx, p, ctx.inputs[0].rank(), "axis")]);
  return strided(ctx, ctx.outputs[0].dims, strides);
}

Lowered lower_permute(const LowerContext& ctx) { return permuted(ctx, ctx.attr<Dims>("dims")); }

Lowered lower_transpose(const LowerContext& ctx) { return permuted(ctx, transpose_permutation(ctx)); }

// Input dims align with the output's last ones; a size-1 or missing input axis reads one
// element again and again (stride 0). A shape_tensor input only repeats the dims the engine
// already has; where it is a constant, its values are checked against them.
Lowered lower_broadcast_to(const LowerContext& ctx) {
  const Dims& in = ctx.inputs[0].dims;
  const Dims& out = ctx.outputs[0].dims;
  if (std::optional<Dims> got = constant_ints(ctx, 1); got && *got != out) {
    std::vector<Dim> shown(got->begin(), got->end());
    fail(Code::kInvalidArgument, ctx.op_label(), ": input 1 'shape_tensor' holds ", dims_to_string(shown),
         " but attribute 'out_dims' gives ", ctx.outputs[0].to_string());
  }
  const Dims in_strides = cpu::dense_strides(in);
  const size_t offset = out.size() - in.size();
  Dims strides(out.size(), 0);
  for (size_t j = 0; j < in.size(); ++j) {
    if (in[j] == out[offset + j]) strides[offset + j] = in_strides[j];
    else if (in[j] != 1)
      fail(Code::kInvalidArgument, ctx.op_label(), ": cannot broadcast ", ctx.inputs[0].to_string(), " to ",
           ctx.outputs[0].to_string(), " (axis ", j, ")");
  }
  return strided(ctx, ctx.outputs[0].dims, strides);
}

// The output as [r0, d0, r1, d1, ...]: each repeat axis reads its block again (stride 0).
Lowered lower_tile(const LowerContext& ctx) {
  const Dims& in = ctx.inputs[0].dims;
  const Dims& out = ctx.outputs[0].dims;
  const Dims in_strides = cpu::dense_strides(in);
  Dims dims, strides;
  for (size_t i = 0; i < in.size(); ++i) {
    dims.push_back(in[i] == 0 ? 0 : out[i] / in[i]);
    strides.push_back(0);
    dims.push_back(in[i]);
    strides.push_back(in_strides[i]);
  }
  return strided(ctx, dims, strides);
}

// ---- concat, stack, split, chunk ----------------------------------------------------------------

// Along `axis` of `whole`, each part contributes rows of part_extent[i] * inner elements.
struct RowSplit {
  int64_t outer = 1;
  std::vector<int64_t> row_bytes;
};

RowSplit row_split(const Dims& whole, int64_t axis, const std::vector<int64_t>& part_extent, int32_t w) {
  RowSplit s;
  s.outer = product(whole, 0, static_cast<size_t>(axis));
  const int64_t inner = product(whole, static_cast<size_t>(axis) + 1, whole.size());
  for (int64_t e : part_extent) s.row_bytes.push_back(e * inner * w);
  return s;
}

Lowered concat_of(const LowerContext& ctx, RowSplit s) {
  if (ctx.inputs.size() == 1) return lower_alias(ctx);
  return {[s = std::move(s)](const KernelArgs& a) {
    cpu::concat_rows({a.inputs, s.row_bytes.size()}, s.row_bytes, s.outer, a.outputs[0]);
  }};
}

Lowered lower_concat(const LowerContext& ctx) {
  const Dims& out = ctx.outputs[0].dims;
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), static_cast<int64_t>(out.size()), "attribute 'axis'");
  std::vector<int64_t> extents;
  for (const Shape& in : ctx.inputs) extents.push_back(in.dims[static_cast<size_t>(axis)]);
  return concat_of(ctx, row_split(out, axis, extents, element_bytes(ctx, ctx.outputs[0].dtype)));
}

// Each input is one index along the new axis.
Lowered lower_stack(const LowerContext& ctx) {
  const Dims& out = ctx.outputs[0].dims;
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), static_cast<int64_t>(out.size()), "attribute 'axis'");
  std::vector<int64_t> extents(ctx.inputs.size(), 1);
  return concat_of(ctx, row_split(out, axis, extents, element_bytes(ctx, ctx.outputs[0].dtype)));
}

Lowered lower_split(const LowerContext& ctx) {
  const Dims& in = ctx.inputs[0].dims;
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), static_cast<int64_t>(in.size()), "attribute 'axis'");
  if (ctx.outputs.size() == 1) return lower_alias(ctx);
  std::vector<int64_t> extents;
  for (const Shape& out : ctx.outputs) extents.push_back(out.dims[static_cast<size_t>(axis)]);
  RowSplit s = row_split(in, axis, extents, element_bytes(ctx, ctx.inputs[0].dtype));
  return {[s = std::move(s)](const KernelArgs& a) {
    cpu::split_rows(a.inputs[0], s.outer, {a.outputs, s.row_bytes.size()}, s.row_bytes);
  }};
}

// ---- repeat_interleave, pad ------------------------------------------------------------------

Lowered lower_repeat_interleave(const LowerContext& ctx) {
  const Shape& x = ctx.inputs[0];
  const int32_t w = element_bytes(ctx, x.dtype);
  Dims dims = x.dims;
  int64_t axis = 0;
  if (ctx.attrs().has("axis")) axis = axis_in(ctx, ctx.attr<int64_t>("axis"), x.rank(), "attribute 'axis'");
  else dims = {x.num_elements()};
  const int64_t outer = product(dims, 0, static_cast<size_t>(axis)), d = dims[static_cast<size_t>(axis)];
  const int64_t inner = product(dims, static_cast<size_t>(axis) + 1, dims.size());

  if (ctx.inputs.size() == 1) {  // one count for every slice: [outer, d, r, inner] reading r times
    const int64_t r = ctx.attr<int64_t>("repeats");
    return strided(ctx, {outer, d, r, inner}, {d * inner, inner, 0, 1});
  }

  const Shape& counts = ctx.inputs[1];
  if (!cpu::with_index_type(counts.dtype, [](auto) {}))
    ctx.unsupported("repeats of dtype ", dtype_label(counts.dtype));
  const int64_t num_counts = counts.num_elements();
  if (num_counts != 1 && num_counts != d)
    fail(Code::kInvalidArgument, ctx.op_label(), ": input 1 'repeats_tensor' ", counts.to_string(), " must hold 1 or ",
         d, " counts");
  const int64_t total_out = ctx.outputs[0].dims[static_cast<size_t>(axis)];
  const DType count_type = counts.dtype;
  const int64_t slice = inner * w;
  // Where the counts are constants, the promised length is checked now; otherwise when it runs.
  const auto mismatch = [label = ctx.op_label(), total_out](int64_t sum) {
    fail(Code::kInvalidArgument, label, ": the repeats sum to ", sum, " but attribute 'out_dim' is ", total_out);
  };
  if (const Constant* c = ctx.input_constant(1)) {
    const int64_t sum = cpu::repeat_total(c->data.get(), count_type, num_counts, d);
    if (sum != total_out) mismatch(sum);
  }
  return {[=](const KernelArgs& a) {
    const int64_t sum =
        cpu::repeat_interleave(a.inputs[0], a.inputs[1], count_type, num_counts, a.outputs[0], outer, d, total_out, slice);
    if (sum != total_out) mismatch(sum);
  }};
}

// The length repeat_interleave's repeats give its axis: the value of an out_dim no input
// binds (compiler/stages.h). Inputs and attributes are the repeat_interleave's.
Lowered lower_count_repeats(const LowerContext& ctx) {
  const RepeatCounts counts = repeat_counts(ctx);  // no structured binding: clang 14 cannot capture one
  const DType count_type = ctx.inputs[1].dtype;
  return {[=](const KernelArgs& a) {
    *static_cast<int64_t*>(a.outputs[0]) = cpu::repeat_total(a.inputs[1], count_type, counts.num_counts, counts.d);
  }};
}

}  // namespace

RepeatCounts repeat_counts(const LowerContext& ctx) {
  const Shape& x = ctx.inputs[0];
  const int64_t axis = ctx.attrs().has("axis") ? axis_in(ctx, ctx.attr<int64_t>("axis"), x.rank(), "attribute 'axis'") : -1;
  const int64_t d = axis < 0 ? x.num_elements() : x.dims[static_cast<size_t>(axis)];
  const Shape& counts = ctx.inputs[1];
  if (!cpu::with_index_type(counts.dtype, [](auto) {}))
    ctx.unsupported("repeats of dtype ", dtype_label(counts.dtype));
  const int64_t num_counts = counts.num_elements();
  if (num_counts != 1 && num_counts != d)
    fail(Code::kInvalidArgument, "op 'repeat_interleave': input 1 'repeats_tensor' ", counts.to_string(),
         " must hold 1 or ", d, " counts");
  return {d, num_counts};
}

uint64_t pad_fill_pattern(const LowerContext& ctx, double v, DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return std::bit_cast<uint32_t>(static_cast<float>(v));
    case DType::kFloat64: return std::bit_cast<uint64_t>(v);
    case DType::kFloat16: return cpu::float_to_f16(static_cast<float>(v));
    case DType::kBFloat16: return cpu::float_to_bf16(static_cast<float>(v));
    case DType::kBool: return v != 0.0 ? 1 : 0;
    default: break;
  }
  if (dtype_is_integral(dtype)) {
    if (!(v >= -0x1p63 && v < 0x1p64))  // also false for NaN
      fail(Code::kInvalidArgument, ctx.op_label(), ": attribute 'value' ", v, " does not fit ", dtype_name(dtype));
    return v >= 0x1p63 ? static_cast<uint64_t>(v) : static_cast<uint64_t>(static_cast<int64_t>(v));
  }
  if (v == 0.0) return 0;  // every float8 format encodes +0 as all-zero bits
  ctx.unsupported("a non-zero pad value in dtype ", dtype_name(dtype));
}

namespace {

Lowered lower_pad(const LowerContext& ctx) {
  const std::string& mode = ctx.attr<std::string>("mode");
  if (mode != "constant") ctx.unsupported("mode \"", mode, "\" (only \"constant\")");
  const Shape& x = ctx.inputs[0];
  const Dims& paddings = ctx.attr<Dims>("paddings");
  Dims before;
  bool any = false;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    before.push_back(paddings[2 * i]);
    any = any || paddings[2 * i] != 0 || paddings[2 * i + 1] != 0;
  }
  if (!any) return lower_alias(ctx);
  const int32_t w = element_bytes(ctx, x.dtype);
  const uint64_t pattern = pad_fill_pattern(ctx, ctx.attr<double>("value"), x.dtype);
  return {[=, in = x.dims, out = ctx.outputs[0].dims](const KernelArgs& a) {
    cpu::pad_constant(a.inputs[0], a.outputs[0], w, in, before, out, pattern);
  }};
}

// ---- shape_to_tensor -------------------------------------------------------------------------

// The dims are written as int64 at lowering time, so the kernel is one small memcpy.
Lowered lower_shape_to_tensor(const LowerContext& ctx) {
  std::vector<int64_t> values;
  for (const Dim& d : ctx.attr<std::vector<Dim>>("shape")) values.push_back(ctx.eval_dim(d));
  return {[values = std::move(values)](const KernelArgs& a) {
    if (!values.empty()) std::memcpy(a.outputs[0], values.data(), values.size() * sizeof(int64_t));
  }};
}

}  // namespace

void register_layout_kernels(KernelTable& t) {
  t.add("permute", lower_permute);
  t.add("transpose", lower_transpose);
  t.add("broadcast_to", lower_broadcast_to);
  t.add("tile", lower_tile);
}

void register_shape_kernels(KernelTable& t) {
  t.add("concat", lower_concat);
  t.add("stack", lower_stack);
  t.add("split", lower_split);
  t.add("chunk", lower_split);
  t.add("repeat_interleave", lower_repeat_interleave);
  t.add("count_repeats", lower_count_repeats);
  t.add("pad", lower_pad);
  t.add("shape_to_tensor", lower_shape_to_tensor);
}

}  // namespace maxc

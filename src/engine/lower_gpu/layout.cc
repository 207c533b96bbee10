// The layout ops on a GPU (kernels/cuda/layout.cu): slice_tensor (shared with the CPU, one
// strided copy), concat, stack, split and chunk (one copy_between launch per part, the whole
// tensor seen through row strides at the part's offset), pad, band_part, range, outer,
// repeat_interleave and shape_to_tensor. Values move as raw words, so every dtype of 1 to 8
// bytes works where the CPU's does.
#include <cstring>
#include <string>
#include <vector>

#include "driver/cuda/cuda_device.h"
#include "driver/device.h"
#include "engine/lower/extents.h"
#include "engine/lower/lower.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cpu/copy_repeat.h"
#include "kernels/cpu/gather_index.h"
#include "kernels/cpu/matmul_outer.h"
#include "kernels/cpu/range.h"
#include "kernels/cuda/common/layout.cuh"
#include "kernels/cuda/fused_elementwise.h"
#include "kernels/cuda/layout_catalog.h"

namespace maxc {
namespace {

using Dims = std::vector<int64_t>;

// The catalog's instance name, its errors (a dtype the kernels lack) given the node's label.
template <class Fn>
GpuKernel layout_kernel(const LowerContext& ctx, Fn name_of) {
  return load_gpu_kernel(ctx, "layout.cu", ctx.labeled(name_of));
}


// ---- concat, stack, split, chunk -------------------------------------------------------------

// One part of a tensor cut along an axis: [outer, extent * inner] elements, dense in the part,
// rows of total * inner elements in the whole, starting offset_bytes into it.
struct Window {
  gpu::Shape shape;
  gpu::Layout part, whole;
  int64_t offset_bytes = 0;
  cuda::LaunchShape launch;
};

gpu::Layout rows_of(int64_t row, bool dense) {
  gpu::Layout l{};
  l.strides[0] = row;
  l.strides[1] = 1;
  l.dense = dense ? 1 : 0;
  return l;
}

std::vector<Window> windows(const Dims& whole, int64_t axis, const Dims& extents, int32_t w) {
  const int64_t outer = product(whole, 0, static_cast<size_t>(axis));
  const int64_t inner = product(whole, static_cast<size_t>(axis) + 1, whole.size());
  const int64_t total = whole[static_cast<size_t>(axis)];
  std::vector<Window> parts;
  int64_t start = 0;
  for (int64_t e : extents) {
    Window win;
    win.shape = gpu::fused_shape({outer, e * inner});
    win.part = rows_of(e * inner, true);
    win.whole = rows_of(total * inner, outer == 1 || e == total);
    win.offset_bytes = start * inner * w;
    win.launch = gpu_launch_for_elements(win.shape.numel);
    parts.push_back(win);
    start += e;
  }
  return parts;
}

void copy_window(const GpuKernel& k, const Window& win, const void* x, const gpu::Layout& x_layout, void* y,
                 const gpu::Layout& y_layout, const cuda::CudaStream* stream) {
  if (win.shape.numel == 0) return;
  gpu::Layout xl = x_layout, yl = y_layout;
  gpu::Shape shape = win.shape;
  void* args[] = {&x, &xl, &y, &yl, &shape};
  k.launch(win.launch, stream, args);
}

// Every input into its window of output 0.
Lowered concat_along(const LowerContext& ctx, int64_t axis, const Dims& extents) {
  if (ctx.inputs.size() == 1) return lower_alias(ctx);
  const DType dtype = ctx.outputs[0].dtype;
  const GpuKernel k = layout_kernel(ctx, [&] { return gpu::copy_between_kernel(dtype); });
  const std::vector<Window> parts = windows(ctx.outputs[0].dims, axis, extents, element_bytes(ctx, dtype));
  return {[=](const KernelArgs& a) {
    for (size_t i = 0; i < parts.size(); ++i)
      copy_window(k, parts[i], a.inputs[i], parts[i].part, static_cast<uint8_t*>(a.outputs[0]) + parts[i].offset_bytes,
                  parts[i].whole, a.stream);
  }};
}

Lowered lower_concat(const LowerContext& ctx) {
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), ctx.outputs[0].rank(), "attribute 'axis'");
  Dims extents;
  for (const Shape& in : ctx.inputs) extents.push_back(in.dims[static_cast<size_t>(axis)]);
  return concat_along(ctx, axis, extents);
}

// Each input is one index along the new axis.
Lowered lower_stack(const LowerContext& ctx) {
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), ctx.outputs[0].rank(), "attribute 'axis'");
  return concat_along(ctx, axis, Dims(ctx.inputs.size(), 1));
}

// split and chunk: each output is its window of input 0.
Lowered lower_split(const LowerContext& ctx) {
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), ctx.inputs[0].rank(), "attribute 'axis'");
  if (ctx.outputs.size() == 1) return lower_alias(ctx);
  const DType dtype = ctx.inputs[0].dtype;
  Dims extents;
  for (const Shape& out : ctx.outputs) extents.push_back(out.dims[static_cast<size_t>(axis)]);
  const GpuKernel k = layout_kernel(ctx, [&] { return gpu::copy_between_kernel(dtype); });
  const std::vector<Window> parts = windows(ctx.inputs[0].dims, axis, extents, element_bytes(ctx, dtype));
  return {[=](const KernelArgs& a) {
    for (size_t i = 0; i < parts.size(); ++i)
      copy_window(k, parts[i], static_cast<const uint8_t*>(a.inputs[0]) + parts[i].offset_bytes, parts[i].whole,
                  a.outputs[i], parts[i].part, a.stream);
  }};
}

// ---- pad -------------------------------------------------------------------------------------

struct PadDims {
  Dims out, in, before;
};

// Size-1 dims dropped, and a dim without padding merged into the one before it (the pair
// is one dim of out_d * n elements, n fill-free): deep tensors padded on few axes fit kMaxRank.
PadDims collapse_pad(const Dims& in, const Dims& out, const Dims& before) {
  PadDims p;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool padded = out[d] != in[d];
    if (!padded && in[d] == 1) continue;
    if (!padded && !p.out.empty()) {
      p.out.back() *= in[d];
      p.in.back() *= in[d];
      p.before.back() *= in[d];
      continue;
    }
    p.out.push_back(out[d]);
    p.in.push_back(in[d]);
    p.before.push_back(before[d]);
  }
  return p;
}

Lowered lower_pad(const LowerContext& ctx) {
  const std::string& mode = ctx.attr<std::string>("mode");
  if (mode != "constant") ctx.unsupported("mode \"", mode, "\" (only \"constant\")");
  const Shape& x = ctx.inputs[0];
  const Dims& paddings = ctx.attr<Dims>("paddings");
  Dims before;
  for (size_t i = 0; i < x.dims.size(); ++i) before.push_back(paddings[2 * i]);
  if (ctx.outputs[0].dims == x.dims) return lower_alias(ctx);
  const uint64_t pattern = pad_fill_pattern(ctx, ctx.attr<double>("value"), x.dtype);
  const PadDims p = collapse_pad(x.dims, ctx.outputs[0].dims, before);
  if (p.out.size() > static_cast<size_t>(gpu::kMaxRank))
    ctx.unsupported("padding ", p.out.size(), " dims that do not merge (at most ", gpu::kMaxRank, ")");
  const GpuKernel k = layout_kernel(ctx, [&] { return gpu::pad_constant_kernel(x.dtype); });
  gpu::PadGeometry g{};
  for (size_t d = 0; d < p.out.size(); ++d) {
    g.before[d] = p.before[d];
    g.in_dims[d] = p.in[d];
  }
  const gpu::Shape shape = gpu::fused_shape(p.out);
  const cuda::LaunchShape launch = gpu_launch_for_elements(shape.numel);
  return {[=](const KernelArgs& a) {
    if (shape.numel == 0) return;
    const void* in = a.inputs[0];
    void* out = a.outputs[0];
    gpu::PadGeometry geometry = g;
    gpu::Shape s = shape;
    uint64_t fill = pattern;  // the kernel reads the low bytes: its element's width
    void* args[] = {&in, &geometry, &out, &s, &fill};
    k.launch(launch, a.stream, args);
  }};
}

// ---- band_part, range, outer -----------------------------------------------------------------

Lowered lower_band_part(const LowerContext& ctx) {
  const Shape& x = ctx.inputs[0];
  if (x.rank() < 2) fail(Code::kInternal, ctx.op_label(), ": ", x.to_string(), " has rank < 2");
  const int64_t m = x.dims[x.dims.size() - 2], n = x.dims.back();
  const int64_t rows = product(x.dims, 0, x.dims.size() - 1);
  const int64_t lower = ctx.attrs().has("num_lower") ? ctx.attr<int64_t>("num_lower") : -1;
  const int64_t upper = ctx.attrs().has("num_upper") ? ctx.attr<int64_t>("num_upper") : -1;
  const int32_t exclude = ctx.attr<bool>("exclude") ? 1 : 0;
  const GpuKernel k = layout_kernel(ctx, [&] { return gpu::band_part_kernel(x.dtype); });
  const cuda::LaunchShape launch = gpu_launch_for_elements(rows * n);
  Lowered l{[=](const KernelArgs& a) {
    if (rows * n == 0) return;
    const void* in = a.inputs[0];
    void* out = a.outputs[0];
    int64_t r = rows, mm = m, nn = n, lo = lower, hi = upper;
    int32_t ex = exclude;
    void* args[] = {&in, &out, &r, &mm, &nn, &lo, &hi, &ex};
    k.launch(launch, a.stream, args);
  }};
  l.inplace_input = 0;
  return l;
}

// The length is output 0's (out_dim, evaluated by the engine), as on the CPU.
Lowered lower_range(const LowerContext& ctx) {
  const DType dtype = ctx.outputs[0].dtype;
  if (!cpu::range_supports(dtype)) ctx.unsupported("dtype ", dtype_label(dtype));
  const int64_t n = ctx.outputs[0].num_elements();
  const GpuKernel k = layout_kernel(ctx, [&] { return gpu::range_kernel(dtype); });
  const cuda::LaunchShape launch = gpu_launch_for_elements(n);
  return {[=](const KernelArgs& a) {
    if (n == 0) return;
    const void *start = a.inputs[0], *step = a.inputs[2];
    void* out = a.outputs[0];
    int64_t count = n;
    void* args[] = {&start, &step, &out, &count};
    k.launch(launch, a.stream, args);
  }};
}

// Both inputs flattened: y [na, nb].
Lowered lower_outer(const LowerContext& ctx) {
  const DType dtype = ctx.inputs[0].dtype;
  if (!cpu::outer_supports(dtype)) ctx.unsupported("dtype ", dtype_label(dtype));
  const int64_t na = ctx.inputs[0].num_elements(), nb = ctx.inputs[1].num_elements();
  const GpuKernel k = layout_kernel(ctx, [&] { return gpu::outer_kernel(dtype); });
  const cuda::LaunchShape launch = gpu_launch_for_elements(na * nb);
  return {[=](const KernelArgs& a) {
    if (na * nb == 0) return;
    const void *lhs = a.inputs[0], *rhs = a.inputs[1];
    void* out = a.outputs[0];
    int64_t m = na, n = nb;
    void* args[] = {&lhs, &rhs, &out, &m, &n};
    k.launch(launch, a.stream, args);
  }};
}

// ---- repeat_interleave -----------------------------------------------------------------------

// Per-slice counts: repeat_starts (one thread) writes where each slice's copies begin into
// the scratch, then repeat_rows fills the output from it.
Lowered repeat_by_counts(const LowerContext& ctx, int64_t outer, int64_t d, int64_t inner, int64_t axis) {
  const Shape& counts = ctx.inputs[1];
  if (!cpu::with_index_type(counts.dtype, [](auto) {}))
    ctx.unsupported("repeats of dtype ", dtype_label(counts.dtype));
  const int64_t num_counts = counts.num_elements();
  if (num_counts != 1 && num_counts != d)
    fail(Code::kInvalidArgument, ctx.op_label(), ": input 1 'repeats_tensor' ", counts.to_string(), " must hold 1 or ",
         d, " counts");
  const int64_t out_len = ctx.outputs[0].dims[static_cast<size_t>(axis)];
  // The kernels cannot fail a call; where the counts are constants, check the promised length now.
  if (const Constant* c = ctx.input_constant(1)) {
    const int64_t sum = cpu::repeat_total(c->data.get(), counts.dtype, num_counts, d);
    if (sum != out_len)
      fail(Code::kInvalidArgument, ctx.op_label(), ": the repeats sum to ", sum, " but attribute 'out_dim' is ",
           out_len);
  }
  const GpuKernel starts = layout_kernel(ctx, [&] { return gpu::repeat_starts_kernel(counts.dtype); });
  const GpuKernel rows = layout_kernel(ctx, [&] { return gpu::repeat_rows_kernel(ctx.inputs[0].dtype); });
  const cuda::LaunchShape launch = gpu_launch_for_elements(outer * out_len * inner);
  Lowered l{[=](const KernelArgs& a) {
    auto* table = static_cast<int64_t*>(a.scratch);
    const void *x = a.inputs[0], *c = a.inputs[1];
    void* y = a.outputs[0];
    int64_t nc = num_counts, dd = d, len = out_len, o = outer, in = inner;
    void* first[] = {&c, &nc, &dd, &len, &table};
    starts.launch(cuda::LaunchShape{}, a.stream, first);
    if (outer * out_len * inner == 0) return;
    const int64_t* t = table;
    void* second[] = {&x, &t, &y, &o, &dd, &len, &in};
    rows.launch(launch, a.stream, second);
  }};
  l.scratch_bytes = static_cast<uint64_t>(d + 1) * sizeof(int64_t);
  return l;
}

Lowered lower_repeat_interleave(const LowerContext& ctx) {
  const Shape& x = ctx.inputs[0];
  Dims dims = x.dims;
  int64_t axis = 0;
  if (ctx.attrs().has("axis")) axis = axis_in(ctx, ctx.attr<int64_t>("axis"), x.rank(), "attribute 'axis'");
  else dims = {x.num_elements()};
  const int64_t outer = product(dims, 0, static_cast<size_t>(axis)), d = dims[static_cast<size_t>(axis)];
  const int64_t inner = product(dims, static_cast<size_t>(axis) + 1, dims.size());
  if (ctx.inputs.size() > 1) return repeat_by_counts(ctx, outer, d, inner, axis);
  // One count for every slice: [outer, d, r, inner] reading each slice r times (stride 0).
  const int64_t r = ctx.attr<int64_t>("repeats");
  const Dims copy_dims = {outer, d, r, inner}, strides = {d * inner, inner, 0, 1};
  return lower_strided_copy(ctx, copy_dims, strides, 0);
}

// ---- shape_to_tensor -------------------------------------------------------------------------

// The dims are known when the plan is built: each call copies them, as int64, from the plan
// (which outlives its calls) into the output on the call's stream.
Lowered lower_shape_to_tensor(const LowerContext& ctx) {
  std::vector<int64_t> values;
  for (const Dim& d : ctx.attr<std::vector<Dim>>("shape")) values.push_back(ctx.eval_dim(d));
  const cuda::CudaDevice* device = ctx.device ? ctx.device->cuda() : nullptr;
  if (!device) fail(Code::kInternal, ctx.op_label(), ": a GPU lowering was asked for a plan on the host");
  return {[values = std::move(values), device](const KernelArgs& a) {
    if (!values.empty()) device->copy_to_device(a.outputs[0], values.data(), values.size() * sizeof(int64_t), a.stream);
  }};
}

}  // namespace

void register_gpu_layout_kernels(KernelTable& t) {
  t.add("slice_tensor", lower_slice_tensor);
  t.add("concat", lower_concat);
  t.add("stack", lower_stack);
  t.add("split", lower_split);
  t.add("chunk", lower_split);
  t.add("pad", lower_pad);
  t.add("band_part", lower_band_part);
  t.add("range", lower_range);
  t.add("outer", lower_outer);
  t.add("repeat_interleave", lower_repeat_interleave);
  t.add("shape_to_tensor", lower_shape_to_tensor);
}

}  // namespace maxc

// The indexing ops on a GPU: gather (kernels/cuda/gather.cu: x as [outer, axis, inner], the
// indices as one flat list), gather_nd (gather_nd.cu), scatter and scatter_nd (scatter.cu,
// with the CPU's reductions, applied in the CPU's order). An index out of range cannot throw
// from a kernel: the kernel sets the step's error word, and the call fails with this
// lowering's error once its stream is done.
#include <string>
#include <vector>

#include "engine/lower/extents.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "driver/cuda/cuda_device.h"
#include "driver/device.h"
#include "kernels/cpu/scatter.h"
#include "kernels/cuda/common/layout.cuh"
#include "kernels/cuda/kernel_catalog.h"
#include "kernels/cuda/layout_catalog.h"

namespace maxc {
namespace {

Lowered lower_gather(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const Shape& indices = ctx.inputs[1];
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), in.rank());
  const GpuKernel k =
      load_gpu_kernel(ctx, "gather.cu", ctx.labeled([&] { return gpu::gather_kernel(in.dtype, indices.dtype); }));
  const int64_t outer = product(in.dims, 0, static_cast<size_t>(axis));
  const int64_t axis_size = in.dims[static_cast<size_t>(axis)];
  const int64_t inner = product(in.dims, static_cast<size_t>(axis) + 1, in.dims.size());
  const int64_t count = indices.num_elements();
  const cuda::LaunchShape launch = gpu_launch_for_elements(outer * count * inner);
  Lowered l{[=](const KernelArgs& a) {
    const void *x = a.inputs[0], *idx = a.inputs[1];
    void* y = a.outputs[0];
    int32_t* bad = a.error_word;
    int64_t o = outer, n = axis_size, i = inner, c = count;
    void* args[] = {&x, &idx, &y, &o, &n, &i, &c, &bad};
    k.launch(launch, a.stream, args);
  }};
  l.error = str_cat("index values of 'indices' are out of range for an axis of ", axis_size);
  return l;
}

// The catalog's instance of `path`, its errors (a dtype the kernels lack) given the node's label.
template <class Fn>
GpuKernel indexing_kernel(const LowerContext& ctx, const char* path, Fn name_of) {
  return load_gpu_kernel(ctx, path, ctx.labeled(name_of));
}


std::string out_of_range_for(const std::vector<int64_t>& dims) {
  return str_cat("index values of 'indices' are out of range for ", dims_to_string(std::vector<Dim>(dims.begin(), dims.end())));
}

// The k dims an index tuple addresses; UNIMPLEMENTED past the kernels' kMaxRank.
gpu::IndexedDims indexed_dims(const LowerContext& ctx, const std::vector<int64_t>& dims) {
  if (dims.size() > static_cast<size_t>(gpu::kMaxRank))
    ctx.unsupported("index tuples of ", dims.size(), " entries (at most ", gpu::kMaxRank, ")");
  gpu::IndexedDims d{};
  d.k = static_cast<int32_t>(dims.size());
  for (size_t j = 0; j < dims.size(); ++j) d.dims[j] = dims[j];
  return d;
}

Lowered lower_gather_nd(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const Shape& idx = ctx.inputs[1];
  const size_t b = static_cast<size_t>(ctx.attr<int64_t>("batch_dims"));
  const size_t k = static_cast<size_t>(idx.dims.back());
  if (b + k > in.dims.size() || b >= idx.dims.size())
    fail(Code::kInternal, ctx.op_label(), ": batch_dims ", b, " and index length ", k, " do not fit ", in.to_string());
  const std::vector<int64_t> indexed(in.dims.begin() + static_cast<ptrdiff_t>(b),
                                     in.dims.begin() + static_cast<ptrdiff_t>(b + k));
  const gpu::IndexedDims dims = indexed_dims(ctx, indexed);
  const GpuKernel kernel = indexing_kernel(ctx, "gather_nd.cu", [&] { return gpu::gather_nd_kernel(in.dtype, idx.dtype); });
  const int64_t batch = product(in.dims, 0, b);
  const int64_t per_batch = product(idx.dims, b, idx.dims.size() - 1);
  const int64_t slice = product(in.dims, b + k, in.dims.size());
  const cuda::LaunchShape launch = gpu_launch_for_elements(batch * per_batch * slice);
  Lowered l{[=](const KernelArgs& a) {
    if (batch * per_batch * slice == 0) return;
    const void *x = a.inputs[0], *i = a.inputs[1];
    void* y = a.outputs[0];
    int32_t* bad = a.error_word;
    int64_t nb = batch, pb = per_batch, s = slice;
    gpu::IndexedDims d = dims;
    void* args[] = {&x, &i, &y, &nb, &pb, &d, &s, &bad};
    kernel.launch(launch, a.stream, args);
  }};
  l.error = out_of_range_for(indexed);
  return l;
}

// A graph built before the attribute existed has none: it overwrites. The reductions run
// where the CPU's do (the floats, int32 and int64).
cpu::ScatterReduction scatter_reduction(const LowerContext& ctx) {
  const std::string reduction = ctx.attrs().has("reduction") ? ctx.attr<std::string>("reduction") : "none";
  if (reduction == "none") return cpu::ScatterReduction::kNone;
  const DType dtype = ctx.inputs[0].dtype;
  if (!cpu::scatter_reduction_supports(dtype))
    ctx.unsupported("reduction \"", reduction, "\" on dtype ", dtype_label(dtype), " (only floats, int32 and int64)");
  if (reduction == "add") return cpu::ScatterReduction::kAdd;
  if (reduction == "mul") return cpu::ScatterReduction::kMul;
  if (reduction == "max") return cpu::ScatterReduction::kMax;
  if (reduction == "min") return cpu::ScatterReduction::kMin;
  fail(Code::kInternal, ctx.op_label(), ": unknown reduction \"", reduction, "\"");
}

// Output 0 starts as input 0 (no copy when the planner ran the step in place).
void copy_input(const cuda::CudaDevice& device, const KernelArgs& a, uint64_t bytes) {
  if (a.outputs[0] != a.inputs[0]) device.copy_within(a.outputs[0], a.inputs[0], bytes, a.stream);
}

const cuda::CudaDevice& cuda_device(const LowerContext& ctx) {
  if (!ctx.device || !ctx.device->cuda())
    fail(Code::kInternal, ctx.op_label(), ": a GPU lowering was asked for a plan on the host");
  return *ctx.device->cuda();
}

Lowered lower_scatter(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const Shape& upd = ctx.inputs[1];
  const Shape& idx = ctx.inputs[2];
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), in.rank());
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (d != axis && upd.dims[static_cast<size_t>(d)] > in.dims[static_cast<size_t>(d)])
      fail(Code::kInvalidArgument, ctx.op_label(), ": input 1 'updates' ", upd.to_string(), " is longer than input 0 ",
           in.to_string(), " on axis ", d, ", which is not the scatter axis ", axis);
  }
  if (in.rank() > gpu::kMaxRank) ctx.unsupported("rank ", in.rank(), " (at most ", gpu::kMaxRank, ")");
  const cpu::ScatterReduction reduction = scatter_reduction(ctx);
  const GpuKernel kernel =
      indexing_kernel(ctx, "scatter.cu", [&] { return gpu::scatter_kernel(reduction, in.dtype, idx.dtype); });
  gpu::ScatterGeometry g{};
  g.rank = static_cast<int32_t>(in.rank());
  g.axis = static_cast<int32_t>(axis);
  g.axis_dim = in.dims[static_cast<size_t>(axis)];
  int64_t stride = 1, off_axis = 1;
  for (int64_t d = in.rank() - 1; d >= 0; --d) {
    g.upd_dims[d] = upd.dims[static_cast<size_t>(d)];
    g.out_strides[d] = stride;
    stride *= in.dims[static_cast<size_t>(d)];
    if (d != axis) off_axis *= upd.dims[static_cast<size_t>(d)];
  }
  const uint64_t bytes = in.byte_size();
  const bool any = upd.num_elements() > 0;
  const cuda::CudaDevice* device = &cuda_device(ctx);
  const cuda::LaunchShape launch = gpu_launch_for_elements(off_axis);  // a thread walks the axis
  Lowered l{[=](const KernelArgs& a) {
    copy_input(*device, a, bytes);
    if (!any) return;
    const void *u = a.inputs[1], *i = a.inputs[2];
    void* y = a.outputs[0];
    gpu::ScatterGeometry geometry = g;
    int32_t* bad = a.error_word;
    void* args[] = {&u, &i, &y, &geometry, &bad};
    kernel.launch(launch, a.stream, args);
  }};
  l.inplace_input = 0;
  l.error = out_of_range_for({g.axis_dim});
  return l;
}

Lowered lower_scatter_nd(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const Shape& idx = ctx.inputs[2];
  const size_t k = static_cast<size_t>(idx.dims.back());
  if (k > in.dims.size()) fail(Code::kInternal, ctx.op_label(), ": index length ", k, " does not fit ", in.to_string());
  const std::vector<int64_t> indexed(in.dims.begin(), in.dims.begin() + static_cast<ptrdiff_t>(k));
  const gpu::IndexedDims dims = indexed_dims(ctx, indexed);
  const cpu::ScatterReduction reduction = scatter_reduction(ctx);
  const GpuKernel kernel =
      indexing_kernel(ctx, "scatter.cu", [&] { return gpu::scatter_nd_kernel(reduction, in.dtype, idx.dtype); });
  const int64_t count = product(idx.dims, 0, idx.dims.size() - 1);
  const int64_t slice = product(in.dims, k, in.dims.size());
  const uint64_t bytes = in.byte_size();
  const cuda::CudaDevice* device = &cuda_device(ctx);
  // A thread per element of the slice walks every update in order: see scatter.cu.
  const cuda::LaunchShape launch = gpu_launch_for_elements(slice);
  Lowered l{[=](const KernelArgs& a) {
    copy_input(*device, a, bytes);
    if (count == 0 || slice == 0) return;
    const void *u = a.inputs[1], *i = a.inputs[2];
    void* y = a.outputs[0];
    gpu::IndexedDims d = dims;
    int64_t n = count, s = slice;
    int32_t* bad = a.error_word;
    void* args[] = {&u, &i, &y, &d, &n, &s, &bad};
    kernel.launch(launch, a.stream, args);
  }};
  l.inplace_input = 0;
  l.error = out_of_range_for(indexed);
  return l;
}

}  // namespace

void register_gpu_indexing_kernels(KernelTable& t) {
  t.add("gather", lower_gather);
  t.add("gather_nd", lower_gather_nd);
  t.add("scatter", lower_scatter);
  t.add("scatter_nd", lower_scatter_nd);
}

}  // namespace maxc

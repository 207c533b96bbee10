// argmax, argmin, cumsum, top_k and argsort on a GPU (kernels/cuda/arg_reduce.cu, scan.cu,
// sort.cu), with the CPU lowerings' checks and errors (engine/lower/reduction.cc): the input
// seen as [outer, n, inner] around its axis. The scans and arg-reductions run one thread per
// line; the sorts one block per line, in shared memory up to gpu::kSortSharedLength padded
// elements and in global scratch (one slice per block of the grid) up to
// gpu::kSortMaxLength, beyond which they are refused naming the length. top_k sorts whole
// lines and keeps the first k; argsort, like the CPU's, takes rank 1 only.
#include <algorithm>
#include <string>

#include "engine/lower/extents.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cpu/sort.h"
#include "kernels/cuda/common/sort_params.cuh"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

template <typename F>
std::string instance(const LowerContext& ctx, F name_of) {
  return ctx.labeled([&] { return name_of(ctx.inputs[0].dtype); });
}

// The lines' launch: one thread each, grid-stride.
cuda::LaunchShape line_launch(const AxisSplit& s) { return gpu_launch_for_elements(s.outer * s.inner); }

Lowered lower_arg_reduce(const LowerContext& ctx, bool max) {
  const Shape& in = ctx.inputs[0];
  const AxisSplit s = split_at_axis(ctx, in);
  expect_output(ctx, 0, with_axis(in, s.axis, 1, DType::kInt64));
  // No identity: an empty axis has no answer, as in numpy and on the CPU.
  if (s.n == 0 && s.outer * s.inner > 0)
    fail(Code::kInvalidArgument, ctx.op_label(), ": cannot reduce over axis ", s.axis, " of input ", in.to_string(),
         ": it is empty and the reduction has no identity");
  const GpuKernel k =
      load_gpu_kernel(ctx, "arg_reduce.cu", instance(ctx, [max](DType d) { return gpu::arg_reduce_kernel(d, max); }));
  const cuda::LaunchShape launch = line_launch(s);
  return {[k, launch, s](const KernelArgs& a) {
    if (s.outer * s.inner == 0) return;
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    int64_t outer = s.outer, n = s.n, inner = s.inner;
    void* args[] = {&x, &y, &outer, &n, &inner};
    k.launch(launch, a.stream, args);
  }};
}

Lowered lower_cumsum(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const AxisSplit s = split_at_axis(ctx, in);
  expect_output(ctx, 0, in);
  const GpuKernel k = load_gpu_kernel(ctx, "scan.cu", instance(ctx, gpu::cumsum_kernel));
  const cuda::LaunchShape launch = line_launch(s);
  const int32_t exclusive = ctx.attr<bool>("exclusive") ? 1 : 0, reverse = ctx.attr<bool>("reverse") ? 1 : 0;
  Lowered l{[=](const KernelArgs& a) {
    if (s.outer * s.n * s.inner == 0) return;
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    int64_t outer = s.outer, n = s.n, inner = s.inner;
    int32_t excl = exclusive, rev = reverse;
    void* args[] = {&x, &y, &outer, &n, &inner, &excl, &rev};
    k.launch(launch, a.stream, args);
  }};
  l.inplace_input = 0;  // each thread reads an element before it writes it, and only its own line
  return l;
}

// The CPU's dtypes (its find_*_kernel), refused in its words.
void require_sortable(const LowerContext& ctx, const Shape& in) {
  if (!cpu::find_top_k_kernel(in.dtype))
    ctx.unsupported("dtype ", dtype_label(in.dtype), " (input ", in.to_string(), ")");
}

// Long lines sort in global scratch, a slice per block: the grid is capped so that the
// scratch stays within this (a single block may exceed it for a very long line).
constexpr int64_t kSortScratchBudget = int64_t{64} << 20;

struct SortPlan {
  cuda::LaunchShape launch;
  uint64_t scratch_bytes = 0;
};

SortPlan plan_sort(const LowerContext& ctx, const Shape& in, const AxisSplit& s) {
  if (s.n > gpu::kSortMaxLength)
    ctx.unsupported("lines of ", s.n, " elements along axis ", s.axis, " of input ", in.to_string(),
                    " (the GPU sort takes up to ", gpu::kSortMaxLength, ")");
  const int64_t block_bytes =
      gpu::sort_block_scratch_bytes(gpu::sort_padded_length(s.n), gpu::sort_key_bytes(in.dtype));
  int64_t blocks = s.outer * s.inner;
  if (block_bytes > 0) blocks = std::clamp<int64_t>(blocks, 1, std::max<int64_t>(kSortScratchBudget / block_bytes, 1));
  SortPlan p{gpu_launch_for_rows(blocks)};
  p.scratch_bytes = static_cast<uint64_t>(block_bytes) * p.launch.grid[0];
  return p;
}

// One sort_lines launch writing the first k of each sorted line; values is null for argsort.
Lowered sort_launch(const LowerContext& ctx, const Shape& in, const AxisSplit& s, int64_t k, bool descending,
                    bool with_values) {
  const SortPlan plan = plan_sort(ctx, in, s);
  const GpuKernel kernel = load_gpu_kernel(ctx, "sort.cu", instance(ctx, gpu::sort_kernel));
  Lowered l{[=](const KernelArgs& a) {
    if (s.outer * s.inner == 0 || k == 0) return;
    const void* x = a.inputs[0];
    void* values = with_values ? a.outputs[0] : nullptr;
    void* indices = a.outputs[with_values ? 1 : 0];
    void* scratch = a.scratch;
    int64_t outer = s.outer, n = s.n, inner = s.inner, count = k;
    int32_t desc = descending ? 1 : 0;
    void* args[] = {&x, &values, &indices, &outer, &n, &inner, &count, &desc, &scratch};
    kernel.launch(plan.launch, a.stream, args);
  }};
  l.scratch_bytes = k > 0 ? plan.scratch_bytes : 0;
  return l;
}

// top_k(x) {k, axis}: the k largest of each line, largest first, and their positions.
Lowered lower_top_k(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  require_sortable(ctx, in);
  const AxisSplit s = split_at_axis(ctx, in);
  const int64_t k = top_k_extent(ctx, in, s);
  return sort_launch(ctx, in, s, k, /*descending=*/true, /*with_values=*/true);
}

// argsort(x) {ascending}: the positions that sort a rank-1 x.
Lowered lower_argsort(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  require_sortable(ctx, in);
  if (in.rank() != 1) ctx.unsupported("input ", in.to_string(), " of rank ", in.rank(), " (argsort sorts rank 1)");
  expect_output(ctx, 0, Shape{DType::kInt64, in.dims});
  AxisSplit s;
  s.axis = 0;
  s.n = in.dims[0];
  return sort_launch(ctx, in, s, s.n, !ctx.attr<bool>("ascending"), /*with_values=*/false);
}

}  // namespace

void register_gpu_scan_sort_kernels(KernelTable& t) {
  t.add("argmax", [](const LowerContext& ctx) { return lower_arg_reduce(ctx, true); });
  t.add("argmin", [](const LowerContext& ctx) { return lower_arg_reduce(ctx, false); });
  t.add("cumsum", lower_cumsum);
  t.add("top_k", lower_top_k);
  t.add("argsort", lower_argsort);
}

}  // namespace maxc

// nonzero, masked_scatter and the counts that bind data-decided dims (compiler/stages.h) on a
// GPU: kernels/cuda/nonzero.cu, one block each. A count lands in device memory like any
// value; the engine reads it on the host between stages.
#include "engine/lower/extents.h"
#include "engine/lower/lower.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "kernels/cpu/nonzero.h"
#include "kernels/cuda/common/indexing.cuh"
#include "kernels/cuda/fused_elementwise.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {

namespace {

// The word each element is tested as, and its test (the mask leaving out a float's sign).
uint64_t zero_mask(const LowerContext& ctx, DType dtype) {
  const std::optional<cpu::ZeroTest> test = cpu::zero_test_of(dtype);
  if (!test) ctx.unsupported(dtype_name(dtype));
  return test->mask;
}

template <class Fn>
GpuKernel positions_kernel(const LowerContext& ctx, Fn name_of) {
  return load_gpu_kernel(ctx, "nonzero.cu", ctx.labeled(name_of));
}

// A kernel parameter of the element word's width holding the mask's low bits.
struct WordArg {
  uint64_t bits = 0;
  void* address() { return &bits; }  // little-endian: the low bytes come first
};

Lowered lower_count_nonzero(const LowerContext& ctx) {
  const DType dtype = ctx.inputs[0].dtype;
  const uint64_t mask = zero_mask(ctx, dtype);
  const GpuKernel k = positions_kernel(ctx, [&] { return gpu::count_nonzero_kernel(dtype); });
  const int64_t n = ctx.inputs[0].num_elements();
  return {[=](const KernelArgs& a) {
    const void* x = a.inputs[0];
    void* count = a.outputs[0];
    int64_t size = n;
    WordArg m{mask};
    void* args[] = {&x, &size, m.address(), &count};
    k.launch(gpu_launch_for_rows(1), a.stream, args);
  }};
}

Lowered lower_nonzero(const LowerContext& ctx) {
  const DType dtype = ctx.inputs[0].dtype;
  const uint64_t mask = zero_mask(ctx, dtype);
  const GpuKernel k = positions_kernel(ctx, [&] { return gpu::nonzero_kernel(dtype); });
  const gpu::Shape shape = ctx.labeled([&] { return gpu::fused_shape(ctx.inputs[0].dims); });
  const int64_t capacity = ctx.outputs[0].dims[0];
  Lowered l{[=](const KernelArgs& a) {
    const void* x = a.inputs[0];
    void* out = a.outputs[0];
    gpu::Shape s = shape;
    WordArg m{mask};
    int64_t cap = capacity;
    int32_t* bad = a.error_word;
    void* args[] = {&x, &s, m.address(), &out, &cap, &bad};
    k.launch(gpu_launch_for_rows(1), a.stream, args);
  }};
  l.error = str_cat("the input's count of nonzero elements is not out_dim ",
                    ctx.attr<std::vector<Dim>>("out_dim").at(0), " = ", capacity);
  return l;
}

// The mask read in the input's shape (dense when it has it).
gpu::Layout mask_layout(const LowerContext& ctx, const Shape& mask, const std::vector<int64_t>& dims) {
  gpu::Layout layout{};
  layout.dense = mask.dims == dims ? 1 : 0;
  const std::vector<int64_t> strides = broadcast_strides(ctx, mask, dims, "mask", "the input");
  std::copy(strides.begin(), strides.end(), layout.strides);
  return layout;
}

Lowered lower_masked_scatter(const LowerContext& ctx) {
  const Shape& input = ctx.inputs[0];
  const GpuKernel k = positions_kernel(ctx, [&] { return gpu::masked_scatter_kernel(input.dtype); });
  const gpu::Shape shape = ctx.labeled([&] { return gpu::fused_shape(input.dims); });
  const gpu::Layout layout = mask_layout(ctx, ctx.inputs[1], input.dims);
  const int64_t num_updates = ctx.inputs[2].num_elements();
  Lowered l{[=](const KernelArgs& a) {
    const void *x = a.inputs[0], *m = a.inputs[1], *u = a.inputs[2];
    void* out = a.outputs[0];
    gpu::Shape s = shape;
    gpu::Layout ml = layout;
    int64_t updates = num_updates;
    int32_t* bad = a.error_word;
    void* args[] = {&x, &m, &ml, &u, &out, &s, &updates, &bad};
    k.launch(gpu_launch_for_rows(1), a.stream, args);
  }};
  l.error = str_cat("the mask holds at {} positions but updates has only ", num_updates, " elements");
  return l;
}

Lowered lower_count_repeats(const LowerContext& ctx) {
  const RepeatCounts counts = repeat_counts(ctx);  // no structured binding: clang 14 cannot capture one
  const GpuKernel k = positions_kernel(ctx, [&] { return gpu::count_repeats_kernel(ctx.inputs[1].dtype); });
  return {[=](const KernelArgs& a) {
    const void* c = a.inputs[1];
    void* total = a.outputs[0];
    int64_t nc = counts.num_counts, length = counts.d;
    void* args[] = {&c, &nc, &length, &total};
    k.launch(gpu_launch_for_rows(1), a.stream, args);
  }};
}

}  // namespace

void register_gpu_nonzero_kernels(KernelTable& t) {
  t.add("nonzero", lower_nonzero);
  t.add("count_nonzero", lower_count_nonzero);
  t.add("masked_scatter", lower_masked_scatter);
  t.add("count_repeats", lower_count_repeats);
}

}  // namespace maxc

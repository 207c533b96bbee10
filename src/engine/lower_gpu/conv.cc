// conv2d, fused_conv2d, max_pool2d and avg_pool2d on a GPU (kernels/cuda/conv.cu, pool.cu),
// with the CPU lowering's reading of the node (engine/lower/conv.cc): NHWC or NCHW
// activations, RSCF or FCRS filters, groups, strides, dilations and padding for conv2d; NHWC
// pools whose ceil_mode is already in the output shape the compiler inferred.
//
// Two kernels: the implicit GEMM in 16x16 tiles, and for few output channels per group
// (depthwise) a direct loop per output element. fused_conv2d (compiler/fuse_conv.cc) applies
// its bias, per-channel scale and shift, residual and ReLU in either kernel's epilogue.
// A layout other than those is refused.
#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "driver/device.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cpu/pool.h"
#include "kernels/cuda/common/conv_params.cuh"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

constexpr unsigned kTile = 16;  // kConvTile of conv.cu
// Below this many output channels per group (depthwise has one), most columns of a GEMM tile
// would idle: conv2d_direct, one thread per output element, serves the convolution instead.
constexpr int64_t kDirectBelowChannels = 8;


void require_gpu(const LowerContext& ctx) {
  if (!ctx.device || !ctx.device->cuda())
    fail(Code::kInternal, ctx.op_label(), ": a GPU kernel was asked for a plan on the host");
}

template <typename F>
GpuKernel load(const LowerContext& ctx, const char* source, F instance_of) {
  return load_gpu_kernel(ctx, source, ctx.labeled([&] { return instance_of(ctx.inputs[0].dtype); }));
}

// ---- conv2d ------------------------------------------------------------------------------

const std::string& layout_of(const LowerContext& ctx, std::string_view attr, std::string_view a, std::string_view b) {
  const std::string& layout = ctx.attr<std::string>(attr);
  if (layout != a && layout != b) ctx.unsupported(attr, " \"", layout, "\"");
  return layout;
}

gpu::ConvParams conv_params(const LowerContext& ctx) {
  const Shape &x = ctx.inputs[0], &f = ctx.inputs[1], &y = ctx.outputs[0];
  gpu::ConvParams p{};
  p.channels_first = layout_of(ctx, "input_layout", "NHWC", "NCHW") == "NCHW";
  p.filter_fcrs = layout_of(ctx, "filter_layout", "RSCF", "FCRS") == "FCRS";
  if (x.rank() != 4 || f.rank() != 4 || y.rank() != 4)
    fail(Code::kInternal, ctx.op_label(), ": x ", x.to_string(), ", filter ", f.to_string(), " and out ",
         y.to_string(), " are not all rank 4");
  const auto& d = x.dims;
  if (p.channels_first) p.batch = d[0], p.in_c = d[1], p.in_h = d[2], p.in_w = d[3];
  else p.batch = d[0], p.in_h = d[1], p.in_w = d[2], p.in_c = d[3];
  if (p.channels_first) p.out_h = y.dims[2], p.out_w = y.dims[3];
  else p.out_h = y.dims[1], p.out_w = y.dims[2];
  if (p.filter_fcrs) p.out_c = f.dims[0], p.kernel_h = f.dims[2], p.kernel_w = f.dims[3];
  else p.kernel_h = f.dims[0], p.kernel_w = f.dims[1], p.out_c = f.dims[3];
  const auto& stride = ctx.attr<std::vector<int64_t>>("stride");
  const auto& dilation = ctx.attr<std::vector<int64_t>>("dilation");
  const auto& padding = ctx.attr<std::vector<int64_t>>("padding");
  if (stride.size() != 2 || dilation.size() != 2 || padding.size() != 4)
    fail(Code::kInvalidArgument, ctx.op_label(), ": stride, dilation and padding need 2, 2 and 4 entries");
  p.stride_h = stride[0], p.stride_w = stride[1];
  p.dilation_h = dilation[0], p.dilation_w = dilation[1];
  p.pad_top = padding[0], p.pad_left = padding[2];
  p.groups = ctx.attr<int64_t>("groups");
  if (p.groups < 1 || p.in_c % p.groups != 0 || p.out_c % p.groups != 0)
    fail(Code::kInternal, ctx.op_label(), ": ", p.groups, " groups do not divide ", p.in_c, " input and ", p.out_c,
         " output channels");
  gpu::conv_params_finish(p);
  return p;
}

// Which optional operands follow x and the filter, in the CPU's order: bias, scale, shift,
// residual.
struct ConvOperands {
  bool bias = false, scale = false, shift = false, residual = false;
  size_t count() const { return 2 + bias + scale + shift + residual; }
};

bool use_direct(const gpu::ConvParams& p) { return p.fg < kDirectBelowChannels; }

cuda::LaunchShape conv_launch(const gpu::ConvParams& p) {
  if (use_direct(p)) return gpu_launch_for_elements(p.m * p.out_c);
  cuda::LaunchShape s;
  s.block[0] = s.block[1] = kTile;
  const int64_t col_tiles = (p.fg + kTile - 1) / kTile, row_tiles = (p.m + kTile - 1) / kTile;
  s.grid[0] = static_cast<unsigned>(std::max<int64_t>(p.groups * col_tiles, 1));
  s.grid[1] = static_cast<unsigned>(std::clamp<int64_t>(row_tiles, 1, 65535));  // the blocks loop beyond
  return s;
}

Lowered conv_kernel(const LowerContext& ctx, const ConvOperands& o, bool relu) {
  require_gpu(ctx);
  const DType dtype = ctx.inputs[0].dtype;
  if (!dtype_is_float(dtype)) ctx.unsupported("dtype ", dtype_label(dtype));
  for (size_t i = 1; i < ctx.inputs.size(); ++i)
    if (ctx.inputs[i].dtype != dtype)
      ctx.unsupported("operands of different dtypes (", ctx.inputs[0].to_string(), ", ", ctx.inputs[i].to_string(),
                      ")");
  if (ctx.inputs.size() != o.count())
    fail(Code::kInternal, ctx.op_label(), ": ", ctx.inputs.size(), " inputs; the attributes say ", o.count());
  gpu::ConvParams params = conv_params(ctx);
  params.relu = relu ? 1 : 0;
  const int64_t groups_tiles = params.groups * ((params.fg + kTile - 1) / kTile);
  if (!use_direct(params) && groups_tiles > int64_t{0x7fffffff})
    ctx.unsupported(params.groups, " groups of ", params.fg, " channels");
  // The per-channel operands hold one value per output channel, the residual the output.
  size_t at = o.bias ? 3 : 2;
  const size_t scale_at = o.scale ? at++ : 0, shift_at = o.shift ? at++ : 0, residual_at = o.residual ? at++ : 0;
  for (size_t i = 2; i < ctx.inputs.size(); ++i) {
    const bool per_channel = i != residual_at || !o.residual;
    if (per_channel ? ctx.inputs[i].num_elements() != params.out_c : ctx.inputs[i] != ctx.outputs[0])
      fail(Code::kInternal, ctx.op_label(), ": input ", i, " is ", ctx.inputs[i].to_string(), ", not ",
           per_channel ? "one value per output channel" : "the output's shape");
  }
  const bool direct = use_direct(params);
  const GpuKernel k = load(ctx, "conv.cu", [direct](DType d) { return gpu::conv2d_kernel(d, direct); });
  const cuda::LaunchShape launch = conv_launch(params);
  return {[k, launch, params, o, scale_at, shift_at, residual_at](const KernelArgs& a) {
    if (params.m * params.out_c == 0) return;  // nothing to write
    auto operand = [&](bool present, size_t i) { return present ? a.inputs[i] : nullptr; };
    const void *x = a.inputs[0], *filter = a.inputs[1], *bias = operand(o.bias, 2);
    const void *scale = operand(o.scale, scale_at), *shift = operand(o.shift, shift_at),
               *residual = operand(o.residual, residual_at);
    void* out = a.outputs[0];
    gpu::ConvParams p = params;
    void* args[] = {&x, &filter, &bias, &scale, &shift, &residual, &out, &p};
    k.launch(launch, a.stream, args);
  }};
}

Lowered lower_conv2d(const LowerContext& ctx) {
  ConvOperands o;
  o.bias = ctx.inputs.size() == 3;
  return conv_kernel(ctx, o, false);
}

Lowered lower_fused_conv2d(const LowerContext& ctx) {
  ConvOperands o;
  o.bias = ctx.attr<bool>("has_bias");
  o.scale = ctx.attr<bool>("has_scale");
  o.shift = ctx.attr<bool>("has_shift");
  o.residual = ctx.attrs().has("has_residual") && ctx.attr<bool>("has_residual");
  const std::string& activation = ctx.attr<std::string>("activation");
  if (activation != "none" && activation != "relu") ctx.unsupported("activation '", activation, "'");
  return conv_kernel(ctx, o, activation == "relu");
}

// ---- pools -------------------------------------------------------------------------------

// A pooling attribute given once for both spatial dims or once per dim.
std::pair<int64_t, int64_t> pair_of(const LowerContext& ctx, std::string_view name) {
  const auto& v = ctx.attr<std::vector<int64_t>>(name);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  fail(Code::kInvalidArgument, ctx.op_label(), ": attribute '", name, "' has ", v.size(), " entries; expected 1 or 2");
}

gpu::PoolParams pool_params(const LowerContext& ctx) {
  const Shape &x = ctx.inputs[0], &y = ctx.outputs[0];
  if (x.rank() != 4 || y.rank() != 4)
    fail(Code::kInternal, ctx.op_label(), ": x ", x.to_string(), " and out ", y.to_string(), " are not NHWC");
  gpu::PoolParams p{};
  p.batch = x.dims[0], p.in_h = x.dims[1], p.in_w = x.dims[2], p.channels = x.dims[3];
  p.out_h = y.dims[1], p.out_w = y.dims[2];
  std::tie(p.kernel_h, p.kernel_w) = pair_of(ctx, "kernel_size");
  std::tie(p.stride_h, p.stride_w) = pair_of(ctx, "stride");
  std::tie(p.dilation_h, p.dilation_w) = pair_of(ctx, "dilation");
  std::tie(p.pad_h, p.pad_w) = pair_of(ctx, "padding");
  return p;
}

Lowered pool_kernel(const LowerContext& ctx, bool max) {
  require_gpu(ctx);
  const DType dtype = ctx.inputs[0].dtype;
  if (!(max ? cpu::max_pool2d_supports(dtype) : cpu::avg_pool2d_supports(dtype)))
    ctx.unsupported("dtype ", dtype_label(dtype));
  gpu::PoolParams params = pool_params(ctx);
  params.count_boundary = !max && ctx.attr<bool>("count_boundary") ? 1 : 0;
  const GpuKernel k = max ? load(ctx, "pool.cu", gpu::max_pool2d_kernel) : load(ctx, "pool.cu", gpu::avg_pool2d_kernel);
  const int64_t total = ctx.outputs[0].num_elements();
  const cuda::LaunchShape launch = gpu_launch_for_elements(total);
  return {[k, launch, params, total](const KernelArgs& a) {
    if (total == 0) return;
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    gpu::PoolParams p = params;
    void* args[] = {&x, &y, &p};
    k.launch(launch, a.stream, args);
  }};
}

Lowered lower_max_pool2d(const LowerContext& ctx) { return pool_kernel(ctx, true); }
Lowered lower_avg_pool2d(const LowerContext& ctx) { return pool_kernel(ctx, false); }

}  // namespace

void register_gpu_conv_kernels(KernelTable& t) {
  t.add("conv2d", lower_conv2d);
  t.add("fused_conv2d", lower_fused_conv2d);
  t.add("max_pool2d", lower_max_pool2d);
  t.add("avg_pool2d", lower_avg_pool2d);
}

}  // namespace maxc

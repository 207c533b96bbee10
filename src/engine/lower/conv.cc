// Lowering of convolution and pooling: conv2d and fused_conv2d (NHWC or NCHW activations,
// RSCF or FCRS filter, groups, optional bias), max_pool2d and avg_pool2d (NHWC). ceil_mode is
// already in the output shape the compiler inferred; the kernels follow it.
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "engine/lower/lower.h"
#include "engine/lowering.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/pool.h"

namespace maxc {
namespace {


// A pooling attribute given once for both spatial dims or once per dim.
std::pair<int64_t, int64_t> pair_of(const LowerContext& ctx, std::string_view name) {
  const auto& v = ctx.attr<std::vector<int64_t>>(name);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  fail(Code::kInvalidArgument, ctx.op_label(), ": attribute '", name, "' has ", v.size(), " entries; expected 1 or 2");
}

cpu::Conv2dShape conv_shape(const LowerContext& ctx) {
  const Shape& x = ctx.inputs[0];
  const Shape& f = ctx.inputs[1];
  const Shape& y = ctx.outputs[0];
  cpu::Conv2dShape s;
  s.channels_first = ctx.attr<std::string>("input_layout") == "NCHW";
  s.filter_fcrs = ctx.attr<std::string>("filter_layout") == "FCRS";
  const auto& d = x.dims;
  if (s.channels_first) s.batch = d[0], s.in_c = d[1], s.in_h = d[2], s.in_w = d[3];
  else s.batch = d[0], s.in_h = d[1], s.in_w = d[2], s.in_c = d[3];
  if (s.channels_first) s.out_h = y.dims[2], s.out_w = y.dims[3];
  else s.out_h = y.dims[1], s.out_w = y.dims[2];
  if (s.filter_fcrs) s.out_c = f.dims[0], s.kernel_h = f.dims[2], s.kernel_w = f.dims[3];
  else s.kernel_h = f.dims[0], s.kernel_w = f.dims[1], s.out_c = f.dims[3];
  const auto& stride = ctx.attr<std::vector<int64_t>>("stride");
  const auto& dilation = ctx.attr<std::vector<int64_t>>("dilation");
  const auto& padding = ctx.attr<std::vector<int64_t>>("padding");
  if (stride.size() != 2 || dilation.size() != 2 || padding.size() != 4)
    fail(Code::kInvalidArgument, ctx.op_label(), ": stride, dilation and padding need 2, 2 and 4 entries");
  s.stride_h = stride[0], s.stride_w = stride[1];
  s.dilation_h = dilation[0], s.dilation_w = dilation[1];
  s.pad_top = padding[0], s.pad_bottom = padding[1], s.pad_left = padding[2], s.pad_right = padding[3];
  s.groups = ctx.attr<int64_t>("groups");
  return s;
}

// Where a fused_conv2d's epilogue operands sit among its inputs: x, filter, then those of
// bias, scale, shift and residual that it has.
struct EpilogueInputs {
  EpilogueInputs(bool has_bias, const cpu::ConvEpilogue& e)
      : scale(has_bias ? 3 : 2), shift(scale + (e.scale ? 1 : 0)), residual(shift + (e.shift ? 1 : 0)),
        count(residual + (e.residual ? 1 : 0)) {}
  // The residual's buffer may become the output's where oneDNN adds it as a sum post-op
  // (no scale or shift runs as a post-op before it), which reads each element of the
  // destination only to write it; as a binary operand it may be read after partial sums
  // were stored over it.
  int32_t inplace(const cpu::ConvEpilogue& run) const {
    return run.residual && !run.scale && !run.shift ? static_cast<int32_t>(residual) : -1;
  }

  size_t scale, shift, residual, count;
};

// The filter times one factor per output channel: FCRS holds a channel's weights together,
// RSCF has the channel as its fastest axis.
std::vector<float> scaled_filter(const cpu::Conv2dShape& s, const float* filter, const std::vector<float>& factors) {
  std::vector<float> out(static_cast<size_t>(s.filter_elements()));
  const int64_t per_channel = s.filter_elements() / s.out_c;
  for (int64_t i = 0; i < s.filter_elements(); ++i)
    out[i] = filter[i] * factors[s.filter_fcrs ? i / per_channel : i % s.out_c];
  return out;
}

// Names a list of factors in a packed layout's key (FNV-1a of their bytes): two convolutions
// that scale one weight differently must not share its packed copy.
uint64_t fingerprint(const std::vector<float>& factors) {
  uint64_t h = 14695981039346656037ull;
  for (const uint8_t byte : std::span(reinterpret_cast<const uint8_t*>(factors.data()), factors.size() * 4))
    h = (h ^ byte) * 1099511628211ull;
  return h;
}

// An inference BatchNormalization whose parameters were known at import time leaves a
// constant scale and shift. With a filter packed from a bound weight and no bias, the scale
// multiplies the filter as it is packed and the shift becomes the convolution's bias, so
// oneDNN's kernel has only the ReLU left to apply: its per-channel binary post-ops cost up to
// 80% of a 1x1 convolution's time (ResNet-50's 64 -> 256 at 56x56, one AVX2 thread).
// Returns nothing where that does not apply.
std::optional<Lowered> folded_conv_kernel(const LowerContext& ctx, const cpu::Conv2dShape& s, bool has_bias,
                                          const cpu::ConvEpilogue& e, const EpilogueInputs& at) {
  if (has_bias || !ctx.input_is_weight(1) || ctx.inputs[0].dtype != DType::kFloat32) return std::nullopt;
  const Constant* scale = e.scale ? ctx.input_constant(at.scale) : nullptr;
  const Constant* shift = e.shift ? ctx.input_constant(at.shift) : nullptr;
  if (e.scale != (scale != nullptr) || e.shift != (shift != nullptr) || !(scale || shift)) return std::nullopt;
  const cpu::ConvEpilogue run{false, false, e.relu, e.residual};
  auto conv = std::make_shared<const cpu::Conv2d>(s, DType::kFloat32, shift != nullptr, nullptr, true, run,
                                                  ctx.num_threads);
  if (!conv->filter_needs_packing()) return std::nullopt;
  std::vector<float> factors;
  if (scale) {
    const auto* f = reinterpret_cast<const float*>(scale->data.get());
    factors.assign(f, f + s.out_c);
  }
  std::shared_ptr<const uint8_t> bias = shift ? shift->data : nullptr;
  const bool residual = e.residual;
  const size_t residual_at = at.residual;
  Lowered lowered{[conv, bias, residual, residual_at](const KernelArgs& a) {
                    conv->run(a.inputs[0], a.inputs[1], bias.get(), a.outputs[0], a.scratch, true, nullptr, nullptr,
                              residual ? static_cast<const float*>(a.inputs[residual_at]) : nullptr);
                  },
                  conv->scratch_bytes(), at.inplace(run)};
  std::string layout = conv->filter_layout();
  if (scale) layout += str_cat(" scaled by ", fingerprint(factors));
  lowered.prepack = {1, layout, conv->packed_filter_bytes(), [conv, s, factors](const void* w, void* out) {
                       if (factors.empty()) return conv->pack_filter(w, out);
                       conv->pack_filter(scaled_filter(s, static_cast<const float*>(w), factors).data(), out);
                     }};
  return lowered;
}

// A filter that is a bound weight is packed once into the layout oneDNN's kernel wants (the
// engine caches it per weight), instead of being reordered on every call. Inputs: x, filter,
// then the bias, scale and shift the node has (fused_conv2d, compiler/fuse_conv.cc).
Lowered conv_kernel(const LowerContext& ctx, bool has_bias, const cpu::ConvEpilogue& e) {
  const DType dtype = ctx.inputs[0].dtype;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64 && dtype != DType::kFloat16 && dtype != DType::kBFloat16)
    ctx.unsupported("dtype ", dtype_label(dtype));
  if (e.any() && dtype != DType::kFloat32) ctx.unsupported("a fused epilogue on ", dtype_label(dtype));
  const cpu::Conv2dShape s = conv_shape(ctx);
  const EpilogueInputs at(has_bias, e);
  if (std::optional<Lowered> folded = folded_conv_kernel(ctx, s, has_bias, e, at)) return *folded;
  const Constant* filter = ctx.input_constant(1);
  const bool packable = !filter && ctx.input_is_weight(1);
  auto conv = std::make_shared<const cpu::Conv2d>(s, dtype, has_bias, filter ? filter->data.get() : nullptr,
                                                  packable, e, ctx.num_threads);
  const bool packed = packable && conv->filter_needs_packing();
  Lowered lowered{[conv, has_bias, packed, e, at](const KernelArgs& a) {
                    auto operand = [&](bool present, size_t i) {
                      return present ? static_cast<const float*>(a.inputs[i]) : nullptr;
                    };
                    conv->run(a.inputs[0], a.inputs[1], has_bias ? a.inputs[2] : nullptr, a.outputs[0], a.scratch,
                              packed, operand(e.scale, at.scale), operand(e.shift, at.shift),
                              operand(e.residual, at.residual));
                  },
                  conv->scratch_bytes(), at.inplace(e)};
  if (packed)
    lowered.prepack = {1, conv->filter_layout(), conv->packed_filter_bytes(),
                       [conv](const void* w, void* out) { conv->pack_filter(w, out); }};
  return lowered;
}

Lowered lower_conv2d(const LowerContext& ctx) { return conv_kernel(ctx, ctx.inputs.size() == 3, {}); }

Lowered lower_fused_conv2d(const LowerContext& ctx) {
  const cpu::ConvEpilogue e{ctx.attr<bool>("has_scale"), ctx.attr<bool>("has_shift"),
                            ctx.attr<std::string>("activation") == "relu",
                            ctx.attrs().has("has_residual") && ctx.attr<bool>("has_residual")};
  const bool has_bias = ctx.attr<bool>("has_bias");
  const EpilogueInputs at(has_bias, e);
  const size_t expected = at.count;
  if (ctx.inputs.size() != expected)
    fail(Code::kInternal, ctx.op_label(), ": ", ctx.inputs.size(), " inputs; the attributes say ", expected);
  const std::string& layout = ctx.attr<std::string>("input_layout");
  const int64_t channels = ctx.outputs[0].dims[layout == "NCHW" ? 1 : 3];
  if (e.residual && ctx.inputs[at.residual] != ctx.outputs[0])
    fail(Code::kInternal, ctx.op_label(), ": the residual is ", ctx.inputs[at.residual].to_string(), ", the output ",
         ctx.outputs[0].to_string());
  for (size_t i = at.scale; i < at.residual; ++i)
    if (ctx.inputs[i].num_elements() != channels)
      fail(Code::kInternal, ctx.op_label(), ": input ", i, " is ", ctx.inputs[i].to_string(), ", not one value per "
           "channel (", channels, ")");
  return conv_kernel(ctx, has_bias, e);
}

cpu::Pool2dShape pool_shape(const LowerContext& ctx) {
  const Shape& x = ctx.inputs[0];
  const Shape& y = ctx.outputs[0];
  cpu::Pool2dShape s;
  s.batch = x.dims[0], s.in_h = x.dims[1], s.in_w = x.dims[2], s.channels = x.dims[3];
  s.out_h = y.dims[1], s.out_w = y.dims[2];
  std::tie(s.kernel_h, s.kernel_w) = pair_of(ctx, "kernel_size");
  std::tie(s.stride_h, s.stride_w) = pair_of(ctx, "stride");
  std::tie(s.dilation_h, s.dilation_w) = pair_of(ctx, "dilation");
  std::tie(s.pad_h, s.pad_w) = pair_of(ctx, "padding");
  return s;
}

Lowered lower_max_pool2d(const LowerContext& ctx) {
  const DType dtype = ctx.inputs[0].dtype;
  if (!cpu::max_pool2d_supports(dtype)) ctx.unsupported("dtype ", dtype_label(dtype));
  const cpu::Pool2dShape s = pool_shape(ctx);
  return {[dtype, s](const KernelArgs& a) { cpu::max_pool2d(dtype, s, a.inputs[0], a.outputs[0]); }};
}

Lowered lower_avg_pool2d(const LowerContext& ctx) {
  const DType dtype = ctx.inputs[0].dtype;
  if (!cpu::avg_pool2d_supports(dtype)) ctx.unsupported("dtype ", dtype_label(dtype));
  const cpu::Pool2dShape s = pool_shape(ctx);
  const bool count_boundary = ctx.attr<bool>("count_boundary");
  return {[dtype, s, count_boundary](const KernelArgs& a) {
    cpu::avg_pool2d(dtype, s, count_boundary, a.inputs[0], a.outputs[0]);
  }};
}

}  // namespace

void register_conv_kernels(KernelTable& t) {
  t.add("conv2d", lower_conv2d);
  t.add("fused_conv2d", lower_fused_conv2d);
  t.add("max_pool2d", lower_max_pool2d);
  t.add("avg_pool2d", lower_avg_pool2d);
}

}  // namespace maxc

#include "kernels/cpu/conv.h"

#include <cstring>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/dnnl_convert.h"
#include "kernels/cpu/dnnl_engine.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

bool is_half(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

bool is_pointwise(const Conv2dShape& s) {
  return s.kernel_h == 1 && s.kernel_w == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_top == 0 &&
         s.pad_bottom == 0 && s.pad_left == 0 && s.pad_right == 0 && s.groups == 1 && !s.channels_first &&
         !s.filter_fcrs;
}

// Below this many output pixels, reordering the filter on every call costs more than a
// kernel that reads it as stored loses (see conv_dnnl.h).
constexpr int64_t kPlainFilterPixels = 128;

bool prefers_plain_filter(const Conv2dShape& s, const void* constant_filter, bool packable_filter) {
  return !constant_filter && !packable_filter && s.batch * s.out_h * s.out_w < kPlainFilterPixels;
}

}  // namespace

Conv2d::Conv2d(const Conv2dShape& s, DType dtype, bool has_bias, const void* constant_filter, bool packable_filter,
               const ConvEpilogue& epilogue, int32_t threads)
    : s_(s), dtype_(dtype), has_bias_(has_bias), epilogue_(epilogue) {
  if (epilogue.any() && dtype != DType::kFloat32)
    fail(Code::kUnimplemented, "conv2d: a fused epilogue on ", dtype_label(dtype),
         " (float32 only)");
  // Only oneDNN's direct kernels add a residual: compiler/channels_last.cc fuses one only
  // where they run, into float32 NHWC convolutions with FCRS filters.
  if (epilogue.residual && (s.channels_first || !s.filter_fcrs))
    fail(Code::kInternal, "conv2d: a residual epilogue needs NHWC activations and an FCRS filter");
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64 && !is_half(dtype))
    fail(Code::kUnimplemented, "conv2d: no CPU kernel for dtype ", dtype_label(dtype));
  if (s.out_elements() == 0) {
    path_ = Path::kEmpty;
    return;
  }
  if (is_pointwise(s)) {
    const std::vector<int64_t> rows{s.batch * s.in_h * s.in_w, s.in_c}, filter{s.in_c, s.out_c};
    matmul_ = std::make_unique<Matmul>(matmul_dims(rows, filter), dtype, MatmulEpilogue{Activation::kNone, has_bias, s.out_c},
                                       /*may_pack_rhs=*/false, threads);
    path_ = Path::kMatmul;
    scratch_.add(matmul_->scratch_bytes());
    return;
  }
  // oneDNN has no answer for an empty reduction (no input channels): the direct kernel's
  // sum of nothing plus the bias is. It adds no residual.
  if (epilogue.residual && s.in_c == 0)
    fail(Code::kUnimplemented, "conv2d: a residual epilogue over no input channels");
  if (dtype == DType::kFloat64 || s.in_c == 0) {
    path_ = Path::kDirect;
    if (is_half(dtype)) plan_widened();
    return;
  }
  try {
    const void* filter = is_half(dtype) ? nullptr : constant_filter;
    dnnl_ = std::make_unique<DnnlConv2d>(s, dnnl_data_type(dtype), has_bias, dtype == DType::kFloat32, filter,
                                         prefers_plain_filter(s, filter, packable_filter), epilogue, threads);
    path_ = Path::kDnnl;
    dnnl_at_ = scratch_.add(dnnl_->scratch_bytes());
    // The residual is summed in the destination, before the ReLU: only a post-op can.
    if (epilogue.residual && !dnnl_->epilogue_applied())
      fail(Code::kUnimplemented, "conv2d: oneDNN's ", dnnl_->implementation(), " takes no residual post-op");
    return;
  } catch (const Error&) {
    // No oneDNN kernel for this case: float32 falls back to the direct kernel, which adds
    // no residual.
    if (epilogue.residual) throw;
    if (dtype == DType::kFloat32) {
      path_ = Path::kDirect;
      return;
    }
  }
  dnnl_ = std::make_unique<DnnlConv2d>(s, dnnl::memory::data_type::f32, has_bias, true, nullptr,
                                       prefers_plain_filter(s, nullptr, false), ConvEpilogue{}, threads);
  path_ = Path::kDnnlWidened;
  plan_widened();
  dnnl_at_ = scratch_.add(dnnl_->scratch_bytes());
}

// float32 copies of every operand, for half types run by a float32 kernel.
void Conv2d::plan_widened() {
  x_at_ = scratch_.add(sizeof(float) * s_.in_elements());
  filter_at_ = scratch_.add(sizeof(float) * s_.filter_elements());
  bias_at_ = scratch_.add(has_bias_ ? sizeof(float) * s_.out_c : 0);
  out_at_ = scratch_.add(sizeof(float) * s_.out_elements());
}

std::string Conv2d::implementation() const {
  switch (path_) {
    case Path::kEmpty: return "empty";
    case Path::kDnnl: return "onednn:" + dnnl_->implementation();
    case Path::kDnnlWidened: return "onednn-f32:" + dnnl_->implementation();
    case Path::kDirect: return "direct";
    case Path::kMatmul: return "matmul/" + matmul_->implementation();
  }
  return "?";
}

void Conv2d::run(const void* x, const void* filter, const void* bias, void* out, void* scratch, bool filter_packed,
                 const float* scale, const float* shift, const float* residual) const {
  if (epilogue_.residual && residual != out && path_ == Path::kDnnl && dnnl_->residual_in_destination())
    std::memcpy(out, residual, sizeof(float) * s_.out_elements());
  run_path(x, filter, bias, out, scratch, filter_packed, scale, shift, residual);
  const bool applied = path_ == Path::kDnnl && dnnl_->epilogue_applied();
  if (epilogue_.any() && !applied && path_ != Path::kEmpty)
    apply_conv_epilogue(s_, epilogue_, scale, shift, static_cast<float*>(out));
}

void Conv2d::run_path(const void* x, const void* filter, const void* bias, void* out, void* scratch,
                      bool filter_packed, const float* scale, const float* shift, const float* residual) const {
  const void* b = has_bias_ ? bias : nullptr;
  switch (path_) {
    case Path::kEmpty: return;
    case Path::kMatmul: return matmul_->run(x, filter, b, out, scratch);
    case Path::kDnnl:
      return dnnl_->run(x, filter, b, out, ScratchLayout::at<void>(scratch, dnnl_at_), filter_packed, scale, shift,
                        residual);
    case Path::kDnnlWidened: return run_widened(x, filter, b, out, scratch);
    case Path::kDirect:
      if (is_half(dtype_)) return run_widened(x, filter, b, out, scratch);
      if (dtype_ == DType::kFloat64)
        return conv2d_direct(s_, static_cast<const double*>(x), static_cast<const double*>(filter),
                             static_cast<const double*>(b), static_cast<double*>(out));
      return conv2d_direct(s_, static_cast<const float*>(x), static_cast<const float*>(filter),
                           static_cast<const float*>(b), static_cast<float*>(out));
  }
}

namespace {

// out = max(out * scale + shift, 0 when relu), over n values that share one channel (NCHW) or
// over one pixel's channels (NHWC): scale and shift are then per-value arrays.
MAXC_SIMD_CLONES void affine_span(float* out, int64_t n, const float* scale, int64_t scale_step, const float* shift,
                                  int64_t shift_step, bool relu) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = out[i] * scale[i * scale_step] + shift[i * shift_step];
    out[i] = relu && v < 0.f ? 0.f : v;
  }
}

}  // namespace

void apply_conv_epilogue(const Conv2dShape& s, const ConvEpilogue& e, const float* scale, const float* shift,
                         float* out) {
  const int64_t pixels = s.out_h * s.out_w, c = s.out_c;
  // Absent operands read as ones and zeros.
  const std::vector<float> ones(e.scale ? 0 : static_cast<size_t>(c), 1.f), zeros(e.shift ? 0 : static_cast<size_t>(c), 0.f);
  const float* sc = e.scale ? scale : ones.data();
  const float* sh = e.shift ? shift : zeros.data();
  parallel_for(s.batch * (s.channels_first ? c : pixels), s.channels_first ? pixels : c, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      if (s.channels_first) affine_span(out + r * pixels, pixels, sc + r % c, 0, sh + r % c, 0, e.relu);
      else affine_span(out + r * c, c, sc, 1, sh, 1, e.relu);
    }
  });
}

void Conv2d::run_widened(const void* x, const void* filter, const void* bias, void* out, void* scratch) const {
  auto* x32 = ScratchLayout::at<float>(scratch, x_at_);
  auto* filter32 = ScratchLayout::at<float>(scratch, filter_at_);
  auto* bias32 = bias ? ScratchLayout::at<float>(scratch, bias_at_) : nullptr;
  auto* out32 = ScratchLayout::at<float>(scratch, out_at_);
  widen_to_f32(dtype_, x, x32, s_.in_elements());
  widen_to_f32(dtype_, filter, filter32, s_.filter_elements());
  if (bias) widen_to_f32(dtype_, bias, bias32, s_.out_c);
  if (path_ == Path::kDnnlWidened) dnnl_->run(x32, filter32, bias32, out32, ScratchLayout::at<void>(scratch, dnnl_at_));
  else conv2d_direct(s_, x32, filter32, bias32, out32);
  narrow_from_f32(dtype_, out32, out, s_.out_elements());
}

}  // namespace maxc::cpu

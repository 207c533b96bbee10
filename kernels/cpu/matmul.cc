#include "kernels/cpu/matmul.h"

#include "base/error.h"
#include "kernels/cpu/dnnl_convert.h"
#include "kernels/cpu/dnnl_engine.h"
#include "kernels/cpu/gemm.h"

namespace maxc::cpu {
namespace {

int64_t product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

bool is_half(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

}  // namespace

Matmul::Matmul(const MatmulDims& d, DType dtype, const MatmulEpilogue& e, bool may_pack_rhs, int32_t threads)
    : d_(d), dtype_(dtype), e_(e), threads_(threads) {
  if (!gemm_supports(dtype))
    fail(Code::kUnimplemented, "matmul: no CPU kernel for dtype ", dtype_label(dtype));
  if (dtype_is_integral(dtype) && e.activation != Activation::kNone && e.activation != Activation::kRelu)
    fail(Code::kUnimplemented, "matmul: no CPU kernel for the ", activation_name(e.activation), " epilogue on ",
         dtype_name(dtype));
  if (d.rhs_transposed && dtype != DType::kFloat32)
    fail(Code::kUnimplemented, "matmul: a transposed rhs is float32 only, not ", dtype_name(dtype));
  if (d.m == 0 || d.n == 0 || d.batch_count() == 0) {
    path_ = Path::kEmpty;
    return;
  }
  if (d.k == 0 && d.rhs_transposed) {  // nothing to read: the gemm's epilogue of zeros
    d_.rhs_transposed = false;
    path_ = Path::kGemm;
    return;
  }
  if (d.k == 0 || (dtype != DType::kFloat32 && !is_half(dtype))) {
    path_ = Path::kGemm;
    return;
  }
  try {
    dnnl_ = std::make_unique<DnnlMatmul>(d, dnnl_data_type(dtype), e, /*allow_reference=*/dtype == DType::kFloat32,
                                         may_pack_rhs, threads_);
    path_ = Path::kDnnl;
    pad_at_ = scratch_.add(dnnl_->scratchpad_bytes());
    return;
  } catch (const Error&) {
    // No oneDNN kernel for this case (too many batch dims, a half type): the next best.
  }
  if (is_half(dtype)) {
    try {
      plan_widened();
      return;
    } catch (const Error&) {
      scratch_ = ScratchLayout();
    }
  }
  path_ = Path::kGemm;
}

// Half operands that oneDNN cannot take here: float32 copies of every operand in scratch.
void Matmul::plan_widened() {
  path_ = Path::kDnnlWidened;
  dnnl_ = std::make_unique<DnnlMatmul>(d_, dnnl::memory::data_type::f32, e_, /*allow_reference=*/true,
                                       /*may_pack_rhs=*/false, threads_);
  lhs_at_ = scratch_.add(sizeof(float) * product(d_.lhs_batch) * d_.m * d_.k);
  rhs_at_ = scratch_.add(sizeof(float) * product(d_.rhs_batch) * d_.k * d_.n);
  bias_at_ = scratch_.add(e_.has_bias ? sizeof(float) * e_.bias_len : 0);
  out_at_ = scratch_.add(sizeof(float) * d_.batch_count() * d_.m * d_.n);
  pad_at_ = scratch_.add(dnnl_->scratchpad_bytes());
}

std::string Matmul::implementation() const {
  switch (path_) {
    case Path::kEmpty: return "empty";
    case Path::kDnnl: return "onednn:" + dnnl_->implementation();
    case Path::kDnnlWidened: return "onednn-f32:" + dnnl_->implementation();
    case Path::kGemm: return "gemm";
  }
  return "?";
}

void Matmul::run(const void* lhs, const void* rhs, const void* bias, void* out, void* scratch) const {
  switch (path_) {
    case Path::kEmpty: return;
    case Path::kDnnl: return dnnl_->run(lhs, rhs, bias, out, ScratchLayout::at<void>(scratch, pad_at_));
    case Path::kDnnlWidened: return run_widened(lhs, rhs, bias, out, scratch);
    case Path::kGemm: return gemm(dtype_, d_, lhs, rhs, bias, out, e_);
  }
}

void Matmul::run_widened(const void* lhs, const void* rhs, const void* bias, void* out, void* scratch) const {
  auto* lhs32 = ScratchLayout::at<float>(scratch, lhs_at_);
  auto* rhs32 = ScratchLayout::at<float>(scratch, rhs_at_);
  auto* bias32 = ScratchLayout::at<float>(scratch, bias_at_);
  auto* out32 = ScratchLayout::at<float>(scratch, out_at_);
  widen_to_f32(dtype_, lhs, lhs32, product(d_.lhs_batch) * d_.m * d_.k);
  widen_to_f32(dtype_, rhs, rhs32, product(d_.rhs_batch) * d_.k * d_.n);
  if (e_.has_bias) widen_to_f32(dtype_, bias, bias32, e_.bias_len);
  dnnl_->run(lhs32, rhs32, bias32, out32, ScratchLayout::at<void>(scratch, pad_at_));
  narrow_from_f32(dtype_, out32, out, d_.batch_count() * d_.m * d_.n);
}

}  // namespace maxc::cpu

// conv2d for every float dtype, as one object made when a node is lowered: oneDNN for
// float32 (and float16/bfloat16 natively where oneDNN can, else in float32 through scratch
// copies), the direct kernel for float64. A pointwise convolution (1x1, stride 1, no
// padding, one group, NHWC and RSCF) is a matmul of [N*H*W, C] by the filter as it is
// stored, [C, F]: it runs as one, with no filter reorder. run() is const and safe from
// several threads.
#pragma once

#include <memory>
#include <string>

#include "base/dtype.h"
#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/conv_shape.h"
#include "kernels/cpu/dnnl_scratch.h"
#include "kernels/cpu/matmul.h"

namespace maxc::cpu {

class Conv2d {
 public:
  // UNIMPLEMENTED for dtypes no kernel handles. `constant_filter` may be null.
  // `packable_filter`: the caller will pack a non-constant filter once, through
  // pack_filter(), if filter_needs_packing() (a bound weight), rather than have each call
  // reorder it.
  // `epilogue` (float32 only) is applied by every path: as oneDNN post-ops where it can.
  // `threads`: the pool's size, which oneDNN's share of the work is cut for.
  Conv2d(const Conv2dShape& s, DType dtype, bool has_bias, const void* constant_filter, bool packable_filter = false,
         const ConvEpilogue& epilogue = {}, int32_t threads = 1);

  uint64_t scratch_bytes() const { return scratch_.size(); }
  // "onednn:<impl>", "onednn-f32:<impl>", "matmul/<matmul's>", "direct" or "empty".
  std::string implementation() const;

  // The filter layout run() wants with `filter_packed` (see DnnlConv2d).
  bool filter_needs_packing() const { return path_ == Path::kDnnl && dnnl_->filter_needs_packing(); }
  uint64_t packed_filter_bytes() const { return dnnl_->packed_filter_bytes(); }
  std::string filter_layout() const { return dnnl_->filter_layout(); }
  void pack_filter(const void* filter, void* packed) const { dnnl_->pack_filter(filter, packed); }

  // scale and shift: the epilogue's per-channel operands, out_c floats each, when it has them;
  // residual: its addend, out's shape and layout, which may be `out` itself (then it is
  // overwritten, the cheap way: no copy).
  void run(const void* x, const void* filter, const void* bias, void* out, void* scratch, bool filter_packed = false,
           const float* scale = nullptr, const float* shift = nullptr, const float* residual = nullptr) const;

 private:
  enum class Path { kEmpty, kDnnl, kDnnlWidened, kDirect, kMatmul };

  void plan_widened();
  void run_path(const void* x, const void* filter, const void* bias, void* out, void* scratch, bool filter_packed,
                const float* scale, const float* shift, const float* residual) const;
  void run_widened(const void* x, const void* filter, const void* bias, void* out, void* scratch) const;

  Conv2dShape s_;
  DType dtype_;
  bool has_bias_;
  ConvEpilogue epilogue_;
  Path path_ = Path::kDirect;
  std::unique_ptr<DnnlConv2d> dnnl_;
  std::unique_ptr<Matmul> matmul_;
  ScratchLayout scratch_;
  uint64_t x_at_ = 0, filter_at_ = 0, bias_at_ = 0, out_at_ = 0, dnnl_at_ = 0;
};

}  // namespace maxc::cpu

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
  Conv2d(const Conv2dShape& s, DType dtype, bool has_bias, const void* constant_filter);

  uint64_t scratch_bytes() const { return scratch_.size(); }
  // "onednn:<impl>", "onednn-f32:<impl>", "matmul/<matmul's>", "direct" or "empty".
  std::string implementation() const;

  void run(const void* x, const void* filter, const void* bias, void* out, void* scratch) const;

 private:
  enum class Path { kEmpty, kDnnl, kDnnlWidened, kDirect, kMatmul };

  void plan_widened();
  void run_widened(const void* x, const void* filter, const void* bias, void* out, void* scratch) const;

  Conv2dShape s_;
  DType dtype_;
  bool has_bias_;
  Path path_ = Path::kDirect;
  std::unique_ptr<DnnlConv2d> dnnl_;
  std::unique_ptr<Matmul> matmul_;
  ScratchLayout scratch_;
  uint64_t x_at_ = 0, filter_at_ = 0, bias_at_ = 0, out_at_ = 0, dnnl_at_ = 0;
};

}  // namespace maxc::cpu

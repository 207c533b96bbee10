// numpy's matmul (with the fused epilogue of matmul_epilogue.h) for every numeric dtype, as
// one object made when a node is lowered: it picks the implementation once (oneDNN for
// float32, and for float16/bfloat16 natively where oneDNN can or else in float32 through
// scratch copies; our gemm for float64, integers and K = 0) and says how much scratch a
// call needs. run() is const and safe to call from several threads at once.
#pragma once

#include <memory>
#include <string>

#include "base/dtype.h"
#include "kernels/cpu/dnnl_scratch.h"
#include "kernels/cpu/matmul_dnnl.h"
#include "kernels/cpu/matmul_epilogue.h"
#include "kernels/cpu/matmul_shape.h"

namespace maxc::cpu {

class Matmul {
 public:
  // UNIMPLEMENTED when no kernel handles `dtype` (and, for integers, the activation).
  // `may_pack_rhs`: the rhs is a weight the caller can pack once (see rhs_packed()).
  // `threads`: the pool's size, which oneDNN's share of the work is cut for (DnnlMatmul).
  Matmul(const MatmulDims& d, DType dtype, const MatmulEpilogue& e, bool may_pack_rhs = false, int32_t threads = 1);

  uint64_t scratch_bytes() const { return scratch_.size(); }
  // When rhs_packed(), run() reads the rhs as pack_rhs() wrote it (DnnlMatmul).
  bool rhs_packed() const { return path_ == Path::kDnnl && dnnl_->rhs_packed(); }
  uint64_t packed_rhs_bytes() const { return dnnl_->packed_rhs_bytes(); }
  std::string rhs_layout() const { return dnnl_->rhs_layout(); }
  void pack_rhs(const void* rhs, void* packed) const { dnnl_->pack_rhs(rhs, packed); }
  // "onednn:<impl>", "onednn-f32:<impl>" (through float32 copies), "gemm" or "empty".
  std::string implementation() const;

  void run(const void* lhs, const void* rhs, const void* bias, void* out, void* scratch) const;

 private:
  enum class Path { kEmpty, kDnnl, kDnnlWidened, kGemm };

  void plan_widened();
  void run_widened(const void* lhs, const void* rhs, const void* bias, void* out, void* scratch) const;

  MatmulDims d_;
  DType dtype_;
  MatmulEpilogue e_;
  int32_t threads_ = 1;
  Path path_ = Path::kGemm;
  std::unique_ptr<DnnlMatmul> dnnl_;
  ScratchLayout scratch_;
  uint64_t lhs_at_ = 0, rhs_at_ = 0, bias_at_ = 0, out_at_ = 0, pad_at_ = 0;
};

}  // namespace maxc::cpu

// A oneDNN matmul primitive for one MatmulDims and epilogue: bias as the primitive's bias
// argument, the activation as an eltwise post-op — except float32 bias/relu epilogues, which
// run after the primitive through bias_relu_rows (faster than oneDNN's gemm post-processing). Created once when a node is lowered and run
// by any number of threads at once (each call makes its own memory objects and brings its
// own scratchpad).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <string>

#include "kernels/cpu/matmul_epilogue.h"
#include "kernels/cpu/matmul_shape.h"

namespace maxc::cpu {

class DnnlMatmul {
 public:
  // UNIMPLEMENTED when oneDNN has no implementation for `type` and the epilogue on this CPU,
  // or only its slow reference one and `allow_reference` is false.
  DnnlMatmul(const MatmulDims& d, dnnl::memory::data_type type, const MatmulEpilogue& e, bool allow_reference);

  uint64_t scratchpad_bytes() const { return scratchpad_bytes_; }
  const std::string& implementation() const { return implementation_; }

  // `scratchpad` holds scratchpad_bytes(); bias is read only when the epilogue has one.
  void run(const void* lhs, const void* rhs, const void* bias, void* out, void* scratchpad) const;

 private:
  dnnl::memory::desc src_, weights_, bias_, dst_, scratchpad_;
  dnnl::matmul primitive_;
  bool has_bias_ = false;   // oneDNN adds the bias
  bool own_epilogue_ = false;  // we add the bias and apply relu after oneDNN (bias_relu_rows)
  MatmulEpilogue epilogue_;
  int64_t rows_ = 0, cols_ = 0;  // of the whole result, batches folded into rows
  uint64_t scratchpad_bytes_ = 0;
  std::string implementation_;
};

// oneDNN's eltwise algorithm (and alpha) for an activation; false for kNone.
bool dnnl_eltwise_of(Activation a, dnnl::algorithm* algorithm, float* alpha);

}  // namespace maxc::cpu

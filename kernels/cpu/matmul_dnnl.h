// A oneDNN matmul primitive for one MatmulDims and epilogue: bias as the primitive's bias
// argument, the activation as an eltwise post-op — except float32 bias/relu epilogues, which
// run after the primitive through bias_relu_rows (faster than oneDNN's gemm post-processing). Created once when a node is lowered and run
// by any number of threads at once (each call makes its own memory objects and brings its
// own scratchpad).
//
// A weight rhs (a 2-D matrix bound once, read by every call) may be packed: oneDNN then
// chooses its layout (for float32 on AVX-512, BA16a64b) and the caller packs the weight into
// it once, where a plain rhs is copied into that layout by every call. At BERT's shapes
// (128 x 768 x 3072, 128 x 3072 x 768, weights cold in cache as in a model) the packed
// weight took 0.78-0.90x the plain one's time on a 2-core Zen 5.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <string>

#include "kernels/cpu/dnnl_engine.h"
#include "kernels/cpu/matmul_epilogue.h"
#include "kernels/cpu/matmul_shape.h"

namespace maxc::cpu {

class DnnlMatmul {
 public:
  // UNIMPLEMENTED when oneDNN has no implementation for `type` and the epilogue on this CPU,
  // or only its slow reference one and `allow_reference` is false. With `may_pack_rhs`,
  // oneDNN picks the rhs layout (see above); rhs_packed() says whether it differs from the
  // plain one.
  DnnlMatmul(const MatmulDims& d, dnnl::memory::data_type type, const MatmulEpilogue& e, bool allow_reference,
             bool may_pack_rhs = false);

  uint64_t scratchpad_bytes() const { return scratchpad_bytes_; }
  const std::string& implementation() const { return implementation_; }

  // When rhs_packed(), run() reads an rhs that pack_rhs() wrote from the plain one:
  // packed_rhs_bytes() in the layout that rhs_layout() names.
  bool rhs_packed() const { return static_cast<bool>(pack_); }
  uint64_t packed_rhs_bytes() const { return weights_.get_size(); }
  std::string rhs_layout() const { return layout_key(weights_); }
  void pack_rhs(const void* rhs, void* packed) const;

  // `scratchpad` holds scratchpad_bytes(); bias is read only when the epilogue has one.
  void run(const void* lhs, const void* rhs, const void* bias, void* out, void* scratchpad) const;

 private:
  dnnl::matmul::primitive_desc make_pd(const dnnl::memory::desc& weights, const MatmulEpilogue& e) const;

  dnnl::memory::desc src_, weights_, user_weights_, bias_, dst_, scratchpad_, pack_scratchpad_;
  dnnl::reorder pack_;  // user_weights_ -> weights_, when they differ
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

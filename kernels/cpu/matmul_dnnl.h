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
//
// oneDNN runs each call on one thread (dnnl_engine.h); with `threads` > 1 the problem is cut
// into shards that run on the pool (parallel_for): along the rows when the rhs is one matrix
// for all (batches folded into rows), else along the batch when no operand is broadcast. A
// few shards per thread, each worth a call of its own; at most two primitives (a full shard
// and the last one), made here. A shard's scratchpad is its own slice of the call's scratch.
// With fewer rows than shards wanted (a batch-1 dense layer: a matrix-vector product, bound by
// reading the rhs), the cut is along the rhs's columns instead, so that every thread reads its
// own part of the weight; such an rhs is read plain (a packed layout would interleave the
// columns of neighbouring shards).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <string>

#include "kernels/cpu/dnnl_call.h"
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
             bool may_pack_rhs = false, int32_t threads = 1);

  uint64_t scratchpad_bytes() const { return scratchpad_bytes_; }
  const std::string& implementation() const { return implementation_; }

  // When rhs_packed(), run() reads an rhs that pack_rhs() wrote from the plain one:
  // packed_rhs_bytes() in the layout that rhs_layout() names.
  bool rhs_packed() const { return static_cast<bool>(pack_); }
  uint64_t packed_rhs_bytes() const { return full_.weights.get_size(); }
  std::string rhs_layout() const { return layout_key(full_.weights); }
  int64_t shards() const { return shards_; }
  void pack_rhs(const void* rhs, void* packed) const;

  // `scratchpad` holds scratchpad_bytes(); bias is read only when the epilogue has one.
  void run(const void* lhs, const void* rhs, const void* bias, void* out, void* scratchpad) const;

 private:
  // One primitive and its descriptors: for a full shard, or for the last, shorter one.
  struct Part {
    dnnl::memory::desc src, weights, user_weights, bias, dst, scratchpad;
    dnnl::matmul primitive;
    std::string implementation;
  };
  // How the problem is cut: `count` shards of `per` units of the cut axis (the last gets
  // what is left); one unit is `lhs_step`, `rhs_step`, `out_step` and `bias_step` elements of
  // each operand and `out_rows` rows of the result. `by_cols`: a unit is a column of the rhs
  // and of the result, whose rows are `ld` apart.
  struct Cut {
    int64_t count = 1, per = 0, extent = 0;
    int64_t lhs_step = 0, rhs_step = 0, out_step = 0, bias_step = 0, out_rows = 0;
    bool by_cols = false;
    int64_t ld = 0;
  };

  static Cut cut_of(const MatmulDims& d, int32_t threads);
  static dnnl::matmul::primitive_desc make_pd(const Part& p, const dnnl::memory::desc& weights,
                                              const MatmulEpilogue& e);
  // The dims of a shard of `units` units of the cut axis.
  MatmulDims shard_dims(const MatmulDims& d, int64_t units) const;
  // `weights`: oneDNN's choice (format any) when null and may_pack, else that layout. A
  // columns cut's part reads its columns of the rhs and writes those of the result in place.
  Part make_part(const MatmulDims& d, dnnl::memory::data_type type, const MatmulEpilogue& e, bool may_pack,
                 const dnnl::memory::desc* weights) const;
  void run_shard(int64_t shard, const char* lhs, const char* rhs, const void* bias, char* out, char* scratch) const;
  // Our float32 bias/relu on `rows` whole rows of the result (own_epilogue_).
  void run_epilogue(float* out, int64_t rows, const void* bias) const;

  Cut cut_;
  int64_t shards_ = 1;
  Part full_, last_;  // last_ only when the last shard is shorter (has_last_)
  bool has_last_ = false;
  dnnl::memory::desc pack_scratchpad_;
  dnnl::reorder pack_;  // full_.user_weights -> full_.weights, when they differ
  bool has_bias_ = false;   // oneDNN adds the bias
  bool own_epilogue_ = false;  // we add the bias and apply relu after oneDNN (bias_relu_rows)
  MatmulEpilogue epilogue_;
  int64_t cols_ = 0;
  int64_t full_rows_ = 0;  // of the whole result, batches folded in
  size_t element_bytes_ = 0;
  uint64_t shard_pad_bytes_ = 0;  // one shard's scratchpad, 64-byte aligned
  uint64_t scratchpad_bytes_ = 0;
  std::string implementation_;
  DnnlCalls calls_;  // a site per shard
};

// oneDNN's eltwise algorithm (and alpha) for an activation; false for kNone.
bool dnnl_eltwise_of(Activation a, dnnl::algorithm* algorithm, float* alpha);

}  // namespace maxc::cpu

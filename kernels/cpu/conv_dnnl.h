// A oneDNN convolution for one Conv2dShape. The filter is described in its RSCF or FCRS
// layout; when oneDNN's kernel wants a blocked one it is reordered once: at creation for a
// compile-time constant, by the caller through pack_filter() for a bound weight (the
// engine's prepack: once per weight, not per call), else into scratch on each call.
// Safe to run from several threads at once.
//
// Activations stay in the caller's layout, except that for NCHW and a spatial kernel (3x3,
// 7x7, strided) oneDNN 2.6 has only im2col + gemm on plain NCHW, 1.3-2x slower than its
// direct kernel on channel-blocked data; there the input is reordered into blocked scratch
// and the result back, which costs a few percent of the convolution. NHWC, which the compiler
// gives every float32 convolution it fuses (compiler/channels_last.cc), needs neither; the
// NCHW path serves the others (other dtypes, unfused programs).
//
// Reordering the filter on each call costs about as much as a convolution over ~100 output
// pixels (measured on the AVX2 dev machine: 1.7 ms for a 3x3x512x512 filter, against 3.0 ms
// for the 7x7 convolution itself), so `prefer_plain_filter` asks for a kernel that reads the
// filter as stored (oneDNN's im2col + gemm) where one exists; callers that pack the filter
// once do not ask.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>

#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/conv_shape.h"
#include "kernels/cpu/dnnl_call.h"

namespace maxc::cpu {

class DnnlConv2d {
 public:
  // UNIMPLEMENTED when oneDNN has no implementation for `type` (or only its slow reference
  // one and `allow_reference` is false). `constant_filter`, when given, is the filter's data,
  // read now and never again.
  // `epilogue` runs as oneDNN post-ops where the chosen kernel takes them
  // (epilogue_applied()); otherwise the caller applies it.
  DnnlConv2d(const Conv2dShape& s, dnnl::memory::data_type type, bool has_bias, bool allow_reference,
             const void* constant_filter, bool prefer_plain_filter = false, const ConvEpilogue& epilogue = {},
             int32_t threads = 1);

  bool epilogue_applied() const { return post_ops_ > 0; }
  // run() expects the residual already in `out` (a sum post-op) rather than as an operand.
  bool residual_in_destination() const { return epilogue_.residual && !epilogue_.scale && !epilogue_.shift; }

  uint64_t scratch_bytes() const { return scratch_bytes_; }
  const std::string& implementation() const { return implementation_; }
  size_t shards() const { return std::max<size_t>(shards_.size(), 1); }

  // Whether run() wants the filter in another layout than the one it is stored in; then
  // pack_filter() writes that layout (packed_filter_bytes() bytes) and run() reads it with
  // `filter_packed`. Describes the layout for the engine's cache of packed weights.
  bool filter_needs_packing() const { return needs_reorder_ && !packed_filter_; }
  uint64_t packed_filter_bytes() const { return weights_.get_size(); }
  std::string filter_layout() const;
  void pack_filter(const void* filter, void* packed) const;

  // scale, shift and residual: the epilogue's operands (read when epilogue_applied(); the
  // residual only when not residual_in_destination()).
  void run(const void* x, const void* filter, const void* bias, void* out, void* scratch, bool filter_packed = false,
           const float* scale = nullptr, const float* shift = nullptr, const float* residual = nullptr) const;

 private:
  // A primitive for some shards, over their slice of the input and output.
  struct Part {
    dnnl::memory::desc src, dst, scratchpad;
    dnnl::convolution_forward primitive;
  };
  // One shard: its part and where its slices start (elements).
  struct Shard {
    size_t part;
    int64_t src_offset, dst_offset;
  };

  void pack_constant_filter(const void* filter);
  // Cuts the work into shards_ when it pays; leaves shards_ empty when it does not, or when a
  // slice has no kernel like the whole's.
  void plan_shards(const Conv2dShape& s, dnnl::memory::data_type type, int32_t threads);
  // The part for a slice of `images` images and `out_rows` output rows, reading `in_rows`
  // input rows with `top` and `bottom` padding; made on first use.
  size_t part_for(const Conv2dShape& s, dnnl::memory::data_type type, int64_t images, int64_t out_rows,
                  int64_t in_rows, int64_t top, int64_t bottom, std::vector<std::vector<int64_t>>* keys);
  // Runs one primitive at call site `site` of calls_; `residual_desc` describes `residual`
  // (when the epilogue reads one).
  void run_part(size_t site, const Part& p, const dnnl::memory::desc& residual_desc, const void* src,
                const void* weights, const void* bias, void* dst, void* scratchpad, const float* scale,
                const float* shift, const float* residual) const;
  void reorder(size_t site, const dnnl::reorder& r, const dnnl::memory::desc& pad, const dnnl::memory::desc& from,
               const void* from_data, const dnnl::memory::desc& to, void* to_data, void* scratchpad) const;

  dnnl::memory::desc src_, user_weights_, weights_, bias_, dst_, scratchpad_;
  dnnl::memory::desc user_src_, user_dst_;  // the caller's, when src_/dst_ are blocked
  Part whole_;  // the primitive over the whole input, in the layouts oneDNN chose
  dnnl::reorder reorder_, src_reorder_, dst_reorder_;  // filter, input and result, when needed
  dnnl::memory::desc reorder_scratchpad_, src_reorder_pad_, dst_reorder_pad_;
  uint64_t src_pad_at_ = 0, dst_pad_at_ = 0;
  bool needs_reorder_ = false, src_blocked_ = false, dst_blocked_ = false;
  bool has_bias_ = false;
  ConvEpilogue epilogue_;
  int post_ops_ = 0;  // how many post-ops the primitive has (0: the epilogue is the caller's)
  dnnl::memory::desc channel_desc_;  // [1, C, 1, 1]: the binary post-ops' operand
  std::shared_ptr<void> packed_filter_;  // the constant filter in weights_' layout
  // Scratch: oneDNN's scratchpad, the reorders', the reordered filter, the blocked input and
  // result (offsets; pieces not needed are empty).
  uint64_t scratch_bytes_ = 0, reorder_pad_at_ = 0, filter_at_ = 0, src_at_ = 0, dst_at_ = 0;
  std::string implementation_;
  std::vector<Part> parts_;
  std::vector<Shard> shards_;
  DnnlCalls calls_;
  uint64_t shard_pad_bytes_ = 0, shard_pads_at_ = 0;
  size_t element_bytes_ = 0;
};

}  // namespace maxc::cpu

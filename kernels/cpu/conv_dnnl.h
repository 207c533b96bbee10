// A oneDNN convolution for one Conv2dShape. The activations stay in the caller's layout
// (NHWC or NCHW); the filter is described in its RSCF or FCRS layout and, when oneDNN's
// kernel wants a blocked one, reordered into scratch on each call, or once at creation when
// the filter is a compile-time constant. Safe to run from several threads at once.
//
// A reorder on each call costs about as much as a convolution over ~100 output pixels
// (measured on the AVX2 dev machine: 1.7 ms for a 3x3x512x512 filter, against 3.0 ms for
// the 7x7 convolution itself), so `prefer_plain_filter` asks for a kernel that reads the
// filter as stored (oneDNN's im2col + gemm) where one exists.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <string>

#include "kernels/cpu/conv_shape.h"

namespace maxc::cpu {

class DnnlConv2d {
 public:
  // UNIMPLEMENTED when oneDNN has no implementation for `type` (or only its slow reference
  // one and `allow_reference` is false). `constant_filter`, when given, is the filter's data,
  // read now and never again.
  DnnlConv2d(const Conv2dShape& s, dnnl::memory::data_type type, bool has_bias, bool allow_reference,
             const void* constant_filter, bool prefer_plain_filter = false);

  uint64_t scratch_bytes() const { return scratch_bytes_; }
  const std::string& implementation() const { return implementation_; }

  void run(const void* x, const void* filter, const void* bias, void* out, void* scratch) const;

 private:
  void pack_constant_filter(const void* filter);
  void reorder(const dnnl::memory& from, const dnnl::memory& to, void* scratchpad) const;

  dnnl::memory::desc src_, user_weights_, weights_, bias_, dst_, scratchpad_, reorder_scratchpad_;
  dnnl::convolution_forward primitive_;
  dnnl::reorder reorder_;   // user filter -> weights_, when they differ
  bool needs_reorder_ = false;
  bool has_bias_ = false;
  std::shared_ptr<void> packed_filter_;  // the constant filter in weights_' layout
  // Scratch: oneDNN's scratchpad at 0, then the reorder's, then the reordered filter.
  uint64_t scratch_bytes_ = 0, reorder_pad_at_ = 0, filter_at_ = 0;
  std::string implementation_;
};

}  // namespace maxc::cpu

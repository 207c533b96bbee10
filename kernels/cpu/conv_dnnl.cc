#include "kernels/cpu/conv_dnnl.h"

#include <cstdlib>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/dnnl_engine.h"
#include "kernels/cpu/dnnl_scratch.h"

namespace maxc::cpu {
namespace {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;

// The filter as oneDNN sees it, logically [G,] O, I, kH, kW, with the strides of its RSCF or
// FCRS storage (F = G * O).
dnnl::memory::desc user_filter_desc(const Conv2dShape& s, dnnl::memory::data_type type) {
  const int64_t g = s.groups, o = s.out_c / g, i = s.in_c / g, kh = s.kernel_h, kw = s.kernel_w, f = s.out_c;
  dims d, strides;
  if (!s.filter_fcrs) {  // [kH, kW, I, F]: f = g * O + o is the fastest axis
    d = {o, i, kh, kw};
    strides = {1, f, kw * i * f, i * f};
    if (g > 1) d.insert(d.begin(), g), strides.insert(strides.begin(), o);
  } else {  // [F, I, kH, kW]
    d = {o, i, kh, kw};
    strides = {i * kh * kw, kh * kw, kw, 1};
    if (g > 1) d.insert(d.begin(), g), strides.insert(strides.begin(), o * i * kh * kw);
  }
  return dnnl::memory::desc(d, type, strides);
}

dnnl::memory::desc any_filter_desc(const Conv2dShape& s, dnnl::memory::data_type type) {
  dims d{s.out_c / s.groups, s.in_c / s.groups, s.kernel_h, s.kernel_w};
  if (s.groups > 1) d.insert(d.begin(), s.groups);
  return dnnl::memory::desc(d, type, tag::any);
}

}  // namespace

DnnlConv2d::DnnlConv2d(const Conv2dShape& s, dnnl::memory::data_type type, bool has_bias, bool allow_reference,
                       const void* constant_filter, bool prefer_plain_filter)
    : has_bias_(has_bias) {
  try {
    const tag act_tag = s.channels_first ? tag::nchw : tag::nhwc;
    src_ = dnnl::memory::desc({s.batch, s.in_c, s.in_h, s.in_w}, type, act_tag);
    dst_ = dnnl::memory::desc({s.batch, s.out_c, s.out_h, s.out_w}, type, act_tag);
    user_weights_ = user_filter_desc(s, type);
    bias_ = dnnl::memory::desc({s.out_c}, type, tag::x);
    const dims strides{s.stride_h, s.stride_w}, dilates{s.dilation_h - 1, s.dilation_w - 1};
    const dims pad_l{s.pad_top, s.pad_left}, pad_r{s.pad_bottom, s.pad_right};
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto algo = dnnl::algorithm::convolution_direct;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto make_pd = [&](const dnnl::memory::desc& weights) {
      auto desc = has_bias ? dnnl::convolution_forward::desc(kind, algo, src_, weights, bias_, dst_, strides, dilates,
                                                             pad_l, pad_r)
                           : dnnl::convolution_forward::desc(kind, algo, src_, weights, dst_, strides, dilates,
                                                             pad_l, pad_r);
      return dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_engine());
    };
    dnnl::convolution_forward::primitive_desc pd;
    if (prefer_plain_filter) {
      try {
        pd = make_pd(user_weights_);
        if (std::string(pd.impl_info_str()).find("ref") != std::string::npos) pd = {};
      } catch (const dnnl::error&) {
        // No kernel reads the filter as stored: reorder it after all.
      }
    }
    if (!pd) pd = make_pd(any_filter_desc(s, type));
    implementation_ = pd.impl_info_str();
    if (!allow_reference && implementation_.find("ref") != std::string::npos)
      fail(Code::kUnimplemented, "oneDNN has only its reference convolution (", implementation_,
           ") for this type here");
    weights_ = pd.weights_desc();
    scratchpad_ = pd.scratchpad_desc();
    primitive_ = dnnl::convolution_forward(pd);
    needs_reorder_ = weights_ != user_weights_;
    ScratchLayout layout;
    layout.add(scratchpad_.get_size());
    if (needs_reorder_) {
      dnnl::reorder::primitive_desc reorder_pd(dnnl_engine(), user_weights_, dnnl_engine(), weights_, attr);
      reorder_scratchpad_ = reorder_pd.scratchpad_desc();
      reorder_ = dnnl::reorder(reorder_pd);
      reorder_pad_at_ = layout.add(reorder_scratchpad_.get_size());
      if (constant_filter) pack_constant_filter(constant_filter);
      else filter_at_ = layout.add(weights_.get_size());
    }
    scratch_bytes_ = layout.size();
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kUnimplemented, "creating a oneDNN convolution", err);
  }
}

void DnnlConv2d::pack_constant_filter(const void* filter) {
  const size_t bytes = weights_.get_size();
  void* packed = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!packed) fail(Code::kResourceExhausted, "packing a convolution filter of ", bytes, " bytes");
  packed_filter_ = std::shared_ptr<void>(packed, std::free);
  dnnl::memory from(user_weights_, dnnl_engine(), const_cast<void*>(filter));
  dnnl::memory to(weights_, dnnl_engine(), packed);
  std::vector<uint8_t> pad(reorder_scratchpad_.get_size());
  reorder(from, to, pad.data());
}

void DnnlConv2d::reorder(const dnnl::memory& from, const dnnl::memory& to, void* scratchpad) const {
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  if (reorder_scratchpad_.get_size() > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(reorder_scratchpad_, dnnl_engine(), scratchpad));
  dnnl::stream& stream = dnnl_stream();
  reorder_.execute(stream, args);
  stream.wait();
}

void DnnlConv2d::run(const void* x, const void* filter, const void* bias, void* out, void* scratch) const {
  try {
    const dnnl::engine& engine = dnnl_engine();
    dnnl::stream& stream = dnnl_stream();
    void* weights = const_cast<void*>(filter);
    if (packed_filter_) {
      weights = packed_filter_.get();
    } else if (needs_reorder_) {
      weights = ScratchLayout::at<void>(scratch, filter_at_);
      reorder(dnnl::memory(user_weights_, engine, const_cast<void*>(filter)), dnnl::memory(weights_, engine, weights),
              ScratchLayout::at<void>(scratch, reorder_pad_at_));
    }
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, dnnl::memory(src_, engine, const_cast<void*>(x))},
        {DNNL_ARG_WEIGHTS, dnnl::memory(weights_, engine, weights)},
        {DNNL_ARG_DST, dnnl::memory(dst_, engine, out)},
    };
    if (has_bias_) args.emplace(DNNL_ARG_BIAS, dnnl::memory(bias_, engine, const_cast<void*>(bias)));
    if (scratchpad_.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad_, engine, scratch));
    primitive_.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kInternal, "running a oneDNN convolution (" + implementation_ + ")", err);
  }
}

}  // namespace maxc::cpu

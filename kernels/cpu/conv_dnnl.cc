#include "kernels/cpu/conv_dnnl.h"

#include <cstdlib>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/dnnl_engine.h"
#include "kernels/cpu/dnnl_scratch.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;

// A shard is worth a oneDNN call of its own from this many multiply-adds, and a convolution
// has at most kShardsPerThread shards per thread (as for the matmul, matmul_dnnl.cc).
constexpr int64_t kMinShardWork = int64_t{1} << 20;
constexpr int64_t kShardsPerThread = 2;

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

// NCHW with a spatial kernel: oneDNN's direct kernel wants channel-blocked activations (see
// the header).
bool wants_blocked_activations(const Conv2dShape& s) {
  const bool pointwise = s.kernel_h == 1 && s.kernel_w == 1 && s.stride_h == 1 && s.stride_w == 1;
  return s.channels_first && s.groups == 1 && !pointwise;
}

bool is_reference(const dnnl::convolution_forward::primitive_desc& pd) {
  return std::string(pd.impl_info_str()).find("ref") != std::string::npos;
}

dnnl::memory::desc any_like(const dnnl::memory::desc& d) {
  return dnnl::memory::desc(d.dims(), d.data_type(), tag::any);
}

}  // namespace

// The epilogue as post-ops: binary mul and add by [1, C, 1, 1], the residual, then eltwise
// relu. Alone, the residual is a sum post-op, which adds what the destination holds (the
// residual, copied there first, when it is not there already); after binaries it is a
// binary add of a whole tensor, since oneDNN's jit kernels take a sum only first.
dnnl::post_ops post_ops_of(const ConvEpilogue& e, const dnnl::memory::desc& channel, const dnnl::memory::desc& dst) {
  dnnl::post_ops ops;
  if (e.scale) ops.append_binary(dnnl::algorithm::binary_mul, channel);
  if (e.shift) ops.append_binary(dnnl::algorithm::binary_add, channel);
  if (e.residual && (e.scale || e.shift)) ops.append_binary(dnnl::algorithm::binary_add, dst);
  else if (e.residual) ops.append_sum(1.f);
  if (e.relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  return ops;
}

DnnlConv2d::DnnlConv2d(const Conv2dShape& s, dnnl::memory::data_type type, bool has_bias, bool allow_reference,
                       const void* constant_filter, bool prefer_plain_filter, const ConvEpilogue& epilogue,
                       int32_t threads)
    : has_bias_(has_bias), epilogue_(epilogue) {
  check_dnnl_params("conv2d groups", {s.groups}, 1);
  check_dnnl_tensor("conv2d input", {s.batch, s.in_c, s.in_h, s.in_w});
  check_dnnl_tensor("conv2d output", {s.batch, s.out_c, s.out_h, s.out_w});
  check_dnnl_tensor("conv2d filter", {s.groups, s.out_c / s.groups, s.in_c / s.groups, s.kernel_h, s.kernel_w});
  check_dnnl_params("conv2d strides and dilations", {s.stride_h, s.stride_w, s.dilation_h, s.dilation_w}, 1);
  check_dnnl_params("conv2d pads", {s.pad_top, s.pad_bottom, s.pad_left, s.pad_right}, 0);
  try {
    const tag activations = s.channels_first ? tag::nchw : tag::nhwc;
    user_src_ = dnnl::memory::desc({s.batch, s.in_c, s.in_h, s.in_w}, type, activations);
    user_dst_ = dnnl::memory::desc({s.batch, s.out_c, s.out_h, s.out_w}, type, activations);
    user_weights_ = user_filter_desc(s, type);
    bias_ = dnnl::memory::desc({s.out_c}, type, tag::x);
    const dims strides{s.stride_h, s.stride_w}, dilates{s.dilation_h - 1, s.dilation_w - 1};
    const dims pad_l{s.pad_top, s.pad_left}, pad_r{s.pad_bottom, s.pad_right};
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto algo = dnnl::algorithm::convolution_direct;
    // Attributes are handles: each primitive gets its own object.
    auto user_scratchpad = [] {
      dnnl::primitive_attr a;
      a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      return a;
    };
    const dnnl::primitive_attr attr = user_scratchpad();  // of the reorders
    channel_desc_ = dnnl::memory::desc({1, s.out_c, 1, 1}, dnnl::memory::data_type::f32, tag::nchw);
    dnnl::primitive_attr conv_attr = user_scratchpad();
    const bool fuse = epilogue.any() && type == dnnl::memory::data_type::f32;
    if (fuse) conv_attr.set_post_ops(post_ops_of(epilogue, channel_desc_, user_dst_));
    auto make_pd = [&](const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
                       const dnnl::memory::desc& dst) -> dnnl::convolution_forward::primitive_desc {
      try {
        auto desc = has_bias ? dnnl::convolution_forward::desc(kind, algo, src, weights, bias_, dst, strides, dilates,
                                                               pad_l, pad_r)
                             : dnnl::convolution_forward::desc(kind, algo, src, weights, dst, strides, dilates,
                                                               pad_l, pad_r);
        return dnnl::convolution_forward::primitive_desc(desc, conv_attr, dnnl_engine());
      } catch (const dnnl::error&) {
        return {};  // no kernel for these layouts: the caller tries the next
      }
    };
    auto choose = [&]() -> dnnl::convolution_forward::primitive_desc {
      dnnl::convolution_forward::primitive_desc pd;
      if (prefer_plain_filter) {
        pd = make_pd(user_src_, user_weights_, user_dst_);
        if (pd && is_reference(pd)) pd = {};
      }
      if (!pd && wants_blocked_activations(s)) {
        pd = make_pd(any_like(user_src_), any_filter_desc(s, type), any_like(user_dst_));
        if (pd && is_reference(pd)) pd = {};
      }
      return pd ? pd : make_pd(user_src_, any_filter_desc(s, type), user_dst_);
    };
    dnnl::convolution_forward::primitive_desc pd = choose();
    // Only the direct kernels apply post-ops in registers; the reference and the im2col + gemm
    // ones run them as a slow separate pass, slower than the caller's loop.
    if (fuse && (!pd || is_reference(pd) || std::string(pd.impl_info_str()).find("gemm") != std::string::npos)) {
      conv_attr = user_scratchpad();
      pd = choose();
    }
    post_ops_ = conv_attr.get_post_ops().len();
    if (!pd) fail(Code::kUnimplemented, "oneDNN has no convolution for this shape and type");
    implementation_ = pd.impl_info_str();
    if (!allow_reference && implementation_.find("ref") != std::string::npos)
      fail(Code::kUnimplemented, "oneDNN has only its reference convolution (", implementation_,
           ") for this type here");
    src_ = pd.src_desc();
    dst_ = pd.dst_desc();
    weights_ = pd.weights_desc();
    scratchpad_ = pd.scratchpad_desc();
    whole_ = Part{src_, dst_, scratchpad_, dnnl::convolution_forward(pd)};
    ScratchLayout layout;
    layout.add(scratchpad_.get_size());
    needs_reorder_ = weights_ != user_weights_;
    if (needs_reorder_) {
      dnnl::reorder::primitive_desc reorder_pd(dnnl_engine(), user_weights_, dnnl_engine(), weights_, attr);
      reorder_scratchpad_ = reorder_pd.scratchpad_desc();
      reorder_ = dnnl::reorder(reorder_pd);
      reorder_pad_at_ = layout.add(reorder_scratchpad_.get_size());
      if (constant_filter) pack_constant_filter(constant_filter);
      else filter_at_ = layout.add(weights_.get_size());
    }
    src_blocked_ = src_ != user_src_;
    if (src_blocked_) {
      dnnl::reorder::primitive_desc r(dnnl_engine(), user_src_, dnnl_engine(), src_, attr);
      src_reorder_pad_ = r.scratchpad_desc();
      src_reorder_ = dnnl::reorder(r);
      src_pad_at_ = layout.add(src_reorder_pad_.get_size());
      src_at_ = layout.add(src_.get_size());
    }
    dst_blocked_ = dst_ != user_dst_;
    if (dst_blocked_) {
      dnnl::reorder::primitive_desc r(dnnl_engine(), dst_, dnnl_engine(), user_dst_, attr);
      dst_reorder_pad_ = r.scratchpad_desc();
      dst_reorder_ = dnnl::reorder(r);
      dst_pad_at_ = layout.add(dst_reorder_pad_.get_size());
      dst_at_ = layout.add(dst_.get_size());
    }
    element_bytes_ = dnnl::memory::desc({1}, type, tag::a).get_size();
    plan_shards(s, type, threads);
    if (!shards_.empty()) shard_pads_at_ = layout.add(shard_pad_bytes_ * shards_.size());
    scratch_bytes_ = layout.size();
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kUnimplemented, "creating a oneDNN convolution", err);
  }
}

// The blocked layout in full (padded dims, strides, inner blocks): two convolutions that
// share a filter share its packed copy only when they read the same layout.
std::string DnnlConv2d::filter_layout() const { return "onednn filter " + layout_key(weights_); }

void DnnlConv2d::pack_filter(const void* filter, void* packed) const {
  std::vector<uint8_t> pad(reorder_scratchpad_.get_size());
  try {
    run_reorder(reorder_, reorder_scratchpad_, dnnl::memory(user_weights_, dnnl_engine(), const_cast<void*>(filter)),
            dnnl::memory(weights_, dnnl_engine(), packed), pad.data());
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kInternal, "packing a convolution filter", err);
  }
}

void DnnlConv2d::pack_constant_filter(const void* filter) {
  const size_t bytes = weights_.get_size();
  void* packed = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!packed) fail(Code::kResourceExhausted, "packing a convolution filter of ", bytes, " bytes");
  packed_filter_ = std::shared_ptr<void>(packed, std::free);
  pack_filter(filter, packed);
}

// The sites of calls_ (dnnl_call.h): the three reorders, then the whole or each shard.
enum Site : size_t { kFilterSite, kSrcSite, kDstSite, kFirstPartSite };

void DnnlConv2d::reorder(size_t site, const dnnl::reorder& r, const dnnl::memory::desc& pad, const dnnl::memory::desc& from,
                         const void* from_data, const dnnl::memory::desc& to, void* to_data, void* scratchpad) const {
  const DnnlArg args[] = {{DNNL_ARG_FROM, &from, from_data}, {DNNL_ARG_TO, &to, to_data},
                          {DNNL_ARG_SCRATCHPAD, &pad, scratchpad}};
  calls_.run(site, r, std::span(args, pad.get_size() > 0 ? 3 : 2));
}

void DnnlConv2d::run(const void* x, const void* filter, const void* bias, void* out, void* scratch,
                     bool filter_packed, const float* scale, const float* shift, const float* residual) const {
  try {
    const void* weights = filter;
    if (packed_filter_) {
      weights = packed_filter_.get();
    } else if (needs_reorder_ && !filter_packed) {
      void* packed = ScratchLayout::at<void>(scratch, filter_at_);
      reorder(kFilterSite, reorder_, reorder_scratchpad_, user_weights_, filter, weights_, packed,
              ScratchLayout::at<void>(scratch, reorder_pad_at_));
      weights = packed;
    }
    const void* src = x;
    if (src_blocked_) {
      void* blocked = ScratchLayout::at<void>(scratch, src_at_);
      reorder(kSrcSite, src_reorder_, src_reorder_pad_, user_src_, x, src_, blocked,
              ScratchLayout::at<void>(scratch, src_pad_at_));
      src = blocked;
    }
    void* dst = dst_blocked_ ? ScratchLayout::at<void>(scratch, dst_at_) : out;
    if (shards_.empty()) {
      run_part(kFirstPartSite, whole_, user_dst_, src, weights, bias, dst, scratch, scale, shift, residual);
    } else {  // on the caller's layout (plan_shards): slices of x and out
      auto* pads = ScratchLayout::at<char>(scratch, shard_pads_at_);
      parallel_for(static_cast<int64_t>(shards_.size()), kMinWorkPerThread, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const Shard& sh = shards_[i];
          const Part& p = parts_[sh.part];
          run_part(kFirstPartSite + i, p, p.dst, static_cast<const char*>(src) + sh.src_offset * element_bytes_,
                   weights, bias, static_cast<char*>(dst) + sh.dst_offset * element_bytes_, pads + i * shard_pad_bytes_,
                   scale, shift, residual ? residual + sh.dst_offset : nullptr);
        }
      });
    }
    if (dst_blocked_)
      reorder(kDstSite, dst_reorder_, dst_reorder_pad_, dst_, dst, user_dst_, out,
              ScratchLayout::at<void>(scratch, dst_pad_at_));
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kInternal, "running a oneDNN convolution (" + implementation_ + ")", err);
  }
}

void DnnlConv2d::run_part(size_t site, const Part& p, const dnnl::memory::desc& residual_desc, const void* src,
                          const void* weights, const void* bias, void* dst, void* scratchpad, const float* scale,
                          const float* shift, const float* residual) const {
  // At most: src, weights, dst, bias, scratchpad and three post-op operands.
  DnnlArg storage[8] = {{DNNL_ARG_SRC, &p.src, src}, {DNNL_ARG_WEIGHTS, &weights_, weights}, {DNNL_ARG_DST, &p.dst, dst}};
  size_t n = 3;
  if (has_bias_) storage[n++] = {DNNL_ARG_BIAS, &bias_, bias};
  if (p.scratchpad.get_size() > 0) storage[n++] = {DNNL_ARG_SCRATCHPAD, &p.scratchpad, scratchpad};
  if (post_ops_ > 0) {
    int index = 0;
    for (const float* operand : {epilogue_.scale ? scale : nullptr, epilogue_.shift ? shift : nullptr}) {
      if (!operand) continue;
      storage[n++] = {DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, &channel_desc_, operand};
      ++index;
    }
    if (epilogue_.residual && !residual_in_destination())
      storage[n++] = {DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, &residual_desc, residual};
  }
  calls_.run(site, p.primitive, std::span(storage, n));
}

void DnnlConv2d::plan_shards(const Conv2dShape& s, dnnl::memory::data_type type, int32_t threads) {
  if (threads <= 1 || src_blocked_ || dst_blocked_) return;
  const int64_t work = s.out_elements() * (s.in_c / s.groups) * s.kernel_h * s.kernel_w;
  const int64_t by_work = work / kMinShardWork, most = int64_t{threads} * kShardsPerThread;
  const int64_t in_image = s.in_c * s.in_h * s.in_w, out_image = s.out_c * s.out_h * s.out_w;
  std::vector<std::vector<int64_t>> keys;
  try {
    if (s.batch > 1) {  // slices of the batch
      const int64_t want = std::min({most, s.batch, by_work});
      if (want <= 1) return;
      const int64_t per = (s.batch + want - 1) / want;
      for (int64_t b0 = 0; b0 < s.batch; b0 += per)
        shards_.push_back({part_for(s, type, std::min(per, s.batch - b0), s.out_h, s.in_h, s.pad_top, s.pad_bottom, &keys),
                           b0 * in_image, b0 * out_image});
    } else if (!s.channels_first) {  // slices of the output rows; NHWC rows are contiguous
      const int64_t want = std::min({most, s.out_h, by_work});
      if (want <= 1) return;
      const int64_t per = (s.out_h + want - 1) / want, window = (s.kernel_h - 1) * s.dilation_h + 1;
      for (int64_t h0 = 0; h0 < s.out_h; h0 += per) {
        const int64_t h1 = std::min(s.out_h, h0 + per);
        // The input rows the slice's windows cover, padding included, and those that exist.
        const int64_t first = h0 * s.stride_h - s.pad_top, end = (h1 - 1) * s.stride_h - s.pad_top + window;
        const int64_t in0 = std::max<int64_t>(0, first), in1 = std::min(s.in_h, end);
        if (in1 <= in0) throw Error(Code::kUnimplemented, "a slice of padding alone");
        shards_.push_back({part_for(s, type, 1, h1 - h0, in1 - in0, in0 - first, end - in1, &keys),
                           in0 * s.in_w * s.in_c, h0 * s.out_w * s.out_c});
      }
    }
  } catch (const dnnl::error&) {
    shards_.clear();
  } catch (const Error&) {
    shards_.clear();  // a slice has no kernel like the whole's: one call, as it was
  }
  if (shards_.size() <= 1) {
    shards_.clear();
    parts_.clear();
    return;
  }
  uint64_t pad = 0;
  for (const Part& p : parts_) pad = std::max<uint64_t>(pad, p.scratchpad.get_size());
  shard_pad_bytes_ = (pad + ScratchLayout::kAlign - 1) / ScratchLayout::kAlign * ScratchLayout::kAlign;
}

size_t DnnlConv2d::part_for(const Conv2dShape& s, dnnl::memory::data_type type, int64_t images, int64_t out_rows,
                            int64_t in_rows, int64_t top, int64_t bottom, std::vector<std::vector<int64_t>>* keys) {
  std::vector<int64_t> key{images, out_rows, in_rows, top, bottom};
  for (size_t i = 0; i < keys->size(); ++i)
    if ((*keys)[i] == key) return i;
  const tag activations = s.channels_first ? tag::nchw : tag::nhwc;
  Part p;
  p.src = dnnl::memory::desc({images, s.in_c, in_rows, s.in_w}, type, activations);
  p.dst = dnnl::memory::desc({images, s.out_c, out_rows, s.out_w}, type, activations);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (post_ops_ > 0) attr.set_post_ops(post_ops_of(epilogue_, channel_desc_, p.dst));
  const dims strides{s.stride_h, s.stride_w}, dilates{s.dilation_h - 1, s.dilation_w - 1};
  const dims pad_l{top, s.pad_left}, pad_r{bottom, s.pad_right};
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto algo = dnnl::algorithm::convolution_direct;
  auto desc = has_bias_ ? dnnl::convolution_forward::desc(kind, algo, p.src, weights_, bias_, p.dst, strides, dilates,
                                                          pad_l, pad_r)
                        : dnnl::convolution_forward::desc(kind, algo, p.src, weights_, p.dst, strides, dilates, pad_l,
                                                          pad_r);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, dnnl_engine());
  if (pd.impl_info_str() != implementation_ || pd.src_desc() != p.src || pd.dst_desc() != p.dst)
    throw Error(Code::kUnimplemented, "a slice's kernel differs from the whole's");
  p.scratchpad = pd.scratchpad_desc();
  p.primitive = dnnl::convolution_forward(pd);
  parts_.push_back(std::move(p));
  keys->push_back(std::move(key));
  return parts_.size() - 1;
}

}  // namespace maxc::cpu

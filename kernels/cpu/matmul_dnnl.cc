#include "kernels/cpu/matmul_dnnl.h"

#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/dnnl_engine.h"

namespace maxc::cpu {
namespace {

dnnl::memory::dims with_matrix(const std::vector<int64_t>& batch, int64_t rows, int64_t cols) {
  dnnl::memory::dims dims(batch.begin(), batch.end());
  dims.push_back(rows);
  dims.push_back(cols);
  return dims;
}

// An rhs stored [N, K] (a torch Linear weight) seen as [K, N]: strides (1, K) on the matrix,
// and none to speak of on the batch dims, which are all 1.
dnnl::memory::desc transposed_desc(const MatmulDims& d, dnnl::memory::data_type type) {
  for (int64_t b : d.rhs_batch)
    if (b != 1) fail(Code::kInternal, "a transposed matmul rhs has batch dims");
  dnnl::memory::dims strides(d.rhs_batch.size(), d.k * d.n);
  strides.push_back(1);
  strides.push_back(d.k);
  return dnnl::memory::desc(with_matrix(d.rhs_batch, d.k, d.n), type, strides);
}

}  // namespace

bool dnnl_eltwise_of(Activation a, dnnl::algorithm* algorithm, float* alpha) {
  *alpha = 0.f;
  switch (a) {
    case Activation::kNone: return false;
    case Activation::kRelu: *algorithm = dnnl::algorithm::eltwise_relu; return true;
    case Activation::kGelu: *algorithm = dnnl::algorithm::eltwise_gelu_erf; return true;
    case Activation::kGeluTanh: *algorithm = dnnl::algorithm::eltwise_gelu_tanh; return true;
    case Activation::kSigmoid: *algorithm = dnnl::algorithm::eltwise_logistic; return true;
    case Activation::kTanh: *algorithm = dnnl::algorithm::eltwise_tanh; return true;
    case Activation::kSilu:  // swish(x) = x * sigmoid(alpha * x)
      *algorithm = dnnl::algorithm::eltwise_swish;
      *alpha = 1.f;
      return true;
  }
  return false;
}

DnnlMatmul::DnnlMatmul(const MatmulDims& d, dnnl::memory::data_type type, const MatmulEpilogue& given,
                       bool allow_reference, bool may_pack_rhs)
    : own_epilogue_(type == dnnl::memory::data_type::f32 &&
                    (given.activation == Activation::kNone || given.activation == Activation::kRelu) &&
                    (given.has_bias || given.activation == Activation::kRelu)),
      epilogue_(given),
      rows_(d.batch_count() * d.m),
      cols_(d.n) {
  // What oneDNN itself does: all of the epilogue, or none of it when we run it.
  const MatmulEpilogue e = own_epilogue_ ? MatmulEpilogue{} : given;
  has_bias_ = e.has_bias;
  const size_t rank = d.out_batch.size() + 2;
  if (rank > DNNL_MAX_NDIMS) fail(Code::kUnimplemented, "matmul with ", rank - 2, " batch dims after collapsing");
  check_dnnl_tensor("matmul lhs", with_matrix(d.lhs_batch, d.m, d.k));
  check_dnnl_tensor("matmul rhs", with_matrix(d.rhs_batch, d.k, d.n));
  check_dnnl_tensor("matmul result", with_matrix(d.out_batch, d.m, d.n));
  try {
    src_ = dense_desc(with_matrix(d.lhs_batch, d.m, d.k), type);
    user_weights_ = d.rhs_transposed ? transposed_desc(d, type) : dense_desc(with_matrix(d.rhs_batch, d.k, d.n), type);
    dst_ = dense_desc(with_matrix(d.out_batch, d.m, d.n), type);
    if (e.has_bias) {
      dnnl::memory::dims bias_dims(rank, 1);
      bias_dims.back() = e.bias_len;
      bias_ = dense_desc(bias_dims, type);
    }
    dnnl::matmul::primitive_desc pd;
    if (may_pack_rhs) {
      try {
        pd = make_pd(dnnl::memory::desc(user_weights_.dims(), type, dnnl::memory::format_tag::any), e);
      } catch (const dnnl::error&) {
        // No kernel chooses its own rhs layout here: the plain one below.
      }
    }
    if (!pd) pd = make_pd(user_weights_, e);
    implementation_ = pd.impl_info_str();
    if (!allow_reference && implementation_.find("ref") != std::string::npos)
      fail(Code::kUnimplemented, "oneDNN has only its reference matmul (", implementation_, ") for this type here");
    weights_ = pd.weights_desc();
    if (weights_ != user_weights_) {
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::reorder::primitive_desc r(dnnl_engine(), user_weights_, dnnl_engine(), weights_, attr);
      pack_scratchpad_ = r.scratchpad_desc();
      pack_ = dnnl::reorder(r);
    }
    scratchpad_ = pd.scratchpad_desc();
    scratchpad_bytes_ = scratchpad_.get_size();
    primitive_ = dnnl::matmul(pd);
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kUnimplemented, "creating a oneDNN matmul", err);
  }
}

dnnl::matmul::primitive_desc DnnlMatmul::make_pd(const dnnl::memory::desc& weights, const MatmulEpilogue& e) const {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::algorithm algorithm;
  float alpha;
  if (dnnl_eltwise_of(e.activation, &algorithm, &alpha)) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, algorithm, alpha, 0.f);
    attr.set_post_ops(ops);
  }
  if (e.has_bias)
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src_, weights, bias_, dst_), attr, dnnl_engine());
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src_, weights, dst_), attr, dnnl_engine());
}

void DnnlMatmul::pack_rhs(const void* rhs, void* packed) const {
  if (!pack_) fail(Code::kInternal, "packing the rhs of a matmul that reads it plain");
  std::vector<uint8_t> pad(pack_scratchpad_.get_size());
  try {
    run_reorder(pack_, pack_scratchpad_, dnnl::memory(user_weights_, dnnl_engine(), const_cast<void*>(rhs)),
                dnnl::memory(weights_, dnnl_engine(), packed), pad.data());
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kInternal, "packing a matmul's rhs", err);
  }
}

void DnnlMatmul::run(const void* lhs, const void* rhs, const void* bias, void* out, void* scratchpad) const {
  try {
    const dnnl::engine& engine = dnnl_engine();
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, dnnl::memory(src_, engine, const_cast<void*>(lhs))},
        {DNNL_ARG_WEIGHTS, dnnl::memory(weights_, engine, const_cast<void*>(rhs))},
        {DNNL_ARG_DST, dnnl::memory(dst_, engine, out)},
    };
    if (has_bias_) args.emplace(DNNL_ARG_BIAS, dnnl::memory(bias_, engine, const_cast<void*>(bias)));
    if (scratchpad_bytes_ > 0) args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad_, engine, scratchpad));
    dnnl::stream& stream = dnnl_stream();
    primitive_.execute(stream, args);
    stream.wait();
    if (own_epilogue_)
      bias_relu_rows(static_cast<float*>(out), rows_, cols_, epilogue_.has_bias ? static_cast<const float*>(bias) : nullptr,
                     epilogue_.bias_len, epilogue_.activation == Activation::kRelu);
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kInternal, "running a oneDNN matmul (" + implementation_ + ")", err);
  }
}

}  // namespace maxc::cpu

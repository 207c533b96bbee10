#include "kernels/cpu/matmul_dnnl.h"

#include <algorithm>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/dnnl_engine.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

// A shard is worth a oneDNN call of its own from this many multiply-adds, and a matmul has at
// most kShardsPerThread shards per thread: more would cost efficiency in oneDNN's blocking
// for little gain in balance.
constexpr int64_t kMinShardWork = int64_t{1} << 20;
constexpr int64_t kShardsPerThread = 2;
// A columns shard is a multiple of this many columns: whole vectors and cache lines of the
// rhs and the result, whatever the element type.
constexpr int64_t kColumnsGrain = 64;

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

size_t element_bytes(dnnl::memory::data_type type) {
  return dnnl::memory::desc({1}, type, dnnl::memory::format_tag::a).get_size();
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

DnnlMatmul::Cut DnnlMatmul::cut_of(const MatmulDims& d, int32_t threads) {
  const int64_t most = int64_t{threads} * kShardsPerThread;
  const int64_t work = d.batch_count() * d.m * d.n * std::max<int64_t>(d.k, 1);
  const int64_t by_work = threads <= 1 ? 1 : std::min(most, work / kMinShardWork);
  const bool rhs_shared = std::all_of(d.rhs_batch.begin(), d.rhs_batch.end(), [](int64_t b) { return b == 1; });
  const int64_t rows = d.batch_count() * d.m;
  Cut c;
  if (threads > 1 && rhs_shared && rows < most && d.n >= 2 * kColumnsGrain) {  // [rows, K] @ [K, N], cut along the columns
    c = Cut{.extent = d.n, .rhs_step = d.rhs_transposed ? d.k : 1, .out_step = 1, .bias_step = 1,
            .by_cols = true, .ld = d.n};
    const int64_t want = std::min(by_work, d.n / kColumnsGrain);
    c.per = want <= 1 ? c.extent : (c.extent + want - 1) / want;
    c.per = std::min(c.extent, (c.per + kColumnsGrain - 1) / kColumnsGrain * kColumnsGrain);
    c.count = (c.extent + c.per - 1) / c.per;
    return c;
  }
  if (rhs_shared) {  // [rows, K] @ [K, N], cut along the rows
    c = Cut{.extent = rows, .lhs_step = d.k, .out_step = d.n, .out_rows = 1};
  } else if (d.lhs_batch == d.out_batch && d.rhs_batch == d.out_batch) {  // cut along the batch
    c = Cut{.extent = d.batch_count(), .lhs_step = d.m * d.k, .rhs_step = d.k * d.n, .out_step = d.m * d.n,
            .out_rows = d.m};
  } else {  // broadcast batches: one call
    return Cut{.per = 1, .extent = 1, .out_rows = rows};
  }
  const int64_t want = std::min(by_work, c.extent);
  c.per = want <= 1 ? c.extent : (c.extent + want - 1) / want;
  c.count = (c.extent + c.per - 1) / c.per;
  return c;
}

MatmulDims DnnlMatmul::shard_dims(const MatmulDims& d, int64_t units) const {
  MatmulDims s;
  s.k = d.k;
  s.n = d.n;
  s.rhs_transposed = d.rhs_transposed;
  if (cut_.by_cols) {
    s.m = d.batch_count() * d.m;
    s.n = units;
  } else if (cut_.rhs_step == 0) {
    s.m = units;
  } else {
    s.m = d.m;
    s.out_batch = s.lhs_batch = s.rhs_batch = {units};
  }
  return s;
}

dnnl::matmul::primitive_desc DnnlMatmul::make_pd(const Part& p, const dnnl::memory::desc& weights,
                                                 const MatmulEpilogue& e) {
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
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(p.src, weights, p.bias, p.dst), attr, dnnl_engine());
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(p.src, weights, p.dst), attr, dnnl_engine());
}

DnnlMatmul::Part DnnlMatmul::make_part(const MatmulDims& d, dnnl::memory::data_type type, const MatmulEpilogue& e,
                                       bool may_pack, const dnnl::memory::desc* weights) const {
  Part p;
  p.src = dense_desc(with_matrix(d.lhs_batch, d.m, d.k), type);
  p.user_weights = d.rhs_transposed ? transposed_desc(d, type) : dense_desc(with_matrix(d.rhs_batch, d.k, d.n), type);
  p.dst = dense_desc(with_matrix(d.out_batch, d.m, d.n), type);
  if (cut_.by_cols) {  // 2-D (shard_dims), rows `ld` apart
    if (!d.rhs_transposed) p.user_weights = dnnl::memory::desc({d.k, d.n}, type, {cut_.ld, 1});
    p.dst = dnnl::memory::desc({d.m, d.n}, type, {cut_.ld, 1});
  }
  if (e.has_bias) {
    dnnl::memory::dims bias_dims(d.out_batch.size() + 2, 1);
    bias_dims.back() = e.bias_len == 1 ? 1 : d.n;  // a shard's own columns of a per-column bias
    p.bias = dense_desc(bias_dims, type);
  }
  dnnl::matmul::primitive_desc pd;
  if (weights) {
    pd = make_pd(p, *weights, e);
  } else {
    if (may_pack) {
      try {
        pd = make_pd(p, dnnl::memory::desc(p.user_weights.dims(), type, dnnl::memory::format_tag::any), e);
      } catch (const dnnl::error&) {
        // No kernel chooses its own rhs layout here: the plain one below.
      }
    }
    if (!pd) pd = make_pd(p, p.user_weights, e);
  }
  p.implementation = pd.impl_info_str();
  p.weights = pd.weights_desc();
  p.scratchpad = pd.scratchpad_desc();
  p.primitive = dnnl::matmul(pd);
  return p;
}

DnnlMatmul::DnnlMatmul(const MatmulDims& d, dnnl::memory::data_type type, const MatmulEpilogue& given,
                       bool allow_reference, bool may_pack_rhs, int32_t threads)
    : own_epilogue_(type == dnnl::memory::data_type::f32 &&
                    (given.activation == Activation::kNone || given.activation == Activation::kRelu) &&
                    (given.has_bias || given.activation == Activation::kRelu)),
      epilogue_(given),
      cols_(d.n),
      full_rows_(d.batch_count() * d.m) {
  // What oneDNN itself does: all of the epilogue, or none of it when we run it.
  const MatmulEpilogue e = own_epilogue_ ? MatmulEpilogue{} : given;
  has_bias_ = e.has_bias;
  const size_t rank = d.out_batch.size() + 2;
  if (rank > DNNL_MAX_NDIMS) fail(Code::kUnimplemented, "matmul with ", rank - 2, " batch dims after collapsing");
  check_dnnl_tensor("matmul lhs", with_matrix(d.lhs_batch, d.m, d.k));
  check_dnnl_tensor("matmul rhs", with_matrix(d.rhs_batch, d.k, d.n));
  check_dnnl_tensor("matmul result", with_matrix(d.out_batch, d.m, d.n));
  cut_ = cut_of(d, threads);
  if (given.bias_len == 1) cut_.bias_step = 0;  // one bias for every column
  shards_ = cut_.count;
  const int64_t last_units = cut_.extent - (shards_ - 1) * cut_.per;
  has_last_ = shards_ > 1 && last_units != cut_.per;
  // Only a rows cut reads one rhs in every shard, so only it may pack the rhs.
  const bool may_pack = may_pack_rhs && (shards_ == 1 || (cut_.rhs_step == 0 && !cut_.by_cols));
  try {
    element_bytes_ = element_bytes(type);
    const MatmulDims full = shards_ > 1 ? shard_dims(d, cut_.per) : d;
    auto make = [&](bool pack) {
      full_ = make_part(full, type, e, pack, nullptr);
      // A rows cut: the last shard reads the rhs the full ones read, in the layout they chose.
      const dnnl::memory::desc* rhs = cut_.rhs_step == 0 ? &full_.weights : nullptr;
      if (has_last_) last_ = make_part(shard_dims(d, last_units), type, e, false, rhs);
    };
    try {
      make(may_pack);
    } catch (const dnnl::error&) {
      if (!may_pack) throw;
      make(false);  // no kernel of the last shard reads the packed layout: both read it plain
    }
    implementation_ = full_.implementation;
    for (const Part* p : {&full_, &last_})
      if (!allow_reference && p->implementation.find("ref") != std::string::npos)
        fail(Code::kUnimplemented, "oneDNN has only its reference matmul (", p->implementation, ") for this type here");
    if (full_.weights != full_.user_weights) {
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::reorder::primitive_desc r(dnnl_engine(), full_.user_weights, dnnl_engine(), full_.weights, attr);
      pack_scratchpad_ = r.scratchpad_desc();
      pack_ = dnnl::reorder(r);
    }
    const uint64_t pad = std::max<uint64_t>(full_.scratchpad.get_size(), has_last_ ? last_.scratchpad.get_size() : 0);
    shard_pad_bytes_ = (pad + 63) / 64 * 64;
    scratchpad_bytes_ = shards_ > 1 ? shard_pad_bytes_ * shards_ : pad;
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kUnimplemented, "creating a oneDNN matmul", err);
  }
}

void DnnlMatmul::pack_rhs(const void* rhs, void* packed) const {
  if (!pack_) fail(Code::kInternal, "packing the rhs of a matmul that reads it plain");
  std::vector<uint8_t> pad(pack_scratchpad_.get_size());
  try {
    run_reorder(pack_, pack_scratchpad_, dnnl::memory(full_.user_weights, dnnl_engine(), const_cast<void*>(rhs)),
                dnnl::memory(full_.weights, dnnl_engine(), packed), pad.data());
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kInternal, "packing a matmul's rhs", err);
  }
}

void DnnlMatmul::run(const void* lhs, const void* rhs, const void* bias, void* out, void* scratchpad) const {
  auto* l = static_cast<const char*>(lhs);
  auto* r = static_cast<const char*>(rhs);
  auto* o = static_cast<char*>(out);
  auto* pad = static_cast<char*>(scratchpad);
  if (shards_ == 1) {
    run_shard(0, l, r, bias, o, pad);
  } else {  // one index per shard, each worth a thread of its own (cut_of)
    parallel_for(shards_, kMinWorkPerThread, [&](int64_t begin, int64_t end) {
      for (int64_t shard = begin; shard < end; ++shard) run_shard(shard, l, r, bias, o, pad);
    });
  }
  // A columns cut has few rows: its epilogue runs once, over whole rows.
  if (own_epilogue_ && cut_.by_cols) run_epilogue(reinterpret_cast<float*>(out), full_rows_, bias);
}

void DnnlMatmul::run_epilogue(float* out, int64_t rows, const void* bias) const {
  bias_relu_rows(out, rows, cols_, epilogue_.has_bias ? static_cast<const float*>(bias) : nullptr,
                 epilogue_.bias_len, epilogue_.activation == Activation::kRelu);
}

void DnnlMatmul::run_shard(int64_t shard, const char* lhs, const char* rhs, const void* bias, char* out,
                           char* scratch) const {
  const Part& p = has_last_ && shard == shards_ - 1 ? last_ : full_;
  const int64_t first = shard * cut_.per, units = std::min(cut_.per, cut_.extent - first);
  const auto bytes = static_cast<int64_t>(element_bytes_);
  lhs += first * cut_.lhs_step * bytes;
  rhs += first * cut_.rhs_step * bytes;
  out += first * cut_.out_step * bytes;
  if (bias) bias = static_cast<const char*>(bias) + first * cut_.bias_step * bytes;
  try {
    DnnlArg args[5] = {{DNNL_ARG_SRC, &p.src, lhs}, {DNNL_ARG_WEIGHTS, &p.weights, rhs}, {DNNL_ARG_DST, &p.dst, out}};
    size_t n = 3;
    if (has_bias_) args[n++] = {DNNL_ARG_BIAS, &p.bias, bias};
    if (p.scratchpad.get_size() > 0) args[n++] = {DNNL_ARG_SCRATCHPAD, &p.scratchpad, scratch + shard * shard_pad_bytes_};
    calls_.run(static_cast<size_t>(shard), p.primitive, std::span(args, n));
  } catch (const dnnl::error& err) {
    fail_dnnl(Code::kInternal, "running a oneDNN matmul (" + p.implementation + ")", err);
  }
  if (own_epilogue_ && !cut_.by_cols) run_epilogue(reinterpret_cast<float*>(out), units * cut_.out_rows, bias);
}

}  // namespace maxc::cpu

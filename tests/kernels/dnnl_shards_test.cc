// oneDNN's matmul and convolution cut into shards over the pool (matmul_dnnl.h, conv_dnnl.h):
// the same results (within float32 rounding of a reference in double) at 1, 2, 3 and 8
// threads, with the shapes that give a short last shard, padded first and last row slices,
// batch slices and fused epilogues.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/dnnl_engine.h"
#include "kernels/cpu/matmul_dnnl.h"
#include "kernels/cpu/thread_pool.h"
#include "conv_reference.h"
#include "kernel_test_util.h"

namespace maxc::cpu {
namespace {

using kernel_test::AlignedScratch;
using kernel_test::conv_reference;
using kernel_test::random_floats;

constexpr int32_t kThreadCounts[] = {1, 2, 3, 8};

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " at " << i;
}

// lhs [B, M, K] @ rhs ([B or 1], K, N) + bias[N], in double.
std::vector<double> reference_matmul(const MatmulDims& d, const std::vector<float>& lhs, const std::vector<float>& rhs,
                                     const std::vector<float>& bias, bool relu) {
  const int64_t batches = d.batch_count();
  const bool rhs_batched = !d.rhs_batch.empty() && d.rhs_batch[0] != 1;
  std::vector<double> out(batches * d.m * d.n);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        double acc = bias.empty() ? 0 : bias[j];
        for (int64_t p = 0; p < d.k; ++p)
          acc += double(lhs[(b * d.m + i) * d.k + p]) * rhs[(rhs_batched ? b * d.k * d.n : 0) + p * d.n + j];
        out[(b * d.m + i) * d.n + j] = relu ? std::max(acc, 0.0) : acc;
      }
  return out;
}

// [N, K] stored as [K, N], for the reference.
std::vector<float> transpose(const std::vector<float>& nk, int64_t n, int64_t k) {
  std::vector<float> kn(nk.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < k; ++p) kn[p * n + i] = nk[i * k + p];
  return kn;
}

// bias_len: 0 (none), 1 (one for all columns) or d.n.
void check_matmul(const MatmulDims& d, int64_t bias_len, bool relu) {
  const std::vector<float> lhs = random_floats(d.batch_count() * d.m * d.k, 1);
  const std::vector<float> rhs = random_floats((d.rhs_batch.empty() ? 1 : d.rhs_batch[0]) * d.k * d.n, 2);
  const std::vector<float> b = bias_len > 0 ? random_floats(bias_len, 3) : std::vector<float>{};
  const std::vector<float> b_per_column = bias_len == 1 ? std::vector<float>(d.n, b[0]) : b;
  const std::vector<double> want =
      reference_matmul(d, lhs, d.rhs_transposed ? transpose(rhs, d.n, d.k) : rhs, b_per_column, relu);
  const MatmulEpilogue e{relu ? Activation::kRelu : Activation::kNone, bias_len > 0, bias_len};
  const bool bias = bias_len > 0;
  for (int32_t threads : kThreadCounts) {
    SCOPED_TRACE(testing::Message() << "threads " << threads);
    DnnlMatmul mm(d, dnnl::memory::data_type::f32, e, /*allow_reference=*/true, /*may_pack_rhs=*/false, threads);
    if (threads > 1) EXPECT_GT(mm.shards(), 1);
    ThreadPool pool(threads);
    PoolScope scope(&pool);
    AlignedScratch scratch(mm.scratchpad_bytes());
    std::vector<float> out(want.size());
    mm.run(lhs.data(), rhs.data(), bias ? b.data() : nullptr, out.data(), scratch.get());
    // float32 sums of k products drift from the double reference as sqrt(k) does.
    expect_close(out, want, 1e-4 * std::max(1.0, std::sqrt(d.k / 256.0)), "matmul");
  }
}

TEST(DnnlShards, MatmulRowsWithAShortLastShard) {
  MatmulDims d;
  d.m = 257, d.k = 96, d.n = 130;
  check_matmul(d, /*bias_len=*/d.n, /*relu=*/true);
}

TEST(DnnlShards, MatmulRowsAcrossABroadcastRhs) {
  MatmulDims d;
  d.out_batch = d.lhs_batch = {3};
  d.rhs_batch = {1};
  d.m = 70, d.k = 64, d.n = 200;
  check_matmul(d, /*bias_len=*/0, /*relu=*/false);
}

TEST(DnnlShards, MatmulBatches) {
  MatmulDims d;
  d.out_batch = d.lhs_batch = d.rhs_batch = {7};
  d.m = 64, d.k = 64, d.n = 96;
  check_matmul(d, /*bias_len=*/d.n, /*relu=*/false);
}

// A batch-1 dense layer (a matrix-vector product): cut along the rhs's columns, with a short
// last shard, through each epilogue (ours for bias/relu, oneDNN's for the others).
TEST(DnnlShards, MatmulColumnsOfOneRow) {
  MatmulDims d;
  d.m = 1, d.k = 4096, d.n = 1000;
  check_matmul(d, /*bias_len=*/d.n, /*relu=*/true);
  check_matmul(d, /*bias_len=*/1, /*relu=*/false);
  check_matmul(d, /*bias_len=*/0, /*relu=*/false);
}

TEST(DnnlShards, MatmulColumnsOfATransposedRhs) {
  MatmulDims d;
  d.m = 3, d.k = 1024, d.n = 900;
  d.rhs_transposed = true;
  check_matmul(d, /*bias_len=*/d.n, /*relu=*/false);
}

TEST(DnnlShards, MatmulColumnsAcrossBatchedRows) {
  MatmulDims d;
  d.out_batch = d.lhs_batch = {2};
  d.rhs_batch = {1};
  d.m = 1, d.k = 1536, d.n = 700;
  check_matmul(d, /*bias_len=*/d.n, /*relu=*/true);
}

void check_conv(const Conv2dShape& s) {
  const std::vector<float> x = random_floats(s.in_elements(), 4), w = random_floats(s.filter_elements(), 5, 0.5f);
  const std::vector<float> bias = random_floats(s.out_c, 6);
  const std::vector<double> want = conv_reference(s, x, w, bias);
  for (int32_t threads : kThreadCounts) {
    SCOPED_TRACE(testing::Message() << "threads " << threads);
    DnnlConv2d conv(s, dnnl::memory::data_type::f32, /*has_bias=*/true, /*allow_reference=*/true, w.data(),
                    /*prefer_plain_filter=*/false, ConvEpilogue{}, threads);
    if (threads > 1) EXPECT_GT(conv.shards(), 1u) << conv.implementation();
    ThreadPool pool(threads);
    PoolScope scope(&pool);
    AlignedScratch scratch(conv.scratch_bytes());
    std::vector<float> out(want.size());
    conv.run(x.data(), w.data(), bias.data(), out.data(), scratch.get());
    expect_close(out, want, 1e-4, "conv");
  }
}

TEST(DnnlShards, ConvRowsOfOneImageWithPadding) {
  Conv2dShape s;
  s.batch = 1, s.in_h = 37, s.in_w = 29, s.in_c = 16, s.kernel_h = 3, s.kernel_w = 3, s.out_c = 32;
  s.pad_top = 1, s.pad_bottom = 1, s.pad_left = 1, s.pad_right = 1;
  s.out_h = 37, s.out_w = 29;
  check_conv(s);
}

TEST(DnnlShards, ConvRowsWithStrideAndUnevenPads) {
  Conv2dShape s;
  s.batch = 1, s.in_h = 64, s.in_w = 48, s.in_c = 8, s.kernel_h = 5, s.kernel_w = 3, s.out_c = 24;
  s.stride_h = 2, s.stride_w = 2, s.pad_top = 2, s.pad_bottom = 1, s.pad_left = 1, s.pad_right = 0;
  s.out_h = (64 + 3 - 5) / 2 + 1, s.out_w = (48 + 1 - 3) / 2 + 1;
  check_conv(s);
}

TEST(DnnlShards, ConvBatches) {
  Conv2dShape s;
  s.batch = 5, s.in_h = 20, s.in_w = 20, s.in_c = 16, s.kernel_h = 3, s.kernel_w = 3, s.out_c = 16;
  s.out_h = 18, s.out_w = 18;
  check_conv(s);
}

// The kernels keep their oneDNN memory objects between calls (dnnl_call.h) and rebind them
// to each call's data: callers on four threads at once, each with buffers of its own and
// each calling many times, get their own results, from the whole and from shards.
TEST(DnnlShards, ConcurrentCallersRebindTheirOwnData) {
  Conv2dShape s;
  s.batch = 1, s.in_h = 23, s.in_w = 19, s.in_c = 16, s.kernel_h = 3, s.kernel_w = 3, s.out_c = 16;
  s.pad_top = 1, s.pad_bottom = 1, s.pad_left = 1, s.pad_right = 1, s.out_h = 23, s.out_w = 19;
  const std::vector<float> w = random_floats(s.filter_elements(), 5, 0.5f), bias = random_floats(s.out_c, 6);
  for (int32_t shards_for : {1, 2}) {
    SCOPED_TRACE(testing::Message() << "cut for " << shards_for << " threads");
    const DnnlConv2d conv(s, dnnl::memory::data_type::f32, /*has_bias=*/true, /*allow_reference=*/true, w.data(),
                          /*prefer_plain_filter=*/false, ConvEpilogue{}, shards_for);
    std::vector<std::thread> callers;
    std::vector<int> failures(4, 0);
    for (int t = 0; t < 4; ++t)
      callers.emplace_back([&, t] {
        const std::vector<float> x = random_floats(s.in_elements(), 10 + t);
        const std::vector<double> want = conv_reference(s, x, w, bias);
        AlignedScratch scratch(conv.scratch_bytes());
        for (int call = 0; call < 20; ++call) {
          std::vector<float> out(want.size());  // a new address each call, now and then
          conv.run(x.data(), w.data(), bias.data(), out.data(), scratch.get());
          for (size_t i = 0; i < out.size(); ++i)
            if (std::fabs(out[i] - want[i]) > 1e-4 * (1 + std::fabs(want[i]))) ++failures[t];
        }
      });
    for (std::thread& c : callers) c.join();
    EXPECT_EQ(failures, std::vector<int>(4, 0));
  }
}

}  // namespace
}  // namespace maxc::cpu

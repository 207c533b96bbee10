// attention.cu and layer_norm.cu's add_layer_norm under the emulator, against the CPU kernels
// (kernels/cpu/attention.h, norm.h) and, for the half types the CPU attention lacks, a plain
// reference in double over the same stored inputs.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/attention.cu"
#include "kernels/cuda/layer_norm.cu"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/norm.h"

namespace maxc::gpu_emu::testing {
namespace {

// ---- attention ----------------------------------------------------------------------------

struct AttentionCase {
  std::vector<int64_t> batch_dims;
  int64_t lq = 0, lk = 0, d = 0, dv = 0;
  bool k_transposed = false;
  // Mask dims, right-aligned against the scores [batch..., Lq, Lk]; empty: no mask.
  std::vector<int64_t> mask_dims;
  float scale = 0.3f;
  // q, k, v and out stored with their rows before the last batch dim, [..., L, H, D] for
  // [..., H, L, D]: the node's layout "bshd".
  bool bshd = false;
  // A bool mask that selects: a score stays where it is true, is mask_fill where false.
  bool mask_selects = false;
  float mask_fill = 0.f;

  int64_t batch() const {
    int64_t b = 1;
    for (int64_t x : batch_dims) b *= x;
    return b;
  }
  size_t rank() const { return batch_dims.size() + 2; }
  // Element strides of the mask against the scores, 0 where it broadcasts.
  std::vector<int64_t> mask_strides() const {
    std::vector<int64_t> target = batch_dims, dims(rank() - mask_dims.size(), 1), strides(rank(), 0);
    target.push_back(lq);
    target.push_back(lk);
    dims.insert(dims.end(), mask_dims.begin(), mask_dims.end());
    int64_t stride = 1;
    for (size_t i = rank(); i-- > 0;) {
      strides[i] = dims[i] == 1 ? 0 : stride;
      stride *= dims[i];
    }
    return strides;
  }
  int64_t mask_size() const {
    int64_t n = 1;
    for (int64_t x : mask_dims) n *= x;
    return n;
  }
  // Element strides along batch_dims, then rows, of an operand with rows x cols per batch item.
  std::vector<int64_t> strides(int64_t rows, int64_t cols) const {
    // The stored dims, outermost first, each with the index of its stride in the result.
    std::vector<std::pair<int64_t, size_t>> stored;
    for (size_t i = 0; i < batch_dims.size(); ++i) stored.push_back({batch_dims[i], i});
    stored.push_back({rows, batch_dims.size()});
    if (bshd) std::swap(stored[stored.size() - 2], stored.back());
    std::vector<int64_t> out(stored.size());
    int64_t stride = cols;
    for (size_t i = stored.size(); i-- > 0;) {
      out[stored[i].second] = stride;
      stride *= stored[i].first;
    }
    return out;
  }
  // What the lowering gives the CPU kernel (engine/lower/attention_shape.h).
  cpu::AttentionShape shape() const {
    cpu::AttentionShape s;
    s.batch_dims = batch_dims;
    s.q_len = lq, s.kv_len = lk, s.head_dim = d, s.v_dim = dv;
    s.k_transposed = k_transposed;
    s.has_mask = !mask_dims.empty();
    if (s.has_mask) s.mask_strides = mask_strides();
    s.mask_selects = mask_selects;
    s.mask_fill = mask_fill;
    s.q_strides = strides(lq, d);
    s.k_strides = k_transposed ? strides(d, lk) : strides(lk, d);
    s.v_strides = strides(lk, dv);
    s.out_strides = strides(lq, dv);
    return s;
  }
};

// The operand's strides along the batch dims into `layout`; its row stride (as the lowering).
int64_t set_strides(const std::vector<int64_t>& strides, g::Layout& layout) {
  for (size_t i = 0; i + 1 < strides.size(); ++i) layout.strides[i] = strides[i];
  return strides.back();
}

g::AttentionParams params_of(const AttentionCase& c) {
  const cpu::AttentionShape s = c.shape();
  g::AttentionParams p{};
  p.batch = c.batch();
  p.q_len = c.lq;
  p.kv_len = c.lk;
  p.head_dim = c.d;
  p.v_dim = c.dv;
  p.scale = c.scale;
  p.k_transposed = c.k_transposed ? 1 : 0;
  p.batch_shape.numel = p.batch;
  p.batch_shape.rank = static_cast<int32_t>(c.batch_dims.size());
  for (size_t i = 0; i < c.batch_dims.size(); ++i) p.batch_shape.dims[i] = c.batch_dims[i];
  p.q_row_stride = set_strides(s.q_strides, p.q_layout);
  p.k_row_stride = set_strides(s.k_strides, p.k_layout);
  p.v_row_stride = set_strides(s.v_strides, p.v_layout);
  p.out_row_stride = set_strides(s.out_strides, p.out_layout);
  if (s.has_mask) {
    p.mask_row_stride = set_strides({s.mask_strides.begin(), s.mask_strides.end() - 1}, p.mask_layout);
    p.mask_col_stride = s.mask_strides.back();
    p.mask_selects = s.mask_selects ? 1 : 0;
    p.mask_fill = s.mask_fill;
  }
  return p;
}

template <class S, class M>
std::vector<S> run_gpu_attention(const AttentionCase& c, const std::vector<S>& q, const std::vector<S>& k,
                                 const std::vector<S>& v, const std::vector<M>& mask, dim3 grid, dim3 block) {
  std::vector<S> out(static_cast<size_t>(c.batch() * c.lq * c.dv), from_double<S>(-7));
  std::vector<float> scores(static_cast<size_t>(grid.x * c.lk) + 1);
  emulate_launch(grid, block, g::attention_rows<S, M>, q.data(), k.data(), v.data(),
                 mask.empty() ? static_cast<const M*>(nullptr) : mask.data(), out.data(), scores.data(), params_of(c));
  return out;
}

// The CPU kernel's answer (float32 only), for a float32 or (mask_selects) bool mask.
template <class M = float>
std::vector<double> cpu_attention(const AttentionCase& c, const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& v, const std::vector<M>& mask) {
  const cpu::AttentionShape s = c.shape();
  const cpu::Attention att(s, c.scale, 1);
  const size_t bytes = (att.scratch_bytes() + 63) / 64 * 64 + 64;
  std::unique_ptr<void, decltype(&std::free)> scratch(std::aligned_alloc(64, bytes), &std::free);
  std::vector<float> out(static_cast<size_t>(c.batch() * c.lq * c.dv));
  att.run(q.data(), k.data(), v.data(), s.has_mask ? mask.data() : nullptr, out.data(), scratch.get());
  return to_doubles(out);
}

// softmax(scale q kᵀ + mask) v in double over the stored values.
template <class S, class M>
std::vector<double> reference_attention(const AttentionCase& c, const std::vector<S>& q, const std::vector<S>& k,
                                        const std::vector<S>& v, const std::vector<M>& mask) {
  const g::AttentionParams p = params_of(c);
  std::vector<double> out(static_cast<size_t>(c.batch() * c.lq * c.dv));
  for (int64_t b = 0; b < c.batch(); ++b)
    for (int64_t i = 0; i < c.lq; ++i) {
      std::vector<double> s(static_cast<size_t>(c.lk));
      double peak = -INFINITY, sum = 0;
      for (int64_t j = 0; j < c.lk; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < c.d; ++t)
          dot += to_double(q[(b * c.lq + i) * c.d + t]) *
                 to_double(c.k_transposed ? k[(b * c.d + t) * c.lk + j] : k[(b * c.lk + j) * c.d + t]);
        s[j] = c.scale * dot;
        if (!mask.empty())
          s[j] += to_double(mask[g::offset_of(b, p.batch_shape, p.mask_layout) + i * p.mask_row_stride +
                                 j * p.mask_col_stride]);
        peak = std::max(peak, s[j]);
      }
      for (double& x : s) sum += x = std::exp(x - peak);
      for (int64_t e = 0; e < c.dv; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < c.lk; ++j) acc += s[j] * to_double(v[(b * c.lk + j) * c.dv + e]);
        out[(b * c.lq + i) * c.dv + e] = c.lk == 0 ? 0.0 : acc / sum;
      }
    }
  return out;
}

struct AttentionInputs {
  std::vector<float> q, k, v, mask;
};

AttentionInputs random_inputs(const AttentionCase& c, unsigned seed) {
  const int64_t b = c.batch();
  AttentionInputs in{random_values<float>(b * c.lq * c.d, -1, 1, seed), random_values<float>(b * c.lk * c.d, -1, 1, seed + 1),
                     random_values<float>(b * c.lk * c.dv, -1, 1, seed + 2), {}};
  if (!c.mask_dims.empty()) {
    in.mask = random_values<float>(c.mask_size(), -2, 2, seed + 3);
    // Masked-out keys, as BERT's extended attention mask has them.
    for (float& m : in.mask) m = m > 1.2f ? -1e4f : m;
  }
  return in;
}

void check_float32(const AttentionCase& c, dim3 grid, dim3 block, unsigned seed) {
  const AttentionInputs in = random_inputs(c, seed);
  const std::vector<float> got = run_gpu_attention(c, in.q, in.k, in.v, in.mask, grid, block);
  const std::string what = "attention Lq " + std::to_string(c.lq) + " Lk " + std::to_string(c.lk) + " D " +
                           std::to_string(c.d) + " Dv " + std::to_string(c.dv) + (c.k_transposed ? " kT" : "") +
                           (in.mask.empty() ? "" : " masked") + (c.bshd ? " bshd" : "");
  expect_close(got, cpu_attention(c, in.q, in.k, in.v, in.mask), what, Tolerance{2e-6, 2e-5});
}

TEST(EmulatedAttention, Float32MatchesTheCpuKernelOverShapesAndMasks) {
  AttentionCase c;
  c.batch_dims = {2, 3};
  c.lq = 5, c.lk = 37, c.d = 8, c.dv = 12;
  check_float32(c, 4, 64, 1);  // several (batch, row) items per block
  c.k_transposed = true;
  check_float32(c, 7, 32, 2);
  c.k_transposed = false;
  c.mask_dims = {2, 1, 1, 37};  // one padding mask per sequence, BERT's
  check_float32(c, 3, 64, 3);
  c.mask_dims = {5, 37};  // one per (query, key)
  check_float32(c, 5, 32, 4);
  c.mask_dims = {5, 1};  // one value per query row
  check_float32(c, 2, 64, 5);
}

// The heads of [B, S, H, D] tensors read and written in place (layout "bshd"), as the CPU
// kernel does with the same strides.
TEST(EmulatedAttention, Float32HeadsInPlace) {
  AttentionCase c;
  c.batch_dims = {2, 3};
  c.lq = 5, c.lk = 7, c.d = 8, c.dv = 4;
  c.bshd = true;
  c.mask_dims = {2, 1, 1, 7};
  check_float32(c, 4, 32, 40);
  c.k_transposed = true;
  c.lq = 7;
  c.mask_dims = {};
  check_float32(c, 3, 64, 41);
}

TEST(EmulatedAttention, Float32KeysMoreThanTheBlockAndNoBatch) {
  AttentionCase c;
  c.lq = 2, c.lk = 300, c.d = 64, c.dv = 40;
  check_float32(c, 1, 128, 6);  // each thread takes several keys
  c.mask_dims = {300};
  check_float32(c, 2, 64, 7);
}

TEST(EmulatedAttention, FullyMaskedRowIsNanAndNoKeysAreZeros) {
  AttentionCase c;
  c.batch_dims = {1};
  c.lq = 2, c.lk = 3, c.d = 4, c.dv = 2;
  c.mask_dims = {2, 3};
  AttentionInputs in = random_inputs(c, 8);
  const float inf = std::numeric_limits<float>::infinity();
  in.mask = {-inf, -inf, -inf, 0, 0, -inf};
  std::vector<float> got = run_gpu_attention(c, in.q, in.k, in.v, in.mask, 1, 32);
  expect_close(got, cpu_attention(c, in.q, in.k, in.v, in.mask), "masked rows", Tolerance{2e-6, 2e-5});
  EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1]));
  EXPECT_FALSE(std::isnan(got[2]));

  c.lk = 0;
  c.mask_dims = {};
  in = random_inputs(c, 9);
  got = run_gpu_attention(c, in.q, in.k, in.v, in.mask, 1, 32);
  expect_close(got, std::vector<double>(4, 0.0), "no keys", Tolerance{0, 0});
}

// A bool mask selects, a decoder's where(causal, scores, lowest): a score stays where the mask
// is true and is the fill where it is false, as in the CPU kernel. Row 0 masks every key
// (its softmax is uniform over the fills), the others are causal.
TEST(EmulatedAttention, BoolMaskSelectsAsTheCpuKernel) {
  AttentionCase c;
  c.batch_dims = {2, 3};
  c.lq = 6, c.lk = 6, c.d = 8, c.dv = 4;
  c.bshd = true;
  c.mask_dims = {1, 1, 6, 6};
  c.mask_selects = true;
  c.mask_fill = std::numeric_limits<float>::lowest();
  const AttentionInputs in = random_inputs(c, 50);
  std::vector<g::bool8> mask(36);
  for (int64_t i = 0; i < 36; ++i) mask[static_cast<size_t>(i)].v = i >= 6 && i % 6 <= i / 6;
  const std::vector<float> got = run_gpu_attention(c, in.q, in.k, in.v, mask, 3, 32);
  expect_close(got, cpu_attention(c, in.q, in.k, in.v, mask), "bool mask", Tolerance{2e-6, 2e-5});
  // Row 0 of the first head: the mean of v's rows.
  for (int64_t col = 0; col < c.dv; ++col) {
    double mean = 0;
    for (int64_t j = 0; j < c.lk; ++j) mean += in.v[static_cast<size_t>(j * 3 * c.dv + col)] / 6.0;
    EXPECT_NEAR(got[static_cast<size_t>(col)], mean, 1e-5) << "column " << col;
  }
}

template <class S, class M>
void check_half(const AttentionCase& c, unsigned seed) {
  const int64_t b = c.batch();
  const std::vector<S> q = random_values<S>(b * c.lq * c.d, -1, 1, seed), k = random_values<S>(b * c.lk * c.d, -1, 1, seed + 1),
                       v = random_values<S>(b * c.lk * c.dv, -1, 1, seed + 2);
  const std::vector<M> mask = c.mask_dims.empty() ? std::vector<M>{} : random_values<M>(c.mask_size(), -2, 2, seed + 3);
  const std::vector<S> got = run_gpu_attention(c, q, k, v, mask, 3, 64);
  expect_close(got, reference_attention(c, q, k, v, mask), "half attention");
}

TEST(EmulatedAttention, HalfTypesWithTheirOwnOrAFloat32Mask) {
  AttentionCase c;
  c.batch_dims = {2};
  c.lq = 6, c.lk = 50, c.d = 16, c.dv = 8;
  c.mask_dims = {2, 1, 50};
  check_half<g::half, g::half>(c, 10);
  check_half<g::half, float>(c, 11);
  check_half<g::bfloat16, g::bfloat16>(c, 12);
  check_half<g::bfloat16, float>(c, 13);
  c.mask_dims = {};
  c.k_transposed = true;
  check_half<g::half, g::half>(c, 14);
}

// ---- add_layer_norm -----------------------------------------------------------------------

template <class S>
void check_add_layer_norm(int64_t rows, int64_t cols, bool shared_residual, bool with_sum, dim3 grid, dim3 block,
                          unsigned seed) {
  const int64_t stride = shared_residual ? 0 : cols;
  const std::vector<S> x = random_values<S>(rows * cols, -3, 5, seed),
                       r = random_values<S>(shared_residual ? cols : rows * cols, -2, 2, seed + 1),
                       gamma = random_values<S>(cols, 0.5, 1.5, seed + 2), beta = random_values<S>(cols, -1, 1, seed + 3);
  std::vector<S> y(x.size()), sum(with_sum ? x.size() : 0), want_y(x.size()), want_sum(x.size());
  emulate_launch(grid, block, g::add_layer_norm<S>, x.data(), r.data(), stride, gamma.data(), beta.data(), y.data(),
                 with_sum ? sum.data() : static_cast<S*>(nullptr), rows, cols, 1e-5);
  cpu::find_add_layer_norm_kernel(dtype_of<S>())(x.data(), r.data(), stride, gamma.data(), beta.data(), want_y.data(),
                                                 want_sum.data(), rows, cols, 1e-5);
  const std::string what = "add_layer_norm " + std::to_string(rows) + "x" + std::to_string(cols);
  expect_close(y, to_doubles(want_y), what);
  if (with_sum) expect_same_bits(sum, want_sum, what + " sum");
}

TEST(EmulatedAddLayerNorm, MatchesTheCpuKernel) {
  check_add_layer_norm<float>(5, 37, false, true, 2, 64, 20);
  check_add_layer_norm<float>(3, 700, true, false, 2, 256, 21);  // one residual row; rows > block
  check_add_layer_norm<g::half>(4, 300, false, true, 3, 128, 22);
  check_add_layer_norm<g::bfloat16>(4, 300, true, true, 3, 128, 23);
  check_add_layer_norm<double>(3, 100, false, false, 2, 64, 24);
}

// In place, as the planner may place it: y is x.
TEST(EmulatedAddLayerNorm, OutputOverTheInput) {
  const int64_t rows = 3, cols = 90;
  std::vector<float> x = random_values<float>(rows * cols, -3, 5, 30), r = random_values<float>(rows * cols, -1, 1, 31);
  const std::vector<float> gamma(cols, 1.0f), beta(cols, 0.0f);
  std::vector<float> want(x.size());
  cpu::find_add_layer_norm_kernel(DType::kFloat32)(x.data(), r.data(), cols, gamma.data(), beta.data(), want.data(),
                                                   nullptr, rows, cols, 1e-5);
  emulate_launch(dim3(2), dim3(64), g::add_layer_norm<float>, x.data(), r.data(), cols, gamma.data(), beta.data(),
                 x.data(), static_cast<float*>(nullptr), rows, cols, 1e-5);
  expect_close(x, to_doubles(want), "in place");
}

}  // namespace
}  // namespace maxc::gpu_emu::testing

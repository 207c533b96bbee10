// Unit tests of the linear-algebra kernels (kernels/cpu/matmul*, gemm*, attention*), their
// lowerings (engine/lower/linalg.cc) and the matmul-epilogue and attention fusion passes
// (compiler/fuse_matmul.cc, fuse_attention.cc), against naive reference loops in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "compiler/passes.h"
#include "engine/lowering.h"
#include "graph/graph.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/gemm_small.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_outer.h"
#include "kernels/cpu/matmul_shape.h"

#include "kernel_test_util.h"

namespace maxc {
namespace {

using kernel_test::AlignedScratch;
using kernel_test::random_floats;

using cpu::Activation;

double activate_ref(double x, Activation a) {
  switch (a) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x > 0 ? x : 0;
    case Activation::kGelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::kGeluTanh: return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::kSigmoid: return 1 / (1 + std::exp(-x));
    case Activation::kTanh: return std::tanh(x);
    case Activation::kSilu: return x / (1 + std::exp(-x));
  }
  return x;
}

// numpy matmul of dense operands with broadcast batch dims, in double, plus the epilogue.
std::vector<double> matmul_ref(const std::vector<int64_t>& as, const std::vector<double>& a,
                               const std::vector<int64_t>& bs, const std::vector<double>& b,
                               const std::vector<double>& bias = {}, Activation act = Activation::kNone) {
  const cpu::MatmulDims d = cpu::matmul_dims(as, bs);
  std::vector<double> out(static_cast<size_t>(d.batch_count() * d.m * d.n));
  for (int64_t t = 0; t < d.batch_count(); ++t)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        double s = 0;
        for (int64_t k = 0; k < d.k; ++k)
          s += a[d.lhs_offset(t) + i * d.k + k] * b[d.rhs_offset(t) + k * d.n + j];
        if (!bias.empty()) s += bias[bias.size() == 1 ? 0 : j];
        out[(t * d.m + i) * d.n + j] = activate_ref(s, act);
      }
  return out;
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

int64_t count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t x : dims) n *= x;
  return n;
}

// ---- matmul_dims -------------------------------------------------------------------------------

TEST(MatmulDims, BatchOverTheLhsOnlyBecomesRows) {
  const cpu::MatmulDims d = cpu::matmul_dims(std::vector<int64_t>{2, 3, 4}, std::vector<int64_t>{4, 5});
  EXPECT_TRUE(d.out_batch.empty());
  EXPECT_EQ(d.m, 6);
  EXPECT_EQ(d.k, 4);
  EXPECT_EQ(d.n, 5);
}

TEST(MatmulDims, BroadcastBatchDimsCollapseByPattern) {
  const cpu::MatmulDims d = cpu::matmul_dims(std::vector<int64_t>{2, 1, 3, 4}, std::vector<int64_t>{5, 4, 6});
  EXPECT_EQ(d.out_batch, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(d.lhs_batch, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(d.rhs_batch, (std::vector<int64_t>{1, 5}));
  // Neighbours that broadcast alike merge; size-1 result dims vanish.
  const cpu::MatmulDims e =
      cpu::matmul_dims(std::vector<int64_t>{2, 3, 1, 4, 5}, std::vector<int64_t>{2, 3, 1, 5, 6});
  EXPECT_EQ(e.out_batch, (std::vector<int64_t>{6}));
  EXPECT_EQ(e.rhs_batch, (std::vector<int64_t>{6}));
}

TEST(MatmulDims, VectorsAndErrors) {
  cpu::MatmulDims d = cpu::matmul_dims(std::vector<int64_t>{4}, std::vector<int64_t>{4});
  EXPECT_EQ(d.m, 1);
  EXPECT_EQ(d.n, 1);
  d = cpu::matmul_dims(std::vector<int64_t>{3, 4}, std::vector<int64_t>{4});
  EXPECT_EQ(d.m, 3);
  EXPECT_EQ(d.n, 1);
  try {
    cpu::matmul_dims(std::vector<int64_t>{3, 4}, std::vector<int64_t>{5, 2});
    FAIL() << "inner dims differ";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("[3, 4]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cpu::matmul_dims(std::vector<int64_t>{2, 3, 4}, std::vector<int64_t>{3, 4, 5}), Error);
}

// ---- Matmul ------------------------------------------------------------------------------------

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "at " << i;
}

struct Case {
  std::vector<int64_t> lhs, rhs;
};

class MatmulF32 : public testing::TestWithParam<Case> {};

TEST_P(MatmulF32, MatchesReference) {
  const Case& c = GetParam();
  const auto a = random_floats(count(c.lhs), 1), b = random_floats(count(c.rhs), 2);
  const cpu::MatmulDims d = cpu::matmul_dims(c.lhs, c.rhs);
  const cpu::Matmul mm(d, DType::kFloat32, {});
  std::vector<float> out(static_cast<size_t>(d.batch_count() * d.m * d.n), -1.f);
  AlignedScratch scratch(mm.scratch_bytes());
  mm.run(a.data(), b.data(), nullptr, out.data(), scratch.get());
  expect_near_all(out, matmul_ref(c.lhs, widen(a), c.rhs, widen(b)), 1e-5);
  if (d.k > 0 && !out.empty()) EXPECT_EQ(mm.implementation().rfind("onednn:", 0), 0u) << mm.implementation();
}

INSTANTIATE_TEST_SUITE_P(Shapes, MatmulF32,
                         testing::Values(Case{{3, 4}, {4, 5}}, Case{{2, 3, 4}, {4, 5}}, Case{{3, 4}, {2, 4, 5}},
                                         Case{{2, 1, 3, 4}, {5, 4, 6}}, Case{{4}, {4, 7}}, Case{{3, 4}, {4}},
                                         Case{{3, 0}, {0, 2}}, Case{{0, 3}, {3, 2}}, Case{{130, 70}, {70, 260}}));

TEST(Matmul, EveryActivationWithColumnAndScalarBias) {
  const std::vector<int64_t> as{2, 5, 16}, bs{16, 24};
  const auto a = random_floats(count(as), 3), b = random_floats(count(bs), 4), bias = random_floats(24, 5);
  for (Activation act : {Activation::kNone, Activation::kRelu, Activation::kGelu, Activation::kGeluTanh,
                         Activation::kSigmoid, Activation::kTanh, Activation::kSilu}) {
    for (int64_t len : {int64_t{24}, int64_t{1}}) {
      const cpu::Matmul mm(cpu::matmul_dims(as, bs), DType::kFloat32, {act, true, len});
      std::vector<float> out(10 * 24);
      AlignedScratch scratch(mm.scratch_bytes());
      mm.run(a.data(), b.data(), bias.data(), out.data(), scratch.get());
      std::vector<double> wb(bias.begin(), bias.begin() + len);
      SCOPED_TRACE(cpu::activation_name(act));
      expect_near_all(out, matmul_ref(as, widen(a), bs, widen(b), wb, act), 1e-5);
    }
  }
}

TEST(Matmul, EmptyReductionGivesTheEpilogueOfZeros) {
  const std::vector<float> bias{-1.f, 2.f};
  const cpu::Matmul mm(cpu::matmul_dims(std::vector<int64_t>{3, 0}, std::vector<int64_t>{0, 2}), DType::kFloat32,
                       {Activation::kRelu, true, 2});
  std::vector<float> out(6, 9.f);
  AlignedScratch scratch(mm.scratch_bytes());
  mm.run(nullptr, nullptr, bias.data(), out.data(), scratch.get());
  EXPECT_EQ(out, (std::vector<float>{0, 2, 0, 2, 0, 2}));
}

TEST(Matmul, Float64AndIntegersUseOurGemm) {
  const std::vector<int64_t> as{2, 3, 5}, bs{2, 5, 300};
  const auto fa = random_floats(count(as), 6), fb = random_floats(count(bs), 7);
  std::vector<double> a(fa.begin(), fa.end()), b(fb.begin(), fb.end()), out(2 * 3 * 300);
  const cpu::Matmul mm(cpu::matmul_dims(as, bs), DType::kFloat64, {});
  EXPECT_EQ(mm.implementation(), "gemm");
  mm.run(a.data(), b.data(), nullptr, out.data(), nullptr);
  const std::vector<double> want = matmul_ref(as, a, bs, b);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], want[i], 1e-12);

  std::vector<int32_t> ia(count(as)), ib(count(bs)), iout(2 * 3 * 300);
  for (size_t i = 0; i < ia.size(); ++i) ia[i] = static_cast<int32_t>(i % 7) - 3;
  for (size_t i = 0; i < ib.size(); ++i) ib[i] = static_cast<int32_t>(i % 5) - 2;
  const std::vector<int32_t> ibias(300, -1);
  const cpu::Matmul imm(cpu::matmul_dims(as, bs), DType::kInt32, {Activation::kRelu, true, 300});
  imm.run(ia.data(), ib.data(), ibias.data(), iout.data(), nullptr);
  const std::vector<double> iwant = matmul_ref(as, {ia.begin(), ia.end()}, bs, {ib.begin(), ib.end()},
                                               std::vector<double>(300, -1), Activation::kRelu);
  for (size_t i = 0; i < iout.size(); ++i) ASSERT_EQ(iout[i], static_cast<int32_t>(iwant[i])) << i;
}

TEST(Matmul, Int8WrapsAroundLikeNumpy) {
  const std::vector<int8_t> a(40, 100), b(40, 7);  // 40 * 700 = 28000 = 0x6D60 -> 0x60 = 96
  int8_t out = 0;
  const cpu::Matmul mm(cpu::matmul_dims(std::vector<int64_t>{1, 40}, std::vector<int64_t>{40, 1}), DType::kInt8, {});
  mm.run(a.data(), b.data(), nullptr, &out, nullptr);
  EXPECT_EQ(out, static_cast<int8_t>(28000 & 0xff));
}

TEST(Matmul, IntegersRefuseTranscendentalEpilogues) {
  try {
    cpu::Matmul mm(cpu::matmul_dims(std::vector<int64_t>{2, 2}, std::vector<int64_t>{2, 2}), DType::kInt32,
                   {Activation::kGelu, false, 0});
    FAIL() << "int32 gelu";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
  }
  EXPECT_THROW(cpu::Matmul(cpu::matmul_dims(std::vector<int64_t>{2, 2}, std::vector<int64_t>{2, 2}), DType::kBool, {}),
               Error);
}

TEST(Matmul, HalfTypesRunInFloat32) {
  const std::vector<int64_t> as{3, 17}, bs{17, 9};
  const auto a = random_floats(count(as), 8), b = random_floats(count(bs), 9), bias = random_floats(9, 10);
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    auto narrow = [&](float f) { return dt == DType::kFloat16 ? cpu::float_to_f16(f) : cpu::float_to_bf16(f); };
    auto wide = [&](uint16_t h) { return dt == DType::kFloat16 ? cpu::f16_to_float(h) : cpu::bf16_to_float(h); };
    std::vector<uint16_t> ha, hb, hbias, hout(27);
    for (float f : a) ha.push_back(narrow(f));
    for (float f : b) hb.push_back(narrow(f));
    for (float f : bias) hbias.push_back(narrow(f));
    const cpu::Matmul mm(cpu::matmul_dims(as, bs), dt, {Activation::kTanh, true, 9});
    EXPECT_EQ(mm.implementation().rfind("onednn", 0), 0u) << mm.implementation();
    AlignedScratch scratch(mm.scratch_bytes());
    mm.run(ha.data(), hb.data(), hbias.data(), hout.data(), scratch.get());
    std::vector<double> wa, wb, wbias;
    for (uint16_t h : ha) wa.push_back(wide(h));
    for (uint16_t h : hb) wb.push_back(wide(h));
    for (uint16_t h : hbias) wbias.push_back(wide(h));
    const std::vector<double> want = matmul_ref(as, wa, bs, wb, wbias, Activation::kTanh);
    const double tol = dt == DType::kFloat16 ? 2e-3 : 1e-2;
    for (size_t i = 0; i < hout.size(); ++i) ASSERT_NEAR(wide(hout[i]), want[i], tol) << dtype_name(dt) << " " << i;
  }
}

TEST(Matmul, OneObjectServesConcurrentCalls) {
  const std::vector<int64_t> as{64, 96}, bs{96, 80};
  const auto b = random_floats(count(bs), 11), bias = random_floats(80, 12);
  const cpu::Matmul mm(cpu::matmul_dims(as, bs), DType::kFloat32, {Activation::kGelu, true, 80});
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const auto a = random_floats(count(as), 100 + t);
      const std::vector<double> want =
          matmul_ref(as, widen(a), bs, widen(b), widen(bias), Activation::kGelu);
      AlignedScratch scratch(mm.scratch_bytes());
      std::vector<float> out(64 * 80);
      bool good = true;
      for (int rep = 0; rep < 20 && good; ++rep) {
        mm.run(a.data(), b.data(), bias.data(), out.data(), scratch.get());
        for (size_t i = 0; i < out.size() && good; ++i) good = std::abs(out[i] - want[i]) < 1e-4 * (1 + std::abs(want[i]));
      }
      ok[t] = good;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, (std::vector<int>{1, 1, 1, 1}));
}

// ---- outer and gemm_small ----------------------------------------------------------------------

TEST(Outer, FloatsAndWrappingIntegers) {
  const std::vector<float> a{1, 2, 3}, b{4, 5};
  std::vector<float> out(6);
  cpu::outer(DType::kFloat32, a.data(), 3, b.data(), 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{4, 5, 8, 10, 12, 15}));
  const std::vector<int32_t> ia{1 << 30}, ib{4};
  int32_t iout = 1;
  cpu::outer(DType::kInt32, ia.data(), 1, ib.data(), 1, &iout);
  EXPECT_EQ(iout, 0);
  EXPECT_FALSE(cpu::outer_supports(DType::kBool));
}

// Rows around the 6-row tile (every remainder 1..5), columns around the 16-column tile.
// Rows past the 6-row AVX2 and 8-row AVX-512 tiles, columns past their 16- and 32-column
// panels, storing and accumulating.
TEST(GemmSmall, EdgesAndAccumulate) {
  for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 13, 17}) {
    for (int64_t n : {5, 16, 37, 70}) {
      for (bool accumulate : {true, false}) {
        const int64_t k = 9, lda = k + 2, ldb = n + 3, ldc = n + 1;
        const auto a = random_floats(m * lda, 13), b = random_floats(k * ldb, 14);
        std::vector<float> c(static_cast<size_t>(m * ldc), 1.f);
        cpu::gemm_small_f32(m, n, k, 0.5f, a.data(), lda, b.data(), ldb, accumulate, c.data(), ldc);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t p = 0; p < k; ++p) s += a[i * lda + p] * b[p * ldb + j];
            ASSERT_NEAR(c[i * ldc + j], (accumulate ? 1 : 0) + 0.5 * s, 1e-5) << m << "x" << n << " at " << i << "," << j;
          }
        for (int64_t i = 0; i < m; ++i)  // the padding column past n is untouched
          if (ldc > n) ASSERT_EQ(c[i * ldc + n], 1.f);
      }
    }
  }
}

// Shapes around every edge of the packed kernel: rows past the 6-row tiles and the 144-row
// blocks, columns past the 16-column panels, k past one 256-deep block (the epilogue runs
// after the last one); b given row-major and transposed.
TEST(GemmPacked, EdgesEpiloguesAndTransposedSource) {
  const Activation acts[] = {Activation::kNone, Activation::kRelu, Activation::kGelu, Activation::kSilu};
  int round = 0;
  for (int64_t m : {1, 5, 6, 13, 151}) {
    for (int64_t n : {1, 16, 37}) {
      for (int64_t k : {0, 7, 300}) {
        const Activation act = acts[round % 4];
        const bool transposed = round % 2 == 1, scalar_bias = round % 3 == 0;
        ++round;
        const auto a = random_floats(m * k, 21), b = random_floats(k * n, 22);
        const auto bias = random_floats(scalar_bias ? 1 : n, 23);
        std::vector<float> source = b;  // as [n, k] when transposed
        if (transposed)
          for (int64_t p = 0; p < k; ++p)
            for (int64_t j = 0; j < n; ++j) source[j * k + p] = b[p * n + j];
        std::vector<float> packed(cpu::PackedGemm::packed_bytes(k, n) / sizeof(float) + 1);
        cpu::PackedGemm::pack(source.data(), k, n, transposed ? 1 : n, transposed ? k : 1, packed.data());
        std::vector<float> c(static_cast<size_t>(m * n), NAN);
        const cpu::MatmulEpilogue e{act, true, scalar_bias ? 1 : n};
        cpu::gemm_packed(m, n, k, a.data(), k, packed.data(), c.data(), n, bias.data(), e);
        const auto want = matmul_ref({m, k}, widen(a), {k, n}, widen(b), widen(bias), act);
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_NEAR(c[i], want[i], 1e-4 * (1 + std::abs(want[i])))
              << m << "x" << n << "x" << k << " " << cpu::activation_name(act) << " at " << i;
      }
    }
  }
}

// ---- attention ---------------------------------------------------------------------------------

std::vector<double> attention_ref(const cpu::AttentionShape& s, float scale, const std::vector<float>& q,
                                  const std::vector<float>& k, const std::vector<float>& v,
                                  const std::vector<float>& mask) {
  const int64_t lq = s.q_len, lk = s.kv_len, d = s.head_dim, dv = s.v_dim;
  std::vector<double> out(static_cast<size_t>(s.batch() * lq * dv));
  for (int64_t b = 0; b < s.batch(); ++b) {
    int64_t moff = 0, rest = b;
    for (size_t i = s.batch_dims.size(); i-- > 0;) {
      if (s.has_mask) moff += rest % s.batch_dims[i] * s.mask_strides[i];
      rest /= s.batch_dims[i];
    }
    const size_t r = s.batch_dims.size();
    for (int64_t i = 0; i < lq; ++i) {
      std::vector<double> p(static_cast<size_t>(lk));
      double peak = -INFINITY, sum = 0;
      for (int64_t j = 0; j < lk; ++j) {
        double dot = 0;
        for (int64_t x = 0; x < d; ++x)
          dot += q[(b * lq + i) * d + x] *
                 (s.k_transposed ? k[(b * d + x) * lk + j] : k[(b * lk + j) * d + x]);
        p[j] = scale * dot + (s.has_mask ? mask[moff + i * s.mask_strides[r] + j * s.mask_strides[r + 1]] : 0);
        peak = std::max(peak, p[j]);
      }
      for (double& x : p) sum += x = std::exp(x - peak);
      for (int64_t c = 0; c < dv; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < lk; ++j) acc += p[j] / sum * v[(b * lk + j) * dv + c];
        out[(b * lq + i) * dv + c] = acc;
      }
    }
  }
  return out;
}

void check_attention(cpu::AttentionShape s, int64_t threads) {
  SCOPED_TRACE(testing::Message() << "Lq " << s.q_len << " Lk " << s.kv_len << " D " << s.head_dim << " Dv "
                                  << s.v_dim << (s.k_transposed ? " kT" : "") << (s.has_mask ? " masked" : "")
                                  << " threads " << threads);
  const int64_t b = s.batch();
  const auto q = random_floats(b * s.q_len * s.head_dim, 20), k = random_floats(b * s.kv_len * s.head_dim, 21),
             v = random_floats(b * s.kv_len * s.v_dim, 22);
  std::vector<float> mask;
  if (s.has_mask) {
    mask = random_floats(4096, 23);
    // Masked-out keys; not with a mask constant along the keys, where -1e4 would only shift a
    // whole row and cost float32 the scores' low bits.
    if (s.mask_strides.back() != 0)
      for (float& m : mask) m = m > 1.f ? -1e4f : m;
  }
  const cpu::Attention att(s, 0.3f, threads);
  AlignedScratch scratch(att.scratch_bytes());
  std::vector<float> out(static_cast<size_t>(b * s.q_len * s.v_dim));
  att.run(q.data(), k.data(), v.data(), s.has_mask ? mask.data() : nullptr, out.data(), scratch.get());
  expect_near_all(out, attention_ref(s, 0.3f, q, k, v, mask), 1e-5);
}

TEST(Attention, MatchesReferenceOverShapesAndMasks) {
  cpu::AttentionShape s;
  s.batch_dims = {2, 3};
  s.q_len = 45, s.kv_len = 37, s.head_dim = 8, s.v_dim = 12;
  check_attention(s, 2);
  s.k_transposed = true;
  check_attention(s, 1);
  s.k_transposed = false;
  s.has_mask = true;
  s.mask_strides = {37, 0, 0, 1};  // [2, 1, 1, 37]
  check_attention(s, 2);
  s.mask_strides = {0, 0, 37, 1};  // [45, 37]
  check_attention(s, 3);
  s.mask_strides = {0, 0, 1, 0};  // [45, 1]: one value per query row
  check_attention(s, 2);
  s.batch_dims = {};
  s.q_len = 1, s.kv_len = 300, s.head_dim = 64, s.v_dim = 64;
  s.has_mask = false;
  check_attention(s, 2);
}

TEST(Attention, FullyMaskedRowIsNaN) {
  cpu::AttentionShape s;
  s.batch_dims = {1};
  s.q_len = 2, s.kv_len = 3, s.head_dim = 4, s.v_dim = 2;
  s.has_mask = true;
  s.mask_strides = {0, 3, 1};
  const std::vector<float> q(8, 0.1f), k(12, 0.2f), v(6, 1.f);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> mask{0, 0, 0, -inf, -inf, -inf};
  const cpu::Attention att(s, 1.f, 2);
  AlignedScratch scratch(att.scratch_bytes());
  std::vector<float> out(4);
  att.run(q.data(), k.data(), v.data(), mask.data(), out.data(), scratch.get());
  EXPECT_FLOAT_EQ(out[0], 1.f);
  EXPECT_TRUE(std::isnan(out[2]) && std::isnan(out[3]));
}

// ---- the fusion passes -------------------------------------------------------------------------

TensorType f32(std::vector<Dim> dims) { return TensorType{DType::kFloat32, std::move(dims), DeviceRef::cpu()}; }

const Node* find_op(const Program& p, std::string_view op) {
  for (const Node& n : p.nodes)
    if (n.op == op) return &n;
  return nullptr;
}

TEST(FuseMatmul, BiasAndActivationBecomeOneNode) {
  Graph g;
  ValueId x = g.add_input("x", f32({"batch", 16}));
  ValueId w = g.add_weight("w", f32({16, 8}));
  ValueId b = g.add_weight("b", f32({8}));
  ValueId mm = g.add_op("matmul", {x, w})[0];
  ValueId biased = g.add_op("add", {b, mm})[0];
  ValueId y = g.add_op("gelu", {biased}, {{"approximate", std::string("tanh")}})[0];
  g.set_outputs({{"y", y}});
  Program p = compile_program(g, CompileOptions{});
  ASSERT_EQ(p.nodes.size(), 1u) << p.to_string();
  const Node& n = p.nodes[0];
  EXPECT_EQ(n.op, "fused_matmul");
  EXPECT_EQ(n.inputs, (std::vector<ValueId>{x, w, b}));
  EXPECT_EQ(n.outputs, (std::vector<ValueId>{y}));
  EXPECT_EQ(n.attrs.get<std::string>("activation"), "gelu_tanh");
  EXPECT_TRUE(n.attrs.get<bool>("has_bias"));
}

TEST(FuseMatmul, ActivationWithoutBiasAndBiasWithoutActivation) {
  Graph g;
  ValueId x = g.add_input("x", f32({4, 16}));
  ValueId w = g.add_input("w", f32({16, 8}));
  ValueId w2 = g.add_input("w2", f32({16, 8}));
  ValueId b = g.add_input("b", f32({1, 8}));
  ValueId r = g.add_op("relu", {g.add_op("matmul", {x, w})[0]})[0];
  ValueId s = g.add_op("add", {g.add_op("matmul", {x, w2})[0], b})[0];
  g.set_outputs({{"r", r}, {"s", s}});
  CompileOptions opts;
  Program p = compile_program(g, opts);
  ASSERT_EQ(p.nodes.size(), 2u) << p.to_string();
  EXPECT_EQ(p.nodes[0].attrs.get<std::string>("activation"), "relu");
  EXPECT_FALSE(p.nodes[0].attrs.get<bool>("has_bias"));
  EXPECT_EQ(p.nodes[1].attrs.get<std::string>("activation"), "none");
  EXPECT_TRUE(p.nodes[1].attrs.get<bool>("has_bias"));
}

TEST(FuseMatmul, LeavesOtherPatternsAlone) {
  Graph g;
  ValueId x = g.add_input("x", f32({4, 16}));
  ValueId w = g.add_input("w", f32({16, 8}));
  ValueId v = g.add_input("v", f32({16}));
  ValueId full = g.add_input("full", f32({4, 8}));
  ValueId mm = g.add_op("matmul", {x, w})[0];
  ValueId shared = g.add_op("relu", {mm})[0];                                  // mm is also an output
  ValueId residual = g.add_op("add", {g.add_op("matmul", {x, w})[0], full})[0];  // not a bias
  ValueId mv = g.add_op("relu", {g.add_op("matmul", {x, v})[0]})[0];            // rhs is a vector
  g.set_outputs({{"mm", mm}, {"shared", shared}, {"residual", residual}, {"mv", mv}});
  Program p = compile_program(g, CompileOptions{});
  EXPECT_EQ(find_op(p, "fused_matmul"), nullptr) << p.to_string();
}

TEST(FuseAttention, ScaledMaskedSoftmaxProductBecomesOneNode) {
  Graph g;
  ValueId q = g.add_input("q", f32({2, 4, "s", 8}));
  ValueId k = g.add_input("k", f32({2, 4, "s", 8}));
  ValueId v = g.add_input("v", f32({2, 4, "s", 8}));
  ValueId mask = g.add_input("mask", f32({2, 1, 1, "s"}));
  const float eighth = 0.125f;
  ValueId c = g.add_constant(Constant::copy_of(f32({}), {reinterpret_cast<const uint8_t*>(&eighth), 4}));
  ValueId kt = g.add_op("transpose", {k}, {{"axis_1", int64_t{-1}}, {"axis_2", int64_t{-2}}})[0];
  ValueId scores = g.add_op("mul", {c, g.add_op("matmul", {q, kt})[0]})[0];
  ValueId probs = g.add_op("softmax", {g.add_op("add", {scores, mask})[0]})[0];
  ValueId out = g.add_op("matmul", {probs, v})[0];
  g.set_outputs({{"out", out}});
  Program p = compile_program(g, CompileOptions{});
  ASSERT_EQ(p.nodes.size(), 1u) << p.to_string();
  const Node& n = p.nodes[0];
  EXPECT_EQ(n.op, "attention");
  EXPECT_EQ(n.inputs, (std::vector<ValueId>{q, k, v, mask}));
  EXPECT_DOUBLE_EQ(n.attrs.get<double>("scale"), 0.125);
  EXPECT_FALSE(n.attrs.get<bool>("k_transposed"));
}

TEST(FuseAttention, NeedsASoftmaxReadOnlyByTheProduct) {
  Graph g;
  ValueId q = g.add_input("q", f32({3, 5, 8}));
  ValueId kt = g.add_input("kt", f32({3, 8, 5}));
  ValueId v = g.add_input("v", f32({3, 5, 8}));
  ValueId probs = g.add_op("softmax", {g.add_op("matmul", {q, kt})[0]})[0];
  ValueId out = g.add_op("matmul", {probs, v})[0];
  g.set_outputs({{"out", out}, {"probs", probs}});
  Program p = compile_program(g, CompileOptions{});
  EXPECT_EQ(find_op(p, "attention"), nullptr) << p.to_string();
  g.set_outputs({{"out", out}});
  p = compile_program(g, CompileOptions{});
  const Node* n = find_op(p, "attention");
  ASSERT_NE(n, nullptr) << p.to_string();
  EXPECT_TRUE(n->attrs.get<bool>("k_transposed"));
  EXPECT_DOUBLE_EQ(n->attrs.get<double>("scale"), 1.0);
}

// ---- lowering ----------------------------------------------------------------------------------

Lowered lower(const Node& node, std::vector<Shape> inputs, std::vector<Shape> outputs) {
  const LowerFn* fn = KernelTable::builtin().find(node.op);
  if (!fn) fail(Code::kNotFound, "no lowering for ", node.op);
  std::vector<const Constant*> constants(inputs.size(), nullptr);
  LowerContext ctx{node, inputs, outputs, constants, [](ValueId) { return Shape{}; }, 2};
  return (*fn)(ctx);
}

TEST(LowerLinalg, FusedMatmulRunsThroughTheTable) {
  Node node{"fused_matmul", {0, 1, 2}, {3}, {}, {}};
  node.attrs.set("activation", std::string("silu"));
  node.attrs.set("has_bias", true);
  const Lowered l = lower(node, {{DType::kFloat32, {2, 3}}, {DType::kFloat32, {3, 2}}, {DType::kFloat32, {1, 2}}},
                          {{DType::kFloat32, {2, 2}}});
  const std::vector<float> a{1, 2, 3, 4, 5, 6}, b{1, 0, 0, 1, 1, 1}, bias{0.5f, -0.5f};
  std::vector<float> out(4);
  const void* in[] = {a.data(), b.data(), bias.data()};
  void* outs[] = {out.data()};
  AlignedScratch scratch(l.scratch_bytes);
  l.run(KernelArgs{in, outs, scratch.get()});
  const double want[] = {4.5, 4.5, 10.5, 10.5};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[i], activate_ref(want[i], Activation::kSilu), 1e-5);
}

TEST(LowerLinalg, UnsupportedCasesAreUnimplemented) {
  Node node{"fused_matmul", {0, 1}, {2}, {}, {}};
  node.attrs.set("activation", std::string("softplus"));
  node.attrs.set("has_bias", false);
  const std::vector<Shape> in{{DType::kFloat32, {2, 2}}, {DType::kFloat32, {2, 2}}};
  try {
    lower(node, in, {{DType::kFloat32, {2, 2}}});
    FAIL() << "softplus";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("fused_matmul"), std::string::npos) << e.what();
  }
  Node attention{"attention", {0, 1, 2}, {3}, {{"scale", 1.0}}, {}};
  const std::vector<Shape> half{{DType::kFloat16, {2, 2}}, {DType::kFloat16, {2, 2}}, {DType::kFloat16, {2, 2}}};
  try {
    lower(attention, half, {{DType::kFloat16, {2, 2}}});
    FAIL() << "float16 attention";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
  }
}

}  // namespace
}  // namespace maxc

// Unit tests of the convolution and pooling kernels (kernels/cpu/conv*, pool*) and their
// lowerings (engine/lower/conv.cc), against naive reference loops in double written here.
#include <gtest/gtest.h>

#include <array>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "engine/lowering.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/pool.h"

#include "conv_reference.h"
#include "kernel_test_util.h"

namespace maxc {
namespace {

using kernel_test::AlignedScratch;
using kernel_test::conv_reference;

std::vector<float> random_floats(int64_t n, uint32_t seed) { return kernel_test::random_floats(n, seed, 1.f); }

// ---- conv2d ------------------------------------------------------------------------------------

cpu::Conv2dShape shape(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw, int64_t f, int64_t stride,
                       int64_t dilation, std::array<int64_t, 4> pad, int64_t groups) {
  cpu::Conv2dShape s;
  s.batch = n, s.in_h = h, s.in_w = w, s.in_c = c, s.kernel_h = kh, s.kernel_w = kw, s.out_c = f;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = pad[0], s.pad_bottom = pad[1], s.pad_left = pad[2], s.pad_right = pad[3];
  s.groups = groups;
  s.out_h = (h + pad[0] + pad[1] - dilation * (kh - 1) - 1) / stride + 1;
  s.out_w = (w + pad[2] + pad[3] - dilation * (kw - 1) - 1) / stride + 1;
  return s;
}


void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "at " << i;
}

std::vector<float> run_conv(const cpu::Conv2d& conv, const cpu::Conv2dShape& s, const std::vector<float>& x,
                            const std::vector<float>& f, const std::vector<float>& bias) {
  std::vector<float> out(static_cast<size_t>(s.out_elements()), -7.f);
  AlignedScratch scratch(conv.scratch_bytes());
  conv.run(x.data(), f.data(), bias.empty() ? nullptr : bias.data(), out.data(), scratch.get());
  return out;
}

class ConvF32 : public testing::TestWithParam<cpu::Conv2dShape> {};

TEST_P(ConvF32, OneDnnMatchesReference) {
  const cpu::Conv2dShape s = GetParam();
  const auto x = random_floats(s.in_elements(), 1), f = random_floats(s.filter_elements(), 2),
             bias = random_floats(s.out_c, 3);
  const cpu::Conv2d conv(s, DType::kFloat32, true, nullptr);
  // oneDNN's convolution, or for a pointwise one its matmul.
  EXPECT_NE(conv.implementation().find("onednn:"), std::string::npos) << conv.implementation();
  expect_near_all(run_conv(conv, s, x, f, bias), conv_reference(s, x, f, bias), 1e-5);
  // The same with the filter packed once, as for a constant.
  const cpu::Conv2d packed(s, DType::kFloat32, true, f.data());
  expect_near_all(run_conv(packed, s, x, f, bias), conv_reference(s, x, f, bias), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvF32,
                         testing::Values(shape(1, 5, 5, 3, 3, 3, 4, 1, 1, {0, 0, 0, 0}, 1),
                                         shape(2, 9, 8, 8, 3, 3, 16, 2, 1, {1, 1, 1, 1}, 1),
                                         shape(1, 9, 9, 2, 3, 3, 5, 1, 2, {0, 1, 2, 0}, 1),
                                         shape(1, 8, 8, 4, 3, 3, 6, 1, 1, {1, 1, 1, 1}, 2),
                                         shape(2, 6, 6, 8, 3, 3, 8, 1, 1, {1, 1, 1, 1}, 8),
                                         shape(1, 7, 7, 32, 1, 1, 64, 1, 1, {0, 0, 0, 0}, 1),
                                         shape(1, 16, 16, 3, 7, 7, 8, 2, 1, {3, 3, 3, 3}, 1),
                                         // Past kPlainFilterPixels: a blocked filter, reordered per call.
                                         shape(1, 16, 16, 8, 3, 3, 16, 1, 1, {1, 1, 1, 1}, 2),
                                         shape(2, 12, 10, 6, 3, 3, 6, 1, 2, {2, 2, 2, 2}, 1),
                                         shape(3, 40, 40, 8, 3, 3, 16, 1, 1, {1, 1, 1, 1}, 1)));

// A residual summed in place, as ResNet's blocks fuse it (compiler/channels_last.cc): NHWC
// activations, an FCRS filter, a batch of several images, then the ReLU.
TEST(Conv, ResidualSummedInPlaceBeforeTheRelu) {
  cpu::Conv2dShape s = shape(3, 40, 40, 16, 1, 1, 32, 1, 1, {0, 0, 0, 0}, 1);
  const auto x = random_floats(s.in_elements(), 21), f = random_floats(s.filter_elements(), 22),
             residual = random_floats(s.out_elements(), 23);
  std::vector<double> want = conv_reference(s, x, f, {});
  for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(0.0, want[i] + residual[i]);
  std::vector<float> fcrs(f.size());  // [1, 1, C, F] -> [F, C, 1, 1]
  for (int64_t c = 0; c < s.in_c; ++c)
    for (int64_t o = 0; o < s.out_c; ++o) fcrs[o * s.in_c + c] = f[c * s.out_c + o];
  s.filter_fcrs = true;
  const cpu::ConvEpilogue e{false, false, /*relu=*/true, /*residual=*/true};
  const cpu::Conv2d conv(s, DType::kFloat32, false, fcrs.data(), false, e);
  std::vector<float> out = residual;
  AlignedScratch scratch(conv.scratch_bytes());
  conv.run(x.data(), fcrs.data(), nullptr, out.data(), scratch.get(), false, nullptr, nullptr, out.data());
  expect_near_all(out, want, 1e-5);
}

TEST(Conv, ChannelsFirstAndFcrsFilter) {
  cpu::Conv2dShape s = shape(2, 6, 5, 4, 3, 2, 6, 1, 1, {1, 0, 1, 1}, 2);
  const auto x = random_floats(s.in_elements(), 4), f = random_floats(s.filter_elements(), 5);
  const std::vector<double> want = conv_reference(s, x, f, {});
  // NHWC -> NCHW input, RSCF -> FCRS filter, and the result back from NCHW.
  std::vector<float> xc(x.size()), fc(f.size());
  const int64_t cg = s.in_c / s.groups;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t h = 0; h < s.in_h; ++h)
      for (int64_t w = 0; w < s.in_w; ++w)
        for (int64_t c = 0; c < s.in_c; ++c)
          xc[((n * s.in_c + c) * s.in_h + h) * s.in_w + w] = x[((n * s.in_h + h) * s.in_w + w) * s.in_c + c];
  for (int64_t r = 0; r < s.kernel_h; ++r)
    for (int64_t q = 0; q < s.kernel_w; ++q)
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t o = 0; o < s.out_c; ++o)
          fc[((o * cg + c) * s.kernel_h + r) * s.kernel_w + q] = f[((r * s.kernel_w + q) * cg + c) * s.out_c + o];
  s.channels_first = s.filter_fcrs = true;
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    std::vector<float> got(want.size());
    if (dt == DType::kFloat32) {
      got = run_conv(cpu::Conv2d(s, dt, false, nullptr), s, xc, fc, {});
    } else {
      std::vector<double> xd(xc.begin(), xc.end()), fd(fc.begin(), fc.end()), out(want.size());
      cpu::Conv2d conv(s, dt, false, nullptr);
      EXPECT_EQ(conv.implementation(), "direct");
      conv.run(xd.data(), fd.data(), nullptr, out.data(), nullptr);
      got.assign(out.begin(), out.end());
    }
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t h = 0; h < s.out_h; ++h)
        for (int64_t w = 0; w < s.out_w; ++w)
          for (int64_t o = 0; o < s.out_c; ++o)
            ASSERT_NEAR(got[((n * s.out_c + o) * s.out_h + h) * s.out_w + w],
                        want[((n * s.out_h + h) * s.out_w + w) * s.out_c + o], 1e-5)
                << dtype_name(dt);
  }
}

TEST(Conv, HalfTypesThroughFloat32) {
  const cpu::Conv2dShape s = shape(1, 6, 6, 4, 3, 3, 4, 1, 1, {1, 1, 1, 1}, 1);
  const auto x = random_floats(s.in_elements(), 6), f = random_floats(s.filter_elements(), 7);
  std::vector<uint16_t> hx, hf, hout(static_cast<size_t>(s.out_elements()));
  std::vector<float> wx, wf;
  for (float v : x) hx.push_back(cpu::float_to_bf16(v)), wx.push_back(cpu::bf16_to_float(hx.back()));
  for (float v : f) hf.push_back(cpu::float_to_bf16(v)), wf.push_back(cpu::bf16_to_float(hf.back()));
  const cpu::Conv2d conv(s, DType::kBFloat16, false, nullptr);
  EXPECT_EQ(conv.implementation().rfind("onednn", 0), 0u) << conv.implementation();
  AlignedScratch scratch(conv.scratch_bytes());
  conv.run(hx.data(), hf.data(), nullptr, hout.data(), scratch.get());
  const std::vector<double> want = conv_reference(s, wx, wf, {});
  for (size_t i = 0; i < hout.size(); ++i) ASSERT_NEAR(cpu::bf16_to_float(hout[i]), want[i], 2e-2) << i;
}

TEST(Conv, OneObjectServesConcurrentCalls) {
  const cpu::Conv2dShape s = shape(1, 12, 12, 16, 3, 3, 16, 1, 1, {1, 1, 1, 1}, 1);
  const auto f = random_floats(s.filter_elements(), 8), bias = random_floats(16, 9);
  const cpu::Conv2d conv(s, DType::kFloat32, true, nullptr);
  std::vector<int> ok(3, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      const auto x = random_floats(s.in_elements(), 50 + t);
      const std::vector<double> want = conv_reference(s, x, f, bias);
      bool good = true;
      for (int rep = 0; rep < 10 && good; ++rep) {
        const std::vector<float> got = run_conv(conv, s, x, f, bias);
        for (size_t i = 0; i < got.size() && good; ++i) good = std::abs(got[i] - want[i]) < 1e-4;
      }
      ok[t] = good;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, (std::vector<int>{1, 1, 1}));
}

TEST(Conv, PointwiseRunsAsAMatmul) {
  const cpu::Conv2dShape s = shape(2, 5, 3, 16, 1, 1, 24, 1, 1, {0, 0, 0, 0}, 1);
  const auto x = random_floats(s.in_elements(), 14), f = random_floats(s.filter_elements(), 15),
             bias = random_floats(24, 16);
  const cpu::Conv2d conv(s, DType::kFloat32, true, nullptr);
  EXPECT_EQ(conv.implementation().rfind("matmul/", 0), 0u) << conv.implementation();
  expect_near_all(run_conv(conv, s, x, f, bias), conv_reference(s, x, f, bias), 1e-5);
}

TEST(Conv, RefusesIntegers) {
  try {
    cpu::Conv2d conv(shape(1, 3, 3, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, 1), DType::kInt32, false, nullptr);
    FAIL() << "int32 conv";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
  }
}

// ---- pooling -----------------------------------------------------------------------------------

cpu::Pool2dShape pool(int64_t h, int64_t w, int64_t c, int64_t k, int64_t stride, int64_t dilation, int64_t pad,
                      bool ceil_mode) {
  cpu::Pool2dShape s;
  s.batch = 2, s.in_h = h, s.in_w = w, s.channels = c;
  s.kernel_h = s.kernel_w = k, s.stride_h = s.stride_w = stride, s.dilation_h = s.dilation_w = dilation;
  s.pad_h = s.pad_w = pad;
  auto out = [&](int64_t size) {
    return (size + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  };
  s.out_h = out(h), s.out_w = out(w);
  return s;
}

// kind: 0 max, 1 average over the taps inside, 2 average counting the padding.
std::vector<double> pool_ref(const cpu::Pool2dShape& s, const std::vector<float>& x, int kind) {
  std::vector<double> out;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.out_h; ++oh)
      for (int64_t ow = 0; ow < s.out_w; ++ow)
        for (int64_t c = 0; c < s.channels; ++c) {
          double best = -INFINITY, sum = 0;
          int64_t inside = 0, padded = 0;
          for (int64_t i = 0; i < s.kernel_h; ++i)
            for (int64_t j = 0; j < s.kernel_w; ++j) {
              const int64_t h = oh * s.stride_h - s.pad_h + i * s.dilation_h;
              const int64_t w = ow * s.stride_w - s.pad_w + j * s.dilation_w;
              padded += h >= -s.pad_h && h < s.in_h + s.pad_h && w >= -s.pad_w && w < s.in_w + s.pad_w;
              if (h < 0 || h >= s.in_h || w < 0 || w >= s.in_w) continue;
              const double v = x[((n * s.in_h + h) * s.in_w + w) * s.channels + c];
              best = std::max(best, v), sum += v, ++inside;
            }
          const int64_t divisor = kind == 1 ? inside : padded;
          out.push_back(kind == 0 ? best : divisor ? sum / divisor : 0);
        }
  return out;
}

TEST(Pool, MaxAndAverageMatchReference) {
  for (const cpu::Pool2dShape& s :
       {pool(7, 8, 3, 2, 2, 1, 0, false), pool(7, 8, 5, 3, 2, 1, 1, false), pool(9, 9, 4, 2, 1, 2, 0, false),
        pool(7, 8, 3, 3, 2, 1, 0, true), pool(7, 7, 3, 3, 2, 1, 1, true), pool(5, 5, 2, 2, 3, 1, 1, true),
        // channels in multiples of 8: max pool's vector path, by 32 channels then by 8
        pool(7, 8, 8, 3, 2, 1, 1, false), pool(9, 9, 16, 2, 1, 2, 0, true), pool(9, 8, 40, 3, 2, 1, 1, false),
        pool(8, 9, 64, 3, 1, 2, 2, true)}) {
    const auto x = random_floats(s.batch * s.in_h * s.in_w * s.channels, 10);
    std::vector<float> out(static_cast<size_t>(s.batch * s.out_h * s.out_w * s.channels));
    cpu::max_pool2d(DType::kFloat32, s, x.data(), out.data());
    expect_near_all(out, pool_ref(s, x, 0), 0);
    cpu::avg_pool2d(DType::kFloat32, s, false, x.data(), out.data());
    expect_near_all(out, pool_ref(s, x, 1), 1e-6);
    cpu::avg_pool2d(DType::kFloat32, s, true, x.data(), out.data());
    expect_near_all(out, pool_ref(s, x, 2), 1e-6);
  }
}

TEST(Pool, MaxPropagatesNaNAndWorksOnIntegers) {
  const cpu::Pool2dShape s = pool(2, 2, 1, 2, 2, 1, 0, false);
  std::vector<float> x{1.f, std::numeric_limits<float>::quiet_NaN(), 3.f, 2.f, 0, 0, 0, 0};
  std::vector<float> out(2);
  cpu::max_pool2d(DType::kFloat32, s, x.data(), out.data());
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 0.f);
  const std::vector<int64_t> ix{-5, -9, -7, -6, 1, 2, 3, 4};
  std::vector<int64_t> iout(2);
  cpu::max_pool2d(DType::kInt64, s, ix.data(), iout.data());
  EXPECT_EQ(iout, (std::vector<int64_t>{-5, 4}));
  EXPECT_FALSE(cpu::avg_pool2d_supports(DType::kInt32));
  // The vector path (channels in multiples of 8: one vector, two, then five: four at once and
  // one): a NaN in one channel wins that channel only.
  for (int64_t c8 : {8, 16, 40}) {
    const cpu::Pool2dShape s8 = pool(2, 2, c8, 2, 2, 1, 0, false);
    std::vector<float> x8(static_cast<size_t>(2 * 4 * c8), 1.f), out8(static_cast<size_t>(2 * c8));
    x8[static_cast<size_t>(2 * c8 + c8 - 5)] = std::numeric_limits<float>::quiet_NaN();
    x8[static_cast<size_t>(c8 + c8 - 3)] = 7.f;
    cpu::max_pool2d(DType::kFloat32, s8, x8.data(), out8.data());
    for (int64_t c = 0; c < c8; ++c) {
      if (c == c8 - 5) EXPECT_TRUE(std::isnan(out8[static_cast<size_t>(c)])) << c8 << " channels";
      else EXPECT_EQ(out8[static_cast<size_t>(c)], c == c8 - 3 ? 7.f : 1.f) << c << " of " << c8;
    }
  }
}

// ---- lowering ----------------------------------------------------------------------------------

TEST(LowerConv, Conv2dReadsLayoutsAndBiasFromTheNode) {
  Node node{"conv2d", {0, 1, 2}, {3}, {}, {}};
  node.attrs.set("stride", std::vector<int64_t>{1, 1});
  node.attrs.set("dilation", std::vector<int64_t>{1, 1});
  node.attrs.set("padding", std::vector<int64_t>{1, 1, 1, 1});
  node.attrs.set("groups", int64_t{1});
  node.attrs.set("input_layout", std::string("NHWC"));
  node.attrs.set("filter_layout", std::string("RSCF"));
  const std::vector<Shape> in{{DType::kFloat32, {1, 4, 4, 2}}, {DType::kFloat32, {3, 3, 2, 3}}, {DType::kFloat32, {3}}};
  const std::vector<Shape> out{{DType::kFloat32, {1, 4, 4, 3}}};
  const std::vector<const Constant*> constants(3, nullptr);
  const Lowered l = (*KernelTable::builtin().find("conv2d"))(
      LowerContext{node, in, out, constants, [](ValueId) { return Shape{}; }, 2});
  const cpu::Conv2dShape s = shape(1, 4, 4, 2, 3, 3, 3, 1, 1, {1, 1, 1, 1}, 1);
  const auto x = random_floats(32, 11), f = random_floats(54, 12), bias = random_floats(3, 13);
  std::vector<float> y(48);
  const void* ins[] = {x.data(), f.data(), bias.data()};
  void* outs[] = {y.data()};
  AlignedScratch scratch(l.scratch_bytes);
  l.run(KernelArgs{ins, outs, scratch.get()});
  expect_near_all(y, conv_reference(s, x, f, bias), 1e-5);
}

}  // namespace
}  // namespace maxc

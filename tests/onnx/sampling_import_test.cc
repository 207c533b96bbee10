// GridSample, AffineGrid and Col2Im against direct C++ evaluations of the ONNX definitions,
// and the variants the importer refuses (UNIMPLEMENTED, naming the node).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

using Vec = std::vector<float>;
using Shape = std::vector<int64_t>;

Vec ramp(size_t n, float scale, float offset) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = offset + scale * static_cast<float>((i * 5) % 11) - 0.03f * static_cast<float>(i % 3);
  return v;
}

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<DimSpec> spec(const Shape& s) { return {s.begin(), s.end()}; }

// ---- a GridSample reference, one output point at a time ----

struct Sampling {
  std::string mode = "linear", padding = "zeros";
  bool align = false;
};

// Mirrors v into [lo, hi] as many times as it takes (a zero-width range holds only lo).
double reflect(double v, double lo, double hi) {
  if (hi <= lo) return lo;
  while (v < lo || v > hi) v = v < lo ? 2 * lo - v : 2 * hi - v;
  return v;
}

double keys_cubic(double s) {
  const double a = -0.75;
  s = std::abs(s);
  if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
  if (s < 2) return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  return 0;
}

// One channel's pixel at integer position `at` (per spatial axis), under the padding rule.
double pixel(const float* img, const Shape& dims, std::vector<int64_t> at, const Sampling& s) {
  int64_t flat = 0;
  for (size_t k = 0; k < dims.size(); ++k) {
    int64_t d = dims[k];
    if (s.padding == "zeros" && (at[k] < 0 || at[k] >= d)) return 0;
    if (s.padding == "border") at[k] = std::clamp<int64_t>(at[k], 0, d - 1);
    if (s.padding == "reflection") {
      double lo = s.align ? 0 : -0.5, hi = s.align ? d - 1 : d - 0.5;
      at[k] = static_cast<int64_t>(reflect(static_cast<double>(at[k]), lo, hi));
    }
    flat = flat * d + at[k];
  }
  return img[flat];
}

// Y at normalized position `g` (innermost axis first, as the grid lists it).
double sample_at(const float* img, const Shape& dims, const std::vector<float>& g, const Sampling& s) {
  size_t r = dims.size();
  std::vector<double> x(r);
  for (size_t k = 0; k < r; ++k) {
    // In float, as the reference: where a position rounds decides a tie or a clamp.
    float n = g[r - 1 - k], fd = static_cast<float>(dims[k]);
    x[k] = s.align ? (n + 1) / 2 * (fd - 1) : ((n + 1) * fd - 1) / 2;
    double d = static_cast<double>(dims[k]);
    if (s.mode == "nearest") x[k] = std::nearbyint(x[k]);
    double lo = s.align ? 0 : -0.5, hi = s.align ? d - 1 : d - 0.5;
    if (x[k] < lo || x[k] > hi) {
      if (s.padding == "border") x[k] = std::clamp(x[k], 0.0, d - 1);
      if (s.padding == "reflection") x[k] = reflect(x[k], lo, hi);
    }
  }
  if (s.mode == "nearest") {
    std::vector<int64_t> at;
    for (double v : x) at.push_back(static_cast<int64_t>(v));
    return pixel(img, dims, at, s);
  }
  // The tensor product of per-axis taps: 2 (linear) or 4 (cubic) from floor(x) - first.
  int64_t taps = s.mode == "cubic" ? 4 : 2, first = s.mode == "cubic" ? -1 : 0;
  double sum = 0;
  std::vector<int64_t> t(r, 0);
  for (int64_t i = 0; i < count(Shape(r, taps)); ++i) {
    double w = 1;
    std::vector<int64_t> at(r);
    for (size_t k = 0; k < r; ++k) {
      double base = std::floor(x[k]), f = x[k] - base;
      int64_t o = first + t[k];
      at[k] = static_cast<int64_t>(base) + o;
      w *= s.mode == "cubic" ? keys_cubic(f - static_cast<double>(o)) : 1 - std::abs(f - static_cast<double>(o));
    }
    sum += w * pixel(img, dims, at, s);
    for (size_t k = r; k-- > 0 && ++t[k] == taps;) t[k] = 0;
  }
  return sum;
}

// Y [N, C, out..] for X [N, C, dims..] and grid [N, out.., r].
Vec grid_sample_reference(const Vec& x, const Shape& xs, const Vec& grid, const Shape& gs, const Sampling& s) {
  Shape dims(xs.begin() + 2, xs.end());
  int64_t r = static_cast<int64_t>(dims.size()), points = count(gs) / gs[0] / r, plane = count(dims);
  Vec y;
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t c = 0; c < xs[1]; ++c)
      for (int64_t p = 0; p < points; ++p) {
        auto g0 = grid.begin() + (n * points + p) * r;
        y.push_back(static_cast<float>(sample_at(x.data() + (n * xs[1] + c) * plane, dims, Vec(g0, g0 + r), s)));
      }
  return y;
}

std::string grid_sample_model(const Shape& xs, const Shape& gs, const Sampling& s, int64_t opset = 22) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, spec(xs)), value_info("grid", kFloat, spec(gs))};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("GridSample", {"x", "grid"}, {"y"},
                  {attr_string("mode", s.mode), attr_string("padding_mode", s.padding),
                   attr_int("align_corners", s.align)},
                  "gs")};
  return model(g, opset);
}

// Positions spread over [-1.6, 1.6] (so some fall outside the image), a few exactly on
// pixel centers and edges.
Vec test_grid(size_t n) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = -1.6f + 3.2f * static_cast<float>((i * 7) % 17) / 16.f;
  if (n > 3) v[1] = 1.f, v[2] = -1.f, v[3] = 0.f;
  return v;
}

TEST(OnnxSampling, GridSample2dEveryModePaddingAndAlignment) {
  const Shape xs = {2, 2, 3, 4}, gs = {2, 3, 5, 2};
  Vec x = ramp(static_cast<size_t>(count(xs)), 0.3f, -1.f), grid = test_grid(static_cast<size_t>(count(gs)));
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true}) {
        SCOPED_TRACE(std::string(mode) + " " + padding + (align ? " align_corners" : ""));
        Sampling s{mode, padding, align};
        auto out = run_model(grid_sample_model(xs, gs, s), {f32_tensor(xs, x), f32_tensor(gs, grid)});
        EXPECT_EQ(out[0]->dims(), (Shape{2, 2, 3, 5}));
        expect_near(floats_of(out[0]), grid_sample_reference(x, xs, grid, gs, s), 1e-4f);
      }
}

TEST(OnnxSampling, GridSampleOpset16SpellsBilinearAndBicubic) {
  const Shape xs = {1, 1, 4, 3}, gs = {1, 2, 3, 2};
  Vec x = ramp(12, 0.5f, 0.2f), grid = test_grid(12);
  for (auto [old_name, mode] : {std::pair{"bilinear", "linear"}, {"bicubic", "cubic"}}) {
    Sampling s{old_name, "border", false};
    auto out = run_model(grid_sample_model(xs, gs, s, 16), {f32_tensor(xs, x), f32_tensor(gs, grid)});
    expect_near(floats_of(out[0]), grid_sample_reference(x, xs, grid, gs, Sampling{mode, "border", false}), 1e-4f);
  }
}

TEST(OnnxSampling, GridSampleVolumetric) {
  const Shape xs = {1, 2, 2, 3, 4}, gs = {1, 2, 2, 3, 3};
  Vec x = ramp(static_cast<size_t>(count(xs)), 0.25f, -0.7f), grid = test_grid(static_cast<size_t>(count(gs)));
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* padding : {"zeros", "reflection"}) {
      SCOPED_TRACE(std::string(mode) + " " + padding);
      Sampling s{mode, padding, true};
      auto out = run_model(grid_sample_model(xs, gs, s), {f32_tensor(xs, x), f32_tensor(gs, grid)});
      EXPECT_EQ(out[0]->dims(), (Shape{1, 2, 2, 2, 3}));
      expect_near(floats_of(out[0]), grid_sample_reference(x, xs, grid, gs, s), 1e-4f);
    }
}

// X and grid name their batch dims differently; the importer asserts them equal at run time.
TEST(OnnxSampling, GridSampleWithDifferentlyNamedBatches) {
  const Shape xs = {2, 1, 3, 3}, gs = {2, 2, 2, 2};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {std::string("n"), int64_t{1}, int64_t{3}, int64_t{3}}),
              value_info("grid", kFloat, {std::string("b"), int64_t{2}, int64_t{2}, int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("GridSample", {"x", "grid"}, {"y"}, {attr_string("padding_mode", "border")})};
  Vec x = ramp(18, 0.4f, -0.3f), grid = test_grid(16);
  auto out = run_model(model(g, 20), {f32_tensor(xs, x), f32_tensor(gs, grid)});
  EXPECT_EQ(out[0]->dims(), (Shape{2, 1, 2, 2}));
  expect_near(floats_of(out[0]), grid_sample_reference(x, xs, grid, gs, Sampling{"linear", "border", false}), 1e-4f);
}

TEST(OnnxSampling, GridSampleOfRank6IsUnimplemented) {
  Sampling s;
  expect_unimplemented_naming(grid_sample_model({1, 1, 2, 2, 2, 2}, {1, 2, 2, 2, 2, 4}, s), "node 0 'gs' (GridSample)",
                              "rank 6");
}

TEST(OnnxSampling, GridSampleOverASymbolicSpatialDimIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{1}, std::string("h"), int64_t{4}}),
              value_info("grid", kFloat, {int64_t{1}, int64_t{2}, int64_t{2}, int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("GridSample", {"x", "grid"}, {"y"}, {}, "gs")};
  expect_unimplemented_naming(model(g, 20), "node 0 'gs' (GridSample)", "symbolic");
}

TEST(OnnxSampling, GridSampleLinearOfIntegersIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kInt64, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}}),
              value_info("grid", kFloat, {int64_t{1}, int64_t{2}, int64_t{2}, int64_t{2}})};
  g.outputs = {value_info("y", kInt64, {})};
  g.nodes = {node("GridSample", {"x", "grid"}, {"y"}, {attr_string("mode", "linear")}, "gs")};
  expect_unimplemented_naming(model(g, 20), "node 0 'gs' (GridSample)", "non-float");
}

// ---- AffineGrid ----

// grid[n, h, w] = theta[n] · (x_w, y_h, 1), positions evenly spaced in [-1, 1].
Vec affine_grid_reference(const Vec& theta, int64_t batch, int64_t h, int64_t w, bool align) {
  auto pos = [&](int64_t i, int64_t d) {
    return align ? -1 + 2.0 * static_cast<double>(i) / static_cast<double>(d - 1)
                 : (2.0 * static_cast<double>(i) + 1) / static_cast<double>(d) - 1;
  };
  Vec out;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j)
        for (int64_t row = 0; row < 2; ++row) {
          const float* t = theta.data() + n * 6 + row * 3;
          out.push_back(static_cast<float>(t[0] * pos(j, w) + t[1] * pos(i, h) + t[2]));
        }
  return out;
}

TEST(OnnxSampling, AffineGrid2d) {
  const int64_t N = 2, H = 3, W = 4;
  Vec theta = ramp(N * 6, 0.4f, -0.8f);
  for (bool align : {false, true}) {
    GraphSpec g;
    g.inputs = {value_info("theta", kFloat, {N, int64_t{2}, int64_t{3}})};
    g.initializers = {tensor_i64("size", {4}, {N, 5, H, W})};
    g.outputs = {value_info("grid", kFloat, {})};
    g.nodes = {node("AffineGrid", {"theta", "size"}, {"grid"}, {attr_int("align_corners", align)})};
    auto out = run_model(model(g, 20), {f32_tensor({N, 2, 3}, theta)});
    EXPECT_EQ(out[0]->dims(), (Shape{N, H, W, 2}));
    expect_near(floats_of(out[0]), affine_grid_reference(theta, N, H, W, align), 1e-5f);
  }
}

// The identity transform's grid samples every pixel at its own center.
TEST(OnnxSampling, AffineGrid3dIdentityThroughGridSampleIsTheInput) {
  const Shape xs = {1, 2, 2, 3, 4};
  Vec x = ramp(static_cast<size_t>(count(xs)), 0.3f, -0.5f);
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, spec(xs))};
  g.initializers = {tensor_f32("theta", {1, 3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}), tensor_i64("size", {5}, xs)};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("AffineGrid", {"theta", "size"}, {"grid"}),
             node("GridSample", {"x", "grid"}, {"y"}, {attr_string("mode", "cubic")})};
  auto out = run_model(model(g, 20), {f32_tensor(xs, x)});
  EXPECT_EQ(out[0]->dims(), xs);
  expect_near(floats_of(out[0]), x, 1e-5f);
}

TEST(OnnxSampling, AffineGridOfRuntimeSizeIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("theta", kFloat, {int64_t{1}, int64_t{2}, int64_t{3}}),
              value_info("size", kInt64, {int64_t{4}})};
  g.outputs = {value_info("grid", kFloat, {})};
  g.nodes = {node("AffineGrid", {"theta", "size"}, {"grid"}, {}, "ag")};
  expect_unimplemented_naming(model(g, 20), "node 0 'ag' (AffineGrid)", "'size'");
}

// ---- Col2Im ----

struct Col2ImCase {
  Shape image, block, dilations, pads, strides;
};

// The reference's loops: every column element added to the image element it lands on.
Vec col2im_reference(const Vec& x, int64_t batch, int64_t channels, const Col2ImCase& p) {
  int64_t bh = p.block[0], bw = p.block[1], ih = p.image[0], iw = p.image[1];
  auto blocks = [&](size_t i) {
    return (p.image[i] + p.pads[i] + p.pads[i + 2] - p.dilations[i] * (p.block[i] - 1) - 1) / p.strides[i] + 1;
  };
  int64_t oh = blocks(0), ow = blocks(1);
  Vec y(static_cast<size_t>(batch * channels * ih * iw), 0.f);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t ky = 0; ky < bh; ++ky)
        for (int64_t kx = 0; kx < bw; ++kx)
          for (int64_t by = 0; by < oh; ++by)
            for (int64_t bx = 0; bx < ow; ++bx) {
              int64_t yy = by * p.strides[0] - p.pads[0] + ky * p.dilations[0];
              int64_t xx = bx * p.strides[1] - p.pads[1] + kx * p.dilations[1];
              if (yy < 0 || yy >= ih || xx < 0 || xx >= iw) continue;
              int64_t col = ((n * channels + c) * bh * bw + ky * bw + kx) * oh * ow + by * ow + bx;
              y[static_cast<size_t>(((n * channels + c) * ih + yy) * iw + xx)] += x[static_cast<size_t>(col)];
            }
  return y;
}

std::string col2im_model(const Shape& xs, const Col2ImCase& p) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, spec(xs))};
  g.initializers = {tensor_i64("image", {2}, p.image), tensor_i64("block", {2}, p.block)};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Col2Im", {"x", "image", "block"}, {"y"},
                  {attr_ints("dilations", p.dilations), attr_ints("pads", p.pads), attr_ints("strides", p.strides)})};
  return model(g, 18);
}

TEST(OnnxSampling, Col2ImWithPadsStridesAndDilations) {
  // Overlapping blocks (several column elements per image element), blocks over the
  // padding, and disjoint blocks (one each).
  const std::vector<Col2ImCase> cases = {{{5, 6}, {3, 2}, {1, 2}, {1, 0, 2, 1}, {1, 2}},
                                         {{4, 6}, {2, 3}, {1, 1}, {0, 0, 0, 0}, {2, 3}},
                                         {{5, 5}, {2, 2}, {2, 1}, {0, 1, 1, 0}, {1, 1}}};
  for (const Col2ImCase& p : cases) {
    const int64_t N = 2, C = 3;
    int64_t l = 1;
    for (size_t i = 0; i < 2; ++i)
      l *= (p.image[i] + p.pads[i] + p.pads[i + 2] - p.dilations[i] * (p.block[i] - 1) - 1) / p.strides[i] + 1;
    Shape xs = {N, C * p.block[0] * p.block[1], l};
    Vec x = ramp(static_cast<size_t>(count(xs)), 0.2f, -0.6f);
    auto out = run_model(col2im_model(xs, p), {f32_tensor(xs, x)});
    EXPECT_EQ(out[0]->dims(), (Shape{N, C, p.image[0], p.image[1]}));
    expect_near(floats_of(out[0]), col2im_reference(x, N, C, p), 1e-5f);
  }
}

TEST(OnnxSampling, Col2ImOfRuntimeImageShapeIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{4}, int64_t{9}}), value_info("image", kInt64, {int64_t{2}})};
  g.initializers = {tensor_i64("block", {2}, {2, 2})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Col2Im", {"x", "image", "block"}, {"y"}, {}, "c2i")};
  expect_unimplemented_naming(model(g, 18), "node 0 'c2i' (Col2Im)", "'image_shape'");
}

TEST(OnnxSampling, Col2ImOfSymbolicBlockCountIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{4}, std::string("L")})};
  g.initializers = {tensor_i64("image", {2}, {4, 4}), tensor_i64("block", {2}, {2, 2})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Col2Im", {"x", "image", "block"}, {"y"}, {}, "c2i")};
  expect_unimplemented_naming(model(g, 18), "node 0 'c2i' (Col2Im)", "symbolic");
}

}  // namespace
}  // namespace maxc::onnx::testing

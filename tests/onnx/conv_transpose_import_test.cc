// ConvTranspose imported as conv2d over a zero-inserted input, against a direct C++
// scatter of each input pixel through the filter.
#include <gtest/gtest.h>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

using Vec = std::vector<float>;

Vec ramp(size_t n, float scale, float offset) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 5) % 13);
  return v;
}

struct Shape {
  int64_t n, cin, h, w, cout_g, kh, kw, groups, sh, sw, dh, dw, pt, pl, pb, pr, oph, opw;
};

// y[n, g*cout_g + co, i*s + k*d - pad] += x[n, g*cin_g + ci, i] * w[g*cin_g + ci, co, k].
Vec reference(const Shape& s, const Vec& x, const Vec& w, const Vec& bias, int64_t& oh, int64_t& ow) {
  oh = s.sh * (s.h - 1) + s.oph + (s.kh - 1) * s.dh + 1 - s.pt - s.pb;
  ow = s.sw * (s.w - 1) + s.opw + (s.kw - 1) * s.dw + 1 - s.pl - s.pr;
  int64_t cin_g = s.cin / s.groups, cout = s.cout_g * s.groups;
  Vec y(static_cast<size_t>(s.n * cout * oh * ow), 0.f);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < cout; ++c)
      for (int64_t i = 0; i < oh * ow; ++i) y[static_cast<size_t>((n * cout + c) * oh * ow + i)] = bias[static_cast<size_t>(c)];
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t ci = 0; ci < s.cin; ++ci)
      for (int64_t co = 0; co < s.cout_g; ++co)
        for (int64_t i = 0; i < s.h; ++i)
          for (int64_t j = 0; j < s.w; ++j)
            for (int64_t a = 0; a < s.kh; ++a)
              for (int64_t b = 0; b < s.kw; ++b) {
                int64_t oy = i * s.sh + a * s.dh - s.pt, ox = j * s.sw + b * s.dw - s.pl;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                int64_t c = (ci / cin_g) * s.cout_g + co;
                y[static_cast<size_t>(((n * cout + c) * oh + oy) * ow + ox)] +=
                    x[static_cast<size_t>(((n * s.cin + ci) * s.h + i) * s.w + j)] *
                    w[static_cast<size_t>(((ci * s.cout_g + co) * s.kh + a) * s.kw + b)];
              }
  return y;
}

// Runs ConvTranspose with the filter as an initializer or as a graph input.
void check(const Shape& s, bool filter_is_input) {
  Vec x = ramp(static_cast<size_t>(s.n * s.cin * s.h * s.w), 0.1f, -0.6f);
  Vec w = ramp(static_cast<size_t>(s.cin * s.cout_g * s.kh * s.kw), 0.07f, -0.4f);
  Vec bias = ramp(static_cast<size_t>(s.cout_g * s.groups), 0.2f, -0.3f);
  std::vector<int64_t> wd = {s.cin, s.cout_g, s.kh, s.kw};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {s.n, s.cin, s.h, s.w})};
  if (filter_is_input) g.inputs.push_back(value_info("w", kFloat, {s.cin, s.cout_g, s.kh, s.kw}));
  else g.initializers.push_back(tensor_f32("w", wd, w));
  g.initializers.push_back(tensor_f32("b", {s.cout_g * s.groups}, bias));
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("ConvTranspose", {"x", "w", "b"}, {"y"},
                  {attr_ints("strides", {s.sh, s.sw}), attr_ints("dilations", {s.dh, s.dw}),
                   attr_ints("pads", {s.pt, s.pl, s.pb, s.pr}), attr_ints("output_padding", {s.oph, s.opw}),
                   attr_int("group", s.groups)})};
  std::vector<Ref<Tensor>> ins = {f32_tensor({s.n, s.cin, s.h, s.w}, x)};
  if (filter_is_input) ins.push_back(f32_tensor(wd, w));
  auto out = run_model(model(g, 22), ins);
  int64_t oh = 0, ow = 0;
  Vec want = reference(s, x, w, bias, oh, ow);
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{s.n, s.cout_g * s.groups, oh, ow}));
  expect_near(floats_of(out[0]), want);
}

const Shape kStridedGrouped{2, 4, 3, 4, 3, 3, 2, 2, 2, 3, 1, 2, 1, 0, 2, 1, 1, 0};

TEST(OnnxConvTranspose, StridedDilatedGroupedWithKnownFilter) { check(kStridedGrouped, false); }

TEST(OnnxConvTranspose, FilterComputedAtRunTime) { check(kStridedGrouped, true); }

TEST(OnnxConvTranspose, FourSpatialDimsAreUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}, int64_t{2}, int64_t{2}})};
  g.initializers = {tensor_f32("w", {1, 1, 1, 1, 1, 1}, {1.f})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("ConvTranspose", {"x", "w"}, {"y"}, {}, "up4d")};
  Error e = import_error(model(g, 22));
  EXPECT_EQ(e.code(), Code::kUnimplemented);
  EXPECT_NE(std::string(e.what()).find("node 0 'up4d' (ConvTranspose)"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("rank 6"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace maxc::onnx::testing

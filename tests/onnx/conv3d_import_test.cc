// 3-D Conv and ConvTranspose, composed from conv2d over depth planes (onnx/conv3d.h),
// against direct C++ loops over every input and filter tap.
#include <gtest/gtest.h>

#include <array>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

using Vec = std::vector<float>;
using Dims3 = std::array<int64_t, 3>;

Vec ramp(size_t n, float scale, float offset) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 7) % 17);
  return v;
}

struct Conv3 {
  int64_t n, cin, cout, groups;
  Dims3 in, kernel, stride, dilation, pad_begin, pad_end, output_padding;
};

int64_t volume(const Dims3& d) { return d[0] * d[1] * d[2]; }

// Flat index of (z, y, x) in a block of dims d; -1 outside it.
int64_t at(const Dims3& d, int64_t z, int64_t y, int64_t x) {
  if (z < 0 || y < 0 || x < 0 || z >= d[0] || y >= d[1] || x >= d[2]) return -1;
  return (z * d[1] + y) * d[2] + x;
}

Dims3 conv_out(const Conv3& s) {
  Dims3 o;
  for (size_t a = 0; a < 3; ++a)
    o[a] = (s.in[a] + s.pad_begin[a] + s.pad_end[a] - s.dilation[a] * (s.kernel[a] - 1) - 1) / s.stride[a] + 1;
  return o;
}

Dims3 transpose_out(const Conv3& s) {
  Dims3 o;
  for (size_t a = 0; a < 3; ++a)
    o[a] = s.stride[a] * (s.in[a] - 1) + s.output_padding[a] + (s.kernel[a] - 1) * s.dilation[a] + 1 - s.pad_begin[a] -
           s.pad_end[a];
  return o;
}

// Calls f(ci, co, input position, output position, filter position) for every tap that
// links an input element to an output element, by the transposed convolution's rule
// out = in * stride + k * dilation - pad_begin (for Conv, read the other way round).
template <typename F>
void each_tap(const Conv3& s, const Dims3& out, F f) {
  const int64_t cin_g = s.cin / s.groups, cout_g = s.cout / s.groups;
  for (int64_t ci = 0; ci < s.cin; ++ci)
    for (int64_t co = (ci / cin_g) * cout_g; co < (ci / cin_g + 1) * cout_g; ++co)
      for (int64_t i = 0; i < volume(s.in); ++i)
        for (int64_t k = 0; k < volume(s.kernel); ++k) {
          const int64_t iz = i / (s.in[1] * s.in[2]), iy = i / s.in[2] % s.in[1], ix = i % s.in[2];
          const int64_t kz = k / (s.kernel[1] * s.kernel[2]), ky = k / s.kernel[2] % s.kernel[1], kx = k % s.kernel[2];
          const int64_t o = at(out, iz * s.stride[0] + kz * s.dilation[0] - s.pad_begin[0],
                               iy * s.stride[1] + ky * s.dilation[1] - s.pad_begin[1],
                               ix * s.stride[2] + kx * s.dilation[2] - s.pad_begin[2]);
          if (o >= 0) f(ci, co, i, o, k);
        }
}

// ConvTranspose: W is [Cin, Cout/g, k..].
Vec transpose_reference(const Conv3& s, const Vec& x, const Vec& w, const Vec& bias) {
  const Dims3 out = transpose_out(s);
  const int64_t cout_g = s.cout / s.groups, ov = volume(out), iv = volume(s.in), kv = volume(s.kernel);
  Vec y(static_cast<size_t>(s.n * s.cout * ov));
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t co = 0; co < s.cout; ++co)
      for (int64_t o = 0; o < ov; ++o) y[static_cast<size_t>((n * s.cout + co) * ov + o)] = bias[static_cast<size_t>(co)];
  for (int64_t n = 0; n < s.n; ++n)
    each_tap(s, out, [&](int64_t ci, int64_t co, int64_t i, int64_t o, int64_t k) {
      y[static_cast<size_t>((n * s.cout + co) * ov + o)] +=
          x[static_cast<size_t>((n * s.cin + ci) * iv + i)] * w[static_cast<size_t>((ci * cout_g + co % cout_g) * kv + k)];
    });
  return y;
}

// Conv: x is [N, Cin, in..] read at out * stride + k * dilation - pad; W is [Cout, Cin/g, k..].
// The same taps as a transposed convolution of the output, with input and output swapped.
Vec conv_reference(const Conv3& s, const Vec& x, const Vec& w, const Vec& bias) {
  const Dims3 out = conv_out(s);
  Conv3 t = s;  // walks the output as the "input" of the tap rule
  t.in = out;
  t.cin = s.cout, t.cout = s.cin;
  const int64_t cin_g = s.cin / s.groups, ov = volume(out), iv = volume(s.in), kv = volume(s.kernel);
  Vec y(static_cast<size_t>(s.n * s.cout * ov));
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t f = 0; f < s.cout; ++f)
      for (int64_t o = 0; o < ov; ++o) y[static_cast<size_t>((n * s.cout + f) * ov + o)] = bias[static_cast<size_t>(f)];
  for (int64_t n = 0; n < s.n; ++n)
    each_tap(t, s.in, [&](int64_t f, int64_t ci, int64_t o, int64_t i, int64_t k) {
      y[static_cast<size_t>((n * s.cout + f) * ov + o)] +=
          x[static_cast<size_t>((n * s.cin + ci) * iv + i)] * w[static_cast<size_t>((f * cin_g + ci % cin_g) * kv + k)];
    });
  return y;
}

std::vector<int64_t> ints3(const Dims3& d) { return {d.begin(), d.end()}; }

std::vector<int64_t> pads_of(const Conv3& s) {
  return {s.pad_begin[0], s.pad_begin[1], s.pad_begin[2], s.pad_end[0], s.pad_end[1], s.pad_end[2]};
}

// Runs op over x with W an initializer or a graph input, and a bias.
std::vector<float> run_3d(const std::string& op, const Conv3& s, const std::vector<int64_t>& wd, const Vec& x,
                          const Vec& w, const Vec& bias, bool filter_is_input, std::vector<int64_t>* out_dims) {
  std::vector<int64_t> xd = {s.n, s.cin, s.in[0], s.in[1], s.in[2]};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, std::vector<DimSpec>(xd.begin(), xd.end()))};
  if (filter_is_input) g.inputs.push_back(value_info("w", kFloat, std::vector<DimSpec>(wd.begin(), wd.end())));
  else g.initializers.push_back(tensor_f32("w", wd, w));
  g.initializers.push_back(tensor_f32("b", {s.cout}, bias));
  g.outputs = {value_info("y", kFloat, {})};
  std::vector<Msg> attrs = {attr_ints("strides", ints3(s.stride)), attr_ints("dilations", ints3(s.dilation)),
                            attr_ints("pads", pads_of(s)), attr_int("group", s.groups)};
  if (op == "ConvTranspose") attrs.push_back(attr_ints("output_padding", ints3(s.output_padding)));
  g.nodes = {node(op, {"x", "w", "b"}, {"y"}, attrs)};
  std::vector<Ref<Tensor>> ins = {f32_tensor(xd, x)};
  if (filter_is_input) ins.push_back(f32_tensor(wd, w));
  auto out = run_model(model(g, 22), ins);
  *out_dims = out[0]->dims();
  return floats_of(out[0]);
}

const Conv3 kTransposed{2, 4, 6, 2, {3, 2, 4}, {3, 2, 3}, {2, 1, 2}, {1, 2, 1}, {1, 0, 1}, {0, 1, 2}, {1, 0, 1}};

void check_transpose(bool filter_is_input) {
  const Conv3& s = kTransposed;
  std::vector<int64_t> wd = {s.cin, s.cout / s.groups, s.kernel[0], s.kernel[1], s.kernel[2]};
  Vec x = ramp(static_cast<size_t>(s.n * s.cin * volume(s.in)), 0.1f, -0.7f);
  Vec w = ramp(static_cast<size_t>(s.cin * (s.cout / s.groups) * volume(s.kernel)), 0.06f, -0.45f);
  Vec bias = ramp(static_cast<size_t>(s.cout), 0.2f, -0.3f);
  std::vector<int64_t> dims;
  Vec got = run_3d("ConvTranspose", s, wd, x, w, bias, filter_is_input, &dims);
  Dims3 o = transpose_out(s);
  EXPECT_EQ(dims, (std::vector<int64_t>{s.n, s.cout, o[0], o[1], o[2]}));
  expect_near(got, transpose_reference(s, x, w, bias));
}

TEST(OnnxConv3d, TransposedStridedDilatedPaddedGroupedWithKnownFilter) { check_transpose(false); }

TEST(OnnxConv3d, TransposedWithAFilterComputedAtRunTime) { check_transpose(true); }

TEST(OnnxConv3d, ConvStridedDilatedPaddedGrouped) {
  const Conv3 s{2, 4, 6, 2, {6, 5, 7}, {3, 2, 3}, {2, 1, 2}, {1, 2, 1}, {1, 0, 1}, {2, 1, 0}, {0, 0, 0}};
  std::vector<int64_t> wd = {s.cout, s.cin / s.groups, s.kernel[0], s.kernel[1], s.kernel[2]};
  Vec x = ramp(static_cast<size_t>(s.n * s.cin * volume(s.in)), 0.1f, -0.7f);
  Vec w = ramp(static_cast<size_t>(s.cout * (s.cin / s.groups) * volume(s.kernel)), 0.06f, -0.45f);
  Vec bias = ramp(static_cast<size_t>(s.cout), 0.2f, -0.3f);
  for (bool filter_is_input : {false, true}) {
    std::vector<int64_t> dims;
    Vec got = run_3d("Conv", s, wd, x, w, bias, filter_is_input, &dims);
    Dims3 o = conv_out(s);
    EXPECT_EQ(dims, (std::vector<int64_t>{s.n, s.cout, o[0], o[1], o[2]}));
    expect_near(got, conv_reference(s, x, w, bias));
  }
}

TEST(OnnxConv3d, ASymbolicDepthIsUnimplementedNamingTheNode) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{1}, std::string("depth"), int64_t{4}, int64_t{4}})};
  g.initializers = {tensor_f32("w", {1, 1, 2, 2, 2}, Vec(8, 1.f))};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Conv", {"x", "w"}, {"y"}, {}, "vol")};
  expect_unimplemented_naming(model(g, 22), "node 0 'vol' (Conv)", "input depth");
}

TEST(OnnxConv3d, AFilterDeeperThanThePaddedInputIsInvalid) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{4}, int64_t{4}})};
  g.initializers = {tensor_f32("w", {1, 1, 3, 1, 1}, Vec(3, 1.f))};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Conv", {"x", "w"}, {"y"}, {}, "deep")};
  Error e = import_error(model(g, 22));
  EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
  EXPECT_NE(std::string(e.what()).find("node 0 'deep' (Conv)"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace maxc::onnx::testing

// Signal operators: HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix, DFT and
// STFT. We have no FFT kernel, so a transform is a matmul with a constant cos/sin matrix
// built here, which needs the signal length, the axis and dft_length at import time; the
// windows and the mel matrix are computed here outright, so their sizes must be known too.
// Complex values are ONNX's [..., 2] pairs (real, imaginary); a real signal is [..., 1].
#include <algorithm>
#include <cmath>
#include <numbers>

#include "onnx/dtypes.h"
#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

// The most matrix elements a transform may build (a 4096-point DFT of complex input).
constexpr int64_t kMaxDftMatrix = int64_t{1} << 26;

bool is_buildable(DType dt) { return dt == DType::kFloat32 || dt == DType::kFloat64; }

// A constant of `dt` computed here: float64/float32 directly, other types through float32.
ValueId constant_of(NodeContext& c, DType dt, std::vector<int64_t> shape, const std::vector<double>& v) {
  if (is_buildable(dt)) return c.constant(KnownValue::from_doubles(dt, std::move(shape), v));
  return c.cast(c.constant(KnownValue::from_doubles(DType::kFloat32, std::move(shape), v)), dt);
}

// As constant_of, but also known to later importers (a window feeding STFT) when it can be.
void set_computed_output(NodeContext& c, DType dt, std::vector<int64_t> shape, const std::vector<double>& v) {
  if (is_buildable(dt)) return c.set_known_output(0, KnownValue::from_doubles(dt, std::move(shape), v));
  c.set_output(0, constant_of(c, dt, std::move(shape), v));
}

DType output_datatype(NodeContext& c) {
  return to_dtype(static_cast<int32_t>(c.attr_int("output_datatype", 1)), c.label() + " attribute 'output_datatype'");
}

int64_t known_int(NodeContext& c, size_t i, std::string_view what) {
  double v = c.known_scalar(i, what);
  // Also refuses NaN and values past int64, which have no integer to convert to.
  if (v != std::floor(v) || !(std::fabs(v) < 0x1p63)) c.invalid("input ", i, " '", what, "' must be an integer, got ", v);
  return static_cast<int64_t>(v);
}

// ---- windows ----

enum class Window { kHann, kHamming, kBlackman };

// w[n] = a0 - a1·cos(2πn/N') + a2·cos(4πn/N'), N' = N (periodic) or N - 1 (symmetric).
std::vector<double> window_values(Window kind, int64_t size, bool periodic) {
  double a0 = 0.5, a1 = 0.5, a2 = 0;
  if (kind == Window::kHamming) a0 = 25.0 / 46.0, a1 = 1 - a0;
  if (kind == Window::kBlackman) a0 = 0.42, a1 = 0.5, a2 = 0.08;
  double span = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) {
    double t = 2 * std::numbers::pi * static_cast<double>(n) / span;
    w[static_cast<size_t>(n)] = a0 - a1 * std::cos(t) + a2 * std::cos(2 * t);
  }
  return w;
}

void import_window(NodeContext& c, Window kind) {
  int64_t size = known_int(c, 0, "size");
  if (size < 0) c.invalid("size must be >= 0, got ", size);
  if (size > kMaxKnownInts * 64) c.unsupported("a window of ", size, " elements (at most ", kMaxKnownInts * 64, ")");
  bool periodic = c.attr_int("periodic", 1) != 0;
  set_computed_output(c, output_datatype(c), {size}, window_values(kind, size, periodic));
}

// ---- MelWeightMatrix ----

// Triangular filters between mel-spaced bin edges, as ONNX's reference defines them
// (num_mel_bins + 2 edges, floored to spectrogram bins).
void import_mel_weight_matrix(NodeContext& c) {
  int64_t mels = known_int(c, 0, "num_mel_bins"), dft = known_int(c, 1, "dft_length");
  double rate = c.known_scalar(2, "sample_rate"), lo = c.known_scalar(3, "lower_edge_hertz"),
         hi = c.known_scalar(4, "upper_edge_hertz");
  if (mels <= 0 || dft <= 0 || rate <= 0) c.invalid("num_mel_bins, dft_length and sample_rate must be positive");
  int64_t bins = dft / 2 + 1;
  bounded_elements(c, {bins, mels}, "the mel matrix (bins x mels)", kMaxDftMatrix);
  auto to_mel = [](double hz) { return 2595 * std::log1p(hz / 700) / std::log(10.0); };
  double lo_mel = to_mel(lo), step = (to_mel(hi) - lo_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    double hz = 700 * std::expm1((static_cast<double>(i) * step + lo_mel) / 2595 * std::log(10.0));
    const double bin = std::floor(static_cast<double>(dft + 1) * hz / rate);
    if (!(std::fabs(bin) < 0x1p62)) c.invalid("the mel edge ", i, " falls at the spectrogram bin ", bin);
    edge[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
  }
  std::vector<double> m(static_cast<size_t>(bins * mels), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& {
    if (j < 0 || j >= bins) c.invalid("the mel edges fall outside the ", bins, " spectrogram bins");
    return m[static_cast<size_t>(j * mels + i)];
  };
  for (int64_t i = 0; i < mels; ++i) {
    int64_t left = edge[static_cast<size_t>(i)], center = edge[static_cast<size_t>(i + 1)],
            right = edge[static_cast<size_t>(i + 2)];
    if (center == left) at(center, i) = 1;
    for (int64_t j = left; center > left && j <= center; ++j)
      at(j, i) = static_cast<double>(j - left) / static_cast<double>(center - left);
    for (int64_t j = center; j < right; ++j) at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  set_computed_output(c, output_datatype(c), {bins, mels}, m);
}

// ---- the transform as a matmul ----

// x [.., K, C] (K samples of the signal, C = 1 or 2) -> [.., M, O]: M bins of an n-point
// transform, O = 2 (complex) or 1 (the real output of an inverse one-sided transform).
struct Transform {
  int64_t n = 0, rows = 0, channels = 1, bins = 0, outs = 2;
  bool inverse = false;
  const std::vector<double>* window = nullptr;  // folded into the rows when known
};

// The [K*C, M*O] matrix; rows (k, c) and columns (m, o) follow the tensor's memory order.
// Forward: X[m] = Σ z[k]·e^{-iθ}; inverse: x[m] = Σ Z[k]·e^{+iθ} / n, θ = 2πmk/n. The inverse
// one-sided transform counts each bin but 0 and n/2 twice (the Hermitian half).
std::vector<double> transform_matrix(const Transform& t) {
  std::vector<double> a(static_cast<size_t>(t.rows * t.channels * t.bins * t.outs));
  double sign = t.inverse ? 1.0 : -1.0, scale = t.inverse ? 1.0 / static_cast<double>(t.n) : 1.0;
  bool hermitian = t.inverse && t.outs == 1;
  for (int64_t k = 0; k < t.rows; ++k) {
    double w = scale * (t.window ? (*t.window)[static_cast<size_t>(k)] : 1.0);
    if (hermitian && k != 0 && 2 * k != t.n) w *= 2;
    for (int64_t m = 0; m < t.bins; ++m) {
      // θ reduced mod 2π in integers first, so large m·k keep full precision.
      double theta = 2 * std::numbers::pi * static_cast<double>((m * k) % t.n) / static_cast<double>(t.n);
      double cs = std::cos(theta) * w, sn = sign * std::sin(theta) * w;
      // (re + i·im)(cs + i·sn) = (re·cs - im·sn) + i(re·sn + im·cs)
      double coef[2][2] = {{cs, sn}, {-sn, cs}};  // [input part][output part]
      for (int64_t ci = 0; ci < t.channels; ++ci)
        for (int64_t o = 0; o < t.outs; ++o)
          a[static_cast<size_t>(((k * t.channels + ci) * t.bins + m) * t.outs + o)] = coef[ci][o];
    }
  }
  return a;
}

ValueId apply_transform(NodeContext& c, ValueId x, const Transform& t) {
  bounded_elements(c, {t.rows, t.channels, t.bins, t.outs}, str_cat("the ", t.n, "-point transform's matrix"),
                   kMaxDftMatrix);
  std::vector<Dim> d = c.type_of(x).dims;
  std::vector<Dim> flat(d.begin(), d.end() - 2);
  flat.push_back(Dim(t.rows * t.channels));
  DType dt = c.type_of(x).dtype;
  ValueId a = constant_of(c, dt, {t.rows * t.channels, t.bins * t.outs}, transform_matrix(t));
  ValueId y = c.op("matmul", {c.reshape(x, flat), a});
  std::vector<Dim> out(d.begin(), d.end() - 2);
  out.push_back(Dim(t.bins));
  out.push_back(Dim(t.outs));
  return c.reshape(y, out);
}

int64_t static_dim(NodeContext& c, const Dim& d, std::string_view what) {
  if (!d.is_static()) c.unsupported(what, " is the symbolic dim ", d, "; it must be static");
  return d.static_value();
}

// ---- DFT ----

int64_t dft_axis(NodeContext& c, int64_t r) {
  int64_t a = 1;
  if (c.opset() >= 20) {
    if (c.has_input(2)) {
      std::vector<int64_t> v = c.known_ints(2, "axis");
      if (v.size() != 1) c.invalid("axis must be a scalar");
      a = v[0];
    } else {
      a = -2;
    }
  } else {
    a = c.attr_int("axis", 1);
  }
  if (a < 0) a += r;
  if (a < 0 || a > r - 2) c.invalid("axis ", a, " must name a signal axis (not the last, complex one) of rank ", r);
  return a;
}

// The permutation that moves axis `a` just before the last one (its own inverse's pattern).
std::vector<int64_t> axis_to_end(int64_t a, int64_t r) {
  std::vector<int64_t> p;
  for (int64_t i = 0; i < r - 1; ++i)
    if (i != a) p.push_back(i);
  p.push_back(a);
  p.push_back(r - 1);
  return p;
}

std::vector<int64_t> inverse_of(const std::vector<int64_t>& p) {
  std::vector<int64_t> q(p.size());
  for (size_t i = 0; i < p.size(); ++i) q[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return q;
}

void import_dft(NodeContext& c) {
  int64_t r = c.rank(0);
  if (r < 2) c.invalid("input must have rank >= 2, got ", r);
  const std::vector<Dim>& d = c.type(0).dims;
  Transform t;
  t.channels = static_dim(c, d.back(), "the last (complex) dim");
  if (t.channels != 1 && t.channels != 2) c.invalid("the last dim must be 1 (real) or 2 (complex), got ", t.channels);
  int64_t a = dft_axis(c, r);
  int64_t len = static_dim(c, d[static_cast<size_t>(a)], "the signal length");
  t.inverse = c.attr_int("inverse", 0) != 0;
  bool onesided = c.attr_int("onesided", 0) != 0;
  t.n = c.has_input(1) ? known_int(c, 1, "dft_length") : (t.inverse && onesided ? 2 * (len - 1) : len);
  if (t.n <= 0) c.invalid("dft_length must be positive, got ", t.n);
  // np.fft semantics: the signal is cut or zero-padded to n (to n/2 + 1 bins one-sided inverse).
  t.rows = std::min(len, t.inverse && onesided ? t.n / 2 + 1 : t.n);
  t.bins = !t.inverse && onesided ? t.n / 2 + 1 : t.n;
  t.outs = t.inverse && onesided ? 1 : 2;
  std::vector<int64_t> perm = axis_to_end(a, r);
  ValueId x = c.op("permute", {c.input(0)}, {{"dims", perm}});
  if (t.rows < len) {
    std::vector<Dim> starts(static_cast<size_t>(r - 1), Dim(0)), stops;
    for (int64_t i = 0; i < r - 1; ++i) stops.push_back(c.type_of(x).dims[static_cast<size_t>(i)]);
    stops.back() = Dim(t.rows);
    x = c.op("slice_tensor", {x}, {{"starts", starts}, {"stops", stops}});
  }
  ValueId y = apply_transform(c, x, t);
  c.set_output(0, c.op("permute", {y}, {{"dims", inverse_of(perm)}}));
}

// ---- STFT ----

// Frames of frame_length samples every frame_step, gathered by a constant index table,
// then one windowed DFT per frame: [B, L, C] -> [B, frames, bins, 2].
void import_stft(NodeContext& c) {
  if (c.rank(0) != 3) c.invalid("signal must have rank 3 [batch, length, 1 or 2], got ", c.rank(0));
  const std::vector<Dim>& d = c.type(0).dims;
  int64_t len = static_dim(c, d[1], "the signal length");
  int64_t step = known_int(c, 1, "frame_step");
  std::optional<std::vector<double>> window;
  if (c.has_input(2)) {
    if (const KnownValue* k = c.known(2)) window = k->doubles();
    if (c.rank(2) != 1) c.invalid("window must have rank 1, got ", c.rank(2));
  }
  int64_t frame = c.has_input(3) ? known_int(c, 3, "frame_length")
                  : c.has_input(2) ? static_dim(c, c.type(2).dims[0], "the window length")
                                   : 0;
  if (frame <= 0) c.invalid("frame_length (or a window) is required and must be positive");
  if (c.has_input(2) && c.type(2).dims[0] != Dim(frame))
    c.invalid("the window has ", c.type(2).dims[0], " elements but frame_length is ", frame);
  if (step <= 0 || len < frame) c.invalid("frame_step must be positive and the signal at least one frame long");
  int64_t frames = 1 + (len - frame) / step;
  bounded_elements(c, {frames, frame}, "the frame index table (frames x frame_length)", kMaxDftMatrix);
  std::vector<double> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t k = 0; k < frame; ++k) idx.push_back(static_cast<double>(f * step + k));
  ValueId table = c.constant(KnownValue::from_doubles(DType::kInt64, {frames, frame}, idx));
  ValueId x = c.op("gather", {c.input(0), table}, {{"axis", int64_t{1}}});  // [B, frames, frame, C]
  if (c.has_input(2) && !window) {
    DType dt = c.type_of(x).dtype;
    x = c.op("mul", {x, c.reshape(c.cast(c.input(2), dt), {Dim(frame), Dim(1)})});
  }
  Transform t;
  t.n = t.rows = frame;
  t.channels = static_dim(c, d[2], "the last (complex) dim");
  if (t.channels != 1 && t.channels != 2) c.invalid("the last dim must be 1 (real) or 2 (complex), got ", t.channels);
  t.bins = c.attr_int("onesided", 1) != 0 ? frame / 2 + 1 : frame;
  t.window = window ? &*window : nullptr;
  c.set_output(0, apply_transform(c, x, t));
}

}  // namespace

void register_signal_importers(ImportTable& t) {
  t["HannWindow"] = [](NodeContext& c) { import_window(c, Window::kHann); };
  t["HammingWindow"] = [](NodeContext& c) { import_window(c, Window::kHamming); };
  t["BlackmanWindow"] = [](NodeContext& c) { import_window(c, Window::kBlackman); };
  t["MelWeightMatrix"] = import_mel_weight_matrix;
  t["DFT"] = import_dft;
  t["STFT"] = import_stft;
}

}  // namespace maxc::onnx

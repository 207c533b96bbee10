// What a fused matmul does to its result before storing it (the "fused_matmul" node of
// compiler/fuse_matmul.cc): add a bias broadcast over the last dim, then an activation.
// oneDNN runs it as post-ops; our own kernels run it through apply_epilogue on each row.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace maxc::cpu {

enum class Activation { kNone, kRelu, kGelu, kGeluTanh, kSigmoid, kTanh, kSilu };

// The names the fused node's `activation` attribute uses; nullopt for others.
std::optional<Activation> activation_from_name(std::string_view name);
const char* activation_name(Activation a);

struct MatmulEpilogue {
  Activation activation = Activation::kNone;
  bool has_bias = false;
  // Elements of the bias: N (one per output column) or 1 (one for all).
  int64_t bias_len = 0;
};

template <typename T>
T activate(T x, Activation a) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (a) {
      case Activation::kNone: return x;
      case Activation::kRelu: return x > T(0) ? x : T(0);
      case Activation::kGelu: return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
      case Activation::kGeluTanh: {
        const T inner = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
        return T(0.5) * x * (T(1) + std::tanh(inner));
      }
      case Activation::kSigmoid: return T(1) / (T(1) + std::exp(-x));
      case Activation::kTanh: return std::tanh(x);
      case Activation::kSilu: return x / (T(1) + std::exp(-x));
    }
    return x;
  } else {
    // Integers only know relu (the lowering rejects the others for them).
    return a == Activation::kRelu && x < T(0) ? T(0) : x;
  }
}

// row[j] = act(row[j] + bias[j or 0]) for one output row of n elements.
template <typename T>
void apply_epilogue(T* row, int64_t n, const T* bias, const MatmulEpilogue& e) {
  if (e.has_bias) {
    if (e.bias_len == 1) {
      for (int64_t j = 0; j < n; ++j) row[j] = static_cast<T>(row[j] + bias[0]);
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] = static_cast<T>(row[j] + bias[j]);
    }
  }
  if (e.activation != Activation::kNone)
    for (int64_t j = 0; j < n; ++j) row[j] = activate(row[j], e.activation);
}

// rows × n float32 results: out[r][j] = max?(out[r][j] + bias[j or 0], 0), split over the
// team. The epilogue oneDNN's gemm-based matmul runs as post-ops is slower than this pass
// over a result that is still in cache (measured 7-25% on MLP layers), so float32 bias and
// relu epilogues run here; transcendental activations stay oneDNN post-ops.
void bias_relu_rows(float* out, int64_t rows, int64_t n, const float* bias, int64_t bias_len, bool relu);

}  // namespace maxc::cpu

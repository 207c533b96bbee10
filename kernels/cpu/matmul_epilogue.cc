#include "kernels/cpu/matmul_epilogue.h"

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

struct ActivationName {
  Activation activation;
  const char* name;
};

constexpr ActivationName kNames[] = {
    {Activation::kNone, "none"},       {Activation::kRelu, "relu"},   {Activation::kGelu, "gelu"},
    {Activation::kGeluTanh, "gelu_tanh"}, {Activation::kSigmoid, "sigmoid"}, {Activation::kTanh, "tanh"},
    {Activation::kSilu, "silu"},
};

}  // namespace

std::optional<Activation> activation_from_name(std::string_view name) {
  for (const auto& entry : kNames)
    if (name == entry.name) return entry.activation;
  return std::nullopt;
}

const char* activation_name(Activation a) {
  for (const auto& entry : kNames)
    if (entry.activation == a) return entry.name;
  return "unknown";
}

namespace {

// `omp simd`: GCC's -O2 vectorizes no loop of unknown length on its own.
MAXC_SIMD_CLONES void bias_relu_row(float* row, int64_t n, const float* bias, int64_t bias_len, bool relu) {
  if (bias && bias_len == n) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) row[j] += bias[j];
  } else if (bias) {
    const float b = bias[0];
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) row[j] += b;
  }
  if (relu)
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) row[j] = row[j] > 0.f ? row[j] : 0.f;
}

}  // namespace

void bias_relu_rows(float* out, int64_t rows, int64_t n, const float* bias, int64_t bias_len, bool relu) {
  parallel_for(rows, n, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) bias_relu_row(out + r * n, n, bias, bias_len, relu);
  });
}

}  // namespace maxc::cpu

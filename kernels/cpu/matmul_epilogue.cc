#include "kernels/cpu/matmul_epilogue.h"

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

}  // namespace maxc::cpu

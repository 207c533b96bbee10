// What the engine tests share: float32 CPU types and seeded random tensors.
#pragma once

#include <random>
#include <vector>

#include "driver/device.h"
#include "engine/model.h"

namespace maxc::engine_test {

inline TensorType f32(std::vector<Dim> dims) { return TensorType{DType::kFloat32, std::move(dims), DeviceRef::cpu()}; }

// A float32 CPU tensor of uniform values in [lo, hi) from a fixed seed.
inline Ref<Tensor> random_tensor(std::vector<int64_t> dims, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat32, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  auto* p = reinterpret_cast<float*>(t->data());
  for (int64_t i = 0; i < t->num_elements(); ++i) p[i] = u(rng);
  return t;
}

}  // namespace maxc::engine_test

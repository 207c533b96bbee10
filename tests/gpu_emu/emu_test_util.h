// What the emulated kernel tests share: storage types <-> double, seeded data, and
// comparisons with a tolerance fitted to the storage type. A GPU kernel and the CPU kernel
// (or a plain reference) both compute half floats in float and round once when they store,
// so they may differ by a rounding step of the stored type, and by float's accumulated error.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/common/cast.cuh"
#include "kernels/cuda/common/packed.cuh"

namespace maxc::gpu_emu::testing {

namespace g = maxc::gpu;

template <class S>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<S, float>) return DType::kFloat32;
  else if constexpr (std::is_same_v<S, double>) return DType::kFloat64;
  else if constexpr (std::is_same_v<S, g::half>) return DType::kFloat16;
  else if constexpr (std::is_same_v<S, g::bfloat16>) return DType::kBFloat16;
  else if constexpr (std::is_same_v<S, g::bool8>) return DType::kBool;
  else if constexpr (std::is_same_v<S, g::i8>) return DType::kInt8;
  else if constexpr (std::is_same_v<S, g::u8>) return DType::kUInt8;
  else if constexpr (std::is_same_v<S, g::i16>) return DType::kInt16;
  else if constexpr (std::is_same_v<S, g::u16>) return DType::kUInt16;
  else if constexpr (std::is_same_v<S, g::i32>) return DType::kInt32;
  else if constexpr (std::is_same_v<S, g::u32>) return DType::kUInt32;
  else if constexpr (std::is_same_v<S, g::i64>) return DType::kInt64;
  else if constexpr (std::is_same_v<S, g::float8_e4m3fn>) return DType::kFloat8E4M3Fn;
  else if constexpr (std::is_same_v<S, g::float8_e4m3fnuz>) return DType::kFloat8E4M3Fnuz;
  else if constexpr (std::is_same_v<S, g::float8_e5m2>) return DType::kFloat8E5M2;
  else if constexpr (std::is_same_v<S, g::float8_e5m2fnuz>) return DType::kFloat8E5M2Fnuz;
  else if constexpr (std::is_same_v<S, g::float8_e8m0fnu>) return DType::kFloat8E8M0Fnu;
  else if constexpr (std::is_same_v<S, g::float4_e2m1fn>) return DType::kFloat4E2M1Fn;
  else if constexpr (std::is_same_v<S, g::packed_uint2>) return DType::kUInt2;
  else if constexpr (std::is_same_v<S, g::packed_int2>) return DType::kInt2;
  else if constexpr (std::is_same_v<S, g::packed_uint4>) return DType::kUInt4;
  else if constexpr (std::is_same_v<S, g::packed_int4>) return DType::kInt4;
  else return DType::kUInt64;
}

// A value of storage type S, rounded (or converted: saturating, NaN to 0) as the kernels
// store it.
template <class S>
S from_double(double v) {
  return g::store_as<S>(v);
}

template <class S>
double to_double(S s) {
  return g::load_as<double>(s);
}

template <class S>
std::vector<S> from_doubles(const std::vector<double>& values) {
  std::vector<S> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(from_double<S>(v));
  return out;
}

template <class S>
std::vector<double> to_doubles(const std::vector<S>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (const S& s : values) out.push_back(to_double(s));
  return out;
}

// n values uniform in [lo, hi), already rounded to S so every reference sees the same input.
template <class S>
std::vector<S> random_values(std::size_t n, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<S> out(n);
  for (S& s : out) {
    const double v = dist(rng);
    s = from_double<S>(std::is_integral_v<S> ? std::floor(v) : v);
  }
  return out;
}

struct Tolerance {
  double abs, rel;
};

// One rounding step of S relative to the value, a few float ulps for the arithmetic before it.
template <class S>
constexpr Tolerance tolerance_for() {
  if constexpr (std::is_same_v<S, double>) return {1e-13, 1e-12};
  else if constexpr (std::is_same_v<S, float>) return {1e-6, 1e-5};
  else if constexpr (std::is_same_v<S, g::half>) return {1e-4, 1.0 / 1024};
  else if constexpr (std::is_same_v<S, g::bfloat16>) return {1e-3, 1.0 / 128};
  else return {0, 0};  // integers: exact
}

// Element-wise comparison; NaN must meet NaN. Reports the first few mismatches only.
inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, Tolerance tol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (std::size_t i = 0; i < got.size() && reported < 5; ++i) {
    const double g = got[i], w = want[i];
    const bool ok = std::isnan(w) ? std::isnan(g)
                    : std::isinf(w) ? g == w
                                    : std::fabs(g - w) <= tol.abs + tol.rel * std::fabs(w);
    if (!ok) {
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", expected " << w;
      ++reported;
    }
  }
}

template <class S>
void expect_close(const std::vector<S>& got, const std::vector<double>& want, const std::string& what,
                  Tolerance tol = tolerance_for<S>()) {
  expect_close(to_doubles(got), want, tol, what);
}

// Same bits: for kernels that only move values (copies, gathers, casts).
template <class S>
void expect_same_bits(const std::vector<S>& got, const std::vector<S>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(S)), 0) << what << ": element " << i;
}

}  // namespace maxc::gpu_emu::testing

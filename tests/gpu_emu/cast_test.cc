// cast.cu under the emulator: every pair of the catalog's cast dtypes, over values that
// probe rounding, saturation, wrapping, NaN, infinities and subnormals, must give the CPU's
// bits (kernels/cpu/cast.h defines what a cast means on either device; for float8,
// kernels/cpu/cast_minifloat.h, with and without saturation).
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/cast.cu"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "gpu_emu/cpu_reference.h"
#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/cast_minifloat.h"

namespace maxc::gpu_emu::testing {
namespace {

const std::vector<double> kProbes = {
    0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 127.7, -128.9, 255.5, 256.0, 300.0, -300.0, 32767.5, -32769.0,
    65504.0, 65520.0, 1e5, -1e5, 3e9, -3e9, 9.3e18, -9.3e18, 1.9e19, 1e30, -1e30, 3.5e38, 1e300, 1e-8, 6e-8, -3e-5,
    1e-40, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
    std::numeric_limits<double>::quiet_NaN(), 1.0009765625, 1.00048828125, 0.1, 12345.678};

g::Shape row(int64_t n) {
  g::Shape s{};
  s.numel = n;
  s.rank = 1;
  s.dims[0] = n;
  return s;
}

template <class In, class Out>
void check_cast() {
  // The probes stored as In by the CPU, then read back in reverse through a stride of -1.
  std::vector<In> x;
  for (double v : kProbes) x.push_back(cpu_store<In>(v));
  const int64_t n = static_cast<int64_t>(x.size());
  g::Layout reversed{};
  reversed.strides[0] = -1;
  std::vector<Out> y(n), want(n);
  emulate_launch(2, 32, g::cast<In, Out>, x.data() + n - 1, reversed, y.data(), row(n), 1);
  for (int64_t i = 0; i < n; ++i) want[i] = cpu_store<Out>(cpu_load<CpuCompute<In>>(x[n - 1 - i]));
  expect_same_bits(y, want, std::string("cast ") + dtype_name(dtype_of<In>()) + " -> " + dtype_name(dtype_of<Out>()));
}

template <class In, class... Outs>
void check_from() {
  (
      [] {
        if constexpr (!std::is_same_v<In, Outs>) check_cast<In, Outs>();
      }(),
      ...);
}

template <class... Types>
void check_all_pairs() {
  (check_from<Types, Types...>(), ...);
}

TEST(EmulatedCast, EveryCatalogPairMatchesTheCpuBits) {
  check_all_pairs<g::bool8, g::u8, g::i8, g::i32, g::i64, g::half, g::bfloat16, float, double>();
}

// ---- float8 ---------------------------------------------------------------------------------

// Around the float8 ranges: the largest finite values (448, 240, 57344, ...) and the midpoints
// past them, the subnormal steps and their halves, and a double just above a tie of e4m3's
// 1.0 and 1.125, which rounds up from double but ties to even once rounded to float.
const std::vector<double> kFloat8Probes = {
    448.0, 464.0, 464.001, 480.0, -500.0, 240.0, 247.9, 248.0, 256.0, 57344.0, 61439.0, 61440.0, 1e6,
    0x1p-9, 0x1p-10, 0x1.8p-10, 0x1p-11, 0x1p-16, 0x1p-17, 0x1.8p-17, 0x1p-18, -0x1p-19, 0x1p-20, 1.0625,
    1.0625 + 1e-12, 1.1875, -3.0e-3, 0.3};

// All 256 codes of a float8 S (float8_e8m0fnu too); the probes (both lists) stored as S
// otherwise.
template <class S>
std::vector<S> cast_inputs() {
  std::vector<S> x;
  if constexpr (g::Float8Format<S>::value || std::is_same_v<S, g::float8_e8m0fnu>) {
    for (int c = 0; c < 256; ++c) x.push_back(S{static_cast<g::u8>(c)});
  } else {
    for (const auto* probes : {&kProbes, &kFloat8Probes})
      for (double v : *probes) x.push_back(cpu_store<S>(v));
  }
  return x;
}

// The emulated cast against the CPU's cast_minifloat, over x read in reverse (stride -1).
template <class In, class Out>
void check_float8_cast(bool saturate) {
  const std::vector<In> x = cast_inputs<In>();
  const int64_t n = static_cast<int64_t>(x.size());
  g::Layout reversed{};
  reversed.strides[0] = -1;
  std::vector<Out> y(n), want(n);
  emulate_launch(2, 32, g::cast<In, Out>, x.data() + n - 1, reversed, y.data(), row(n), saturate ? 1 : 0);
  const std::vector<In> x_reversed(x.rbegin(), x.rend());
  cpu::cast_minifloat(dtype_of<In>(), dtype_of<Out>(), x_reversed.data(), want.data(), n, saturate);
  expect_same_bits(y, want,
                   std::string("cast ") + dtype_name(dtype_of<In>()) + " -> " + dtype_name(dtype_of<Out>()) +
                       (saturate ? "" : " (saturate=false)"));
}

// F8 to and from each of Others, and to a float8 of each exponent width.
template <class F8, class... Others>
void check_float8_with() {
  for (bool saturate : {true, false}) {
    (check_float8_cast<Others, F8>(saturate), ...);
    (check_float8_cast<F8, Others>(saturate), ...);
    if constexpr (!std::is_same_v<F8, g::float8_e4m3fn>) check_float8_cast<F8, g::float8_e4m3fn>(saturate);
    if constexpr (!std::is_same_v<F8, g::float8_e5m2fnuz>) check_float8_cast<F8, g::float8_e5m2fnuz>(saturate);
  }
}

TEST(EmulatedCast, Float8ToAndFromEveryCastDtypeMatchesTheCpuBits) {
  check_float8_with<g::float8_e4m3fn, g::bool8, g::u8, g::i8, g::i32, g::i64, g::half, g::bfloat16, float, double>();
  check_float8_with<g::float8_e4m3fnuz, g::bool8, g::u8, g::i8, g::i32, g::i64, g::half, g::bfloat16, float, double>();
  check_float8_with<g::float8_e5m2, g::bool8, g::u8, g::i8, g::i32, g::i64, g::half, g::bfloat16, float, double>();
  check_float8_with<g::float8_e5m2fnuz, g::bool8, g::u8, g::i8, g::i32, g::i64, g::half, g::bfloat16, float, double>();
  check_float8_with<g::float8_e8m0fnu, g::bool8, g::u8, g::i8, g::i32, g::i64, g::half, g::bfloat16, float, double>();
  for (bool saturate : {true, false}) check_float8_cast<g::float8_e5m2, g::float8_e8m0fnu>(saturate);
}

}  // namespace
}  // namespace maxc::gpu_emu::testing

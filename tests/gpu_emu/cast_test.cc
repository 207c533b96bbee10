// cast.cu under the emulator: every pair of the catalog's cast dtypes, over values that
// probe rounding, saturation, wrapping, NaN, infinities and subnormals, must give the CPU's
// bits (kernels/cpu/cast.h defines what a cast means on either device).
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/cast.cu"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "gpu_emu/cpu_reference.h"
#include "gpu_emu/emu_test_util.h"

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
  emulate_launch(2, 32, g::cast<In, Out>, x.data() + n - 1, reversed, y.data(), row(n));
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

}  // namespace
}  // namespace maxc::gpu_emu::testing

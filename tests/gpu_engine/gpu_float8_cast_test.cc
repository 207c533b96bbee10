// Casts to and from float8 on the GPU engine (engine/lower_gpu/float8_cast.cc) on the emulated
// GPU (tests/emulated_gpu): each cast node is one launch of cast.cu's kernel, run from its real
// source, and the engine's bytes are the CPU engine's for the same graph, saturating or not.
// float4 is gpu_packed_cast_test.cc's.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "gpu_engine/engine_on_emulated.h"

namespace maxc::testing {
namespace {

// Values that round, tie, saturate or overflow in every float8 format, and the specials.
std::vector<float> float8_probes() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.f,     -0.f,    1.0625f, 1.1875f, 448.f,      464.f,    480.f,      -500.f,
                          240.f,   248.f,   57344.f, 61440.f, 1e6f,       0x1p-9f,  0x1.8p-10f, 0x1p-17f,
                          0x1.8p-17f, -0x1p-20f, inf, -inf, std::numeric_limits<float>::quiet_NaN()};
  const std::vector<float> r = ramp(43, 3.7f, -11.f);
  v.insert(v.end(), r.begin(), r.end());
  return v;
}

class GpuFloat8Cast : public EngineOnEmulatedGpu {
 protected:
  // One cast node on both engines: one launch of the cast kernel, the same bytes.
  void expect_cast(DType in, DType out, bool saturate, const std::vector<int64_t>& dims,
                   const std::vector<uint8_t>& x) {
    const std::string what = std::string(dtype_name(in)) + " -> " + dtype_name(out) + (saturate ? "" : " unsaturated");
    expect_one_cast_launch(in, out, saturate, dims, x, "gpu__cast_", what);
  }

  // float32 [2, 32] to float8, with and without saturation.
  void expect_float32_to(DType dtype) {
    for (bool saturate : {true, false})
      expect_cast(DType::kFloat32, dtype, saturate, {2, 32}, bytes_of(float8_probes()));
  }
};

std::vector<uint8_t> every_code() {
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c) codes[c] = static_cast<uint8_t>(c);
  return codes;
}

TEST_F(GpuFloat8Cast, Float32ToEachFloat8MatchesTheCpuEngine) {
  for (DType d : {DType::kFloat8E4M3Fn, DType::kFloat8E4M3Fnuz, DType::kFloat8E5M2, DType::kFloat8E5M2Fnuz})
    expect_float32_to(d);
}

// Every e5m2 code (infinities and NaNs too) to float16, and every e4m3fnuz code to int32.
TEST_F(GpuFloat8Cast, EveryFloat8CodeReadsAsOnTheCpuEngine) {
  expect_cast(DType::kFloat8E5M2, DType::kFloat16, true, {16, 16}, every_code());
  expect_cast(DType::kFloat8E4M3Fnuz, DType::kInt32, true, {256}, every_code());
}

// float8_e8m0fnu through the same kernel: float32 to it, saturated or not, and every code
// of it to float16.
TEST_F(GpuFloat8Cast, Float8E8M0FnuMatchesTheCpuEngine) {
  expect_float32_to(DType::kFloat8E8M0Fnu);
  expect_cast(DType::kFloat8E8M0Fnu, DType::kFloat16, true, {256}, every_code());
}

}  // namespace
}  // namespace maxc::testing

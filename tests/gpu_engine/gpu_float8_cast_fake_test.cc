// Casts to and from float8 on the GPU engine (engine/lower_gpu/float8_cast.cc) on the fake
// CUDA driver (gpu/fake_cuda.h), with real NVRTC compiles: each cast node is one launch of
// cast.cu whose arguments the hook checks (device memory, a dense flat walk, the saturate
// flag) and then runs through the real kernel source under the host emulator, so the
// engine's bytes are compared with the CPU engine's for the same graph. float4 is
// gpu_packed_cast_fake_test.cc's.
#include "gpu_emu/cuda_emulator.h"  // first: cast.cu must see MAXC_EMULATED
#include "kernels/cuda/cast.cu"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "driver/test_util.h"
#include "gpu_engine/engine_on_fake.h"

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

// What a cast launch was given.
struct CastArgs {
  int64_t numel;
  int32_t dense, saturate;
};

class GpuFloat8CastOnFake : public EngineOnFake {
 protected:
  // Runs every launch as cast<In, Out> under the emulator, on two blocks of 64 threads (the
  // kernel is grid-stride), recording its arguments.
  template <class In, class Out>
  void emulate_cast() {
    fake().on_launch = [this](const std::string& name, void** args) {
      ASSERT_TRUE(named(name, "cast")) << name;
      const auto* x = arg<const In*>(args, 0);
      const auto layout = arg<gpu::Layout>(args, 1);
      auto* y = arg<Out*>(args, 2);
      const auto shape = arg<gpu::Shape>(args, 3);
      const auto saturate = arg<gpu::i32>(args, 4);
      EXPECT_TRUE(in_device_memory(x));
      EXPECT_TRUE(in_device_memory(y));
      launches_.push_back({shape.numel, layout.dense, saturate});
      gpu_emu::emulate_launch(dim3(2), dim3(64), gpu::cast<In, Out>, x, layout, y, shape, saturate);
    };
  }

  // float32 [2, 32] to float8, with and without saturation: one dense launch over the 64
  // elements with the attribute's flag, the CPU engine's bytes.
  template <class F8>
  void expect_float32_to(DType dtype) {
    for (bool saturate : {true, false}) {
      launches_.clear();
      std::vector<uint8_t> gpu, cpu;
      emulate_cast<float, F8>();
      cast_on_both(DType::kFloat32, dtype, saturate, {2, 32}, bytes_of(float8_probes()), &gpu, &cpu);
      const std::string what = std::string(dtype_name(dtype)) + (saturate ? "" : " unsaturated");
      ASSERT_EQ(launches_.size(), 1u) << what;
      EXPECT_EQ(launches_[0].numel, 64) << what;
      EXPECT_EQ(launches_[0].dense, 1) << what;
      EXPECT_EQ(launches_[0].saturate, saturate ? 1 : 0) << what;
      EXPECT_EQ(gpu, cpu) << what;
    }
  }

  std::vector<CastArgs> launches_;
};

TEST_F(GpuFloat8CastOnFake, Float32ToEachFloat8MatchesTheCpuEngine) {
  expect_float32_to<gpu::float8_e4m3fn>(DType::kFloat8E4M3Fn);
  expect_float32_to<gpu::float8_e4m3fnuz>(DType::kFloat8E4M3Fnuz);
  expect_float32_to<gpu::float8_e5m2>(DType::kFloat8E5M2);
  expect_float32_to<gpu::float8_e5m2fnuz>(DType::kFloat8E5M2Fnuz);
}

// Every e5m2 code (infinities and NaNs too) to float16, and every e4m3fnuz code to int32.
TEST_F(GpuFloat8CastOnFake, EveryFloat8CodeReadsAsOnTheCpuEngine) {
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c) codes[c] = static_cast<uint8_t>(c);
  std::vector<uint8_t> gpu, cpu;
  emulate_cast<gpu::float8_e5m2, gpu::half>();
  cast_on_both(DType::kFloat8E5M2, DType::kFloat16, true, {16, 16}, codes, &gpu, &cpu);
  ASSERT_EQ(launches_.size(), 1u);
  EXPECT_EQ(launches_[0].numel, 256);
  EXPECT_EQ(gpu, cpu) << "float8_e5m2 -> float16";
  emulate_cast<gpu::float8_e4m3fnuz, gpu::i32>();
  cast_on_both(DType::kFloat8E4M3Fnuz, DType::kInt32, true, {256}, codes, &gpu, &cpu);
  EXPECT_EQ(gpu, cpu) << "float8_e4m3fnuz -> int32";
}

// float8_e8m0fnu through the same kernel: float32 to it, saturated or not, and every code
// of it to float16.
TEST_F(GpuFloat8CastOnFake, Float8E8M0FnuMatchesTheCpuEngine) {
  expect_float32_to<gpu::float8_e8m0fnu>(DType::kFloat8E8M0Fnu);
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c) codes[c] = static_cast<uint8_t>(c);
  std::vector<uint8_t> gpu, cpu;
  launches_.clear();
  emulate_cast<gpu::float8_e8m0fnu, gpu::half>();
  cast_on_both(DType::kFloat8E8M0Fnu, DType::kFloat16, true, {256}, codes, &gpu, &cpu);
  ASSERT_EQ(launches_.size(), 1u);
  EXPECT_EQ(gpu, cpu) << "float8_e8m0fnu -> float16";
}

}  // namespace
}  // namespace maxc::testing

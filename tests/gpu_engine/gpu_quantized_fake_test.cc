// dequantize and qmatmul on the GPU engine (engine/lower_gpu/quantized.cc) on the fake CUDA
// driver (gpu/fake_cuda.h), with real NVRTC compiles: each node is one launch of quantized.cu
// whose arguments the hook checks (device memory, the folded row counts) and then runs
// through the real kernel source under the host emulator (gpu_emu/cuda_emulator.h), so the
// engine's results are compared with the CPU engine's for the same graph end to end:
// dequantize bit for bit, qmatmul within the error of the CPU's 8-bit activations (and to
// float rounding of x · dequantize(w)ᵀ).
#include "gpu_emu/cuda_emulator.h"  // first: quantized.cu must see MAXC_EMULATED
#include "kernels/cuda/quantized.cu"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "base/quant_encoding.h"
#include "driver/test_util.h"
#include "gpu_emu/qmatmul_check.h"
#include "gpu_engine/engine_on_fake.h"
#include "kernels/cpu/quant_reference.h"

namespace maxc::testing {
namespace {

constexpr QuantEncoding kEncodings[] = {QuantEncoding::kQ4_0, QuantEncoding::kQ4_K, QuantEncoding::kQ5_K,
                                        QuantEncoding::kQ6_K, QuantEncoding::kQ8_0};

// Calls f with the tag struct that the launched instance `name` was made for.
template <typename F>
void with_block_type(const std::string& name, F f) {
  if (named(name, "QuantQ4_0")) return f(gpu::QuantQ4_0{});
  if (named(name, "QuantQ4_K")) return f(gpu::QuantQ4_K{});
  if (named(name, "QuantQ5_K")) return f(gpu::QuantQ5_K{});
  if (named(name, "QuantQ6_K")) return f(gpu::QuantQ6_K{});
  if (named(name, "QuantQ8_0")) return f(gpu::QuantQ8_0{});
  ADD_FAILURE() << "no encoding in the launch of " << name;
}

// What a launch of quantized.cu was given: elements (dequantize), or m, k, n (qmatmul).
struct QuantArgs {
  std::string name;
  int64_t elements = 0, m = 0, k = 0, n = 0;
};

Attrs encoding_attrs(QuantEncoding e) {
  Attrs a;
  a.set("encoding", std::string(quant_encoding_name(e)));
  return a;
}

class GpuQuantizedOnFake : public EngineOnFake {
 protected:
  void SetUp() override {
    EngineOnFake::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // One block of 256 threads runs every launch: the kernels are grid-stride.
    fake().on_launch = [this](const std::string& name, void** args) {
      QuantArgs q{name};
      if (named(name, "dequantize_rows")) {
        const auto* x = arg<const gpu::u8*>(args, 0);
        auto* y = arg<float*>(args, 1);
        q.elements = arg<int64_t>(args, 2);
        EXPECT_TRUE(in_device_memory(x));
        EXPECT_TRUE(in_device_memory(y));
        with_block_type(name, [&](auto tag) {
          gpu_emu::emulate_launch(dim3(1), dim3(256), gpu::dequantize_rows<decltype(tag)>, x, y, q.elements);
        });
      } else {
        ASSERT_TRUE(named(name, "qmatmul_rows")) << name;
        const auto* x = arg<const float*>(args, 0);
        const auto* w = arg<const gpu::u8*>(args, 1);
        auto* y = arg<float*>(args, 2);
        q.m = arg<int64_t>(args, 3), q.k = arg<int64_t>(args, 4), q.n = arg<int64_t>(args, 5);
        EXPECT_TRUE(in_device_memory(x));
        EXPECT_TRUE(in_device_memory(w));
        EXPECT_TRUE(in_device_memory(y));
        with_block_type(name, [&](auto tag) {
          gpu_emu::emulate_launch(dim3(1), dim3(256), gpu::qmatmul_rows<decltype(tag)>, x, w, y, q.m, q.k, q.n);
        });
      }
      launches_.push_back(q);
    };
  }

  std::vector<QuantArgs> launches_;
};

// rows x k floats quantized with the CPU's reference quantizer.
std::vector<uint8_t> quantized(QuantEncoding e, int64_t rows, int64_t k, float step) {
  const std::vector<float> x = ramp(rows * k, step, -1.5f);
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * quant_row_bytes(e, k)));
  cpu::quantize_rows(e, x.data(), rows, k, bytes.data());
  return bytes;
}

int64_t block_elements(QuantEncoding e) { return quant_encoding_info(e)->elements_per_block; }

// dequantize of a [2, 3, row_bytes] input: one launch over all 6 rows' elements, the CPU
// engine's bits.
TEST_F(GpuQuantizedOnFake, DequantizeIsOneLaunchWithTheCpuEnginesBits) {
  for (QuantEncoding e : kEncodings) {
    launches_.clear();
    const int64_t k = 2 * block_elements(e), row_bytes = quant_row_bytes(e, k);
    auto build = [&](DeviceRef device) {
      Graph g("dequantize");
      ValueId x = g.add_input("x", TensorType{DType::kUInt8, {2, 3, row_bytes}, device});
      g.set_outputs({{"y", g.add_op("dequantize", {x}, encoding_attrs(e))[0]}});
      return g;
    };
    std::vector<Ref<Tensor>> gpu, cpu;
    run_both(build, {host_tensor(DType::kUInt8, {2, 3, row_bytes}, quantized(e, 6, k, 0.37f))}, &gpu, &cpu);
    const std::string name = quant_encoding_name(e);
    ASSERT_EQ(launches_.size(), 1u) << name;
    EXPECT_TRUE(named(launches_[0].name, "dequantize_rows")) << launches_[0].name;
    EXPECT_EQ(launches_[0].elements, 6 * k) << name;
    EXPECT_EQ(gpu[0]->dims(), (std::vector<int64_t>{2, 3, k})) << name;
    const std::vector<float> got = values_of<float>(*gpu[0]), want = values_of<float>(*cpu[0]);
    ASSERT_EQ(got.size(), want.size()) << name;
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << name;
  }
}

// qmatmul of x [2, 3, K] and w [5, row_bytes]: one launch with m = 6, the CPU engine's result
// within its activation rounding, and x · dequantize(w)ᵀ to float rounding.
TEST_F(GpuQuantizedOnFake, QmatmulIsOneLaunchMatchingTheCpuEngine) {
  for (QuantEncoding e : kEncodings) {
    launches_.clear();
    const int64_t k = 2 * block_elements(e), n = 5, row_bytes = quant_row_bytes(e, k);
    auto build = [&](DeviceRef device) {
      Graph g("qmatmul");
      ValueId x = g.add_input("x", TensorType{DType::kFloat32, {2, 3, k}, device});
      ValueId w = g.add_input("w", TensorType{DType::kUInt8, {n, row_bytes}, device});
      g.set_outputs({{"y", g.add_op("qmatmul", {x, w}, encoding_attrs(e))[0]}});
      return g;
    };
    const std::vector<float> x = ramp(6 * k, 0.21f, -0.6f);
    const std::vector<uint8_t> w = quantized(e, n, k, 0.43f);
    std::vector<Ref<Tensor>> gpu, cpu;
    run_both(build, {host_tensor({2, 3, k}, x), host_tensor(DType::kUInt8, {n, row_bytes}, w)}, &gpu, &cpu);
    const std::string name = quant_encoding_name(e);
    ASSERT_EQ(launches_.size(), 1u) << name;
    EXPECT_TRUE(named(launches_[0].name, "qmatmul_rows")) << launches_[0].name;
    EXPECT_EQ(launches_[0].m, 6) << name;
    EXPECT_EQ(launches_[0].k, k) << name;
    EXPECT_EQ(launches_[0].n, n) << name;
    EXPECT_EQ(gpu[0]->dims(), (std::vector<int64_t>{2, 3, n})) << name;

    std::vector<float> wd(static_cast<size_t>(n * k));
    cpu::dequantize_rows(e, w.data(), n, k, wd.data());
    const std::vector<float> got = values_of<float>(*gpu[0]), want = values_of<float>(*cpu[0]);
    ASSERT_EQ(got.size(), want.size()) << name;
    expect_qmatmul_close(name, got, want, x, wd, 6, k, n);
  }
}

// What the graph does not reach: an empty batch launches nothing, and dtypes the kernels do
// not take are refused in the engine's words.
TEST_F(GpuQuantizedOnFake, EmptyShapesLaunchNothingAndOtherDtypesAreRefused) {
  const int64_t row_bytes = quant_row_bytes(QuantEncoding::kQ8_0, 64);
  const Attrs q8 = encoding_attrs(QuantEncoding::kQ8_0);
  const Lowered empty = lower("qmatmul", q8, {Shape{DType::kFloat32, {0, 64}}, Shape{DType::kUInt8, {3, row_bytes}}},
                              {Shape{DType::kFloat32, {0, 3}}});
  KernelArgs a{};
  empty.run(a);
  const Lowered no_rows = lower("dequantize", q8, {Shape{DType::kUInt8, {0, row_bytes}}}, {Shape{DType::kFloat32, {0, 64}}});
  no_rows.run(a);
  EXPECT_TRUE(fake().launches.empty());
  EXPECT_MAXC_ERROR(lower("qmatmul", q8, {Shape{DType::kFloat16, {2, 64}}, Shape{DType::kUInt8, {3, row_bytes}}},
                          {Shape{DType::kFloat32, {2, 3}}}),
                    Code::kUnimplemented, "op 'qmatmul': no GPU kernel for lhs float16[2, 64]");
}

}  // namespace
}  // namespace maxc::testing

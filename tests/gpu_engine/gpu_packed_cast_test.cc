// Casts to and from the sub-byte dtypes (float4_e2m1fn, uint2, int2, uint4, int4) on the GPU
// engine (engine/lower_gpu/packed_cast.cc) on the emulated GPU (tests/emulated_gpu): each cast
// node is one launch of cast_packed, run from its real source, and the engine's bytes are the
// CPU engine's for the same graph. The sub-byte dtypes stay out of the fused elementwise
// kernels, and other ops on them are still refused, naming the dtype.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "driver/test_util.h"
#include "gpu_engine/engine_on_emulated.h"

namespace maxc::testing {
namespace {

// Every byte value: each code of a sub-byte dtype in each position of a byte.
std::vector<uint8_t> every_byte() {
  std::vector<uint8_t> b(256);
  for (int c = 0; c < 256; ++c) b[static_cast<size_t>(c)] = static_cast<uint8_t>(c);
  return b;
}

// float4's values and the ties between them, past its range, and integers that wrap.
std::vector<float> probes() {
  std::vector<float> v = {0.f,  -0.f, 0.25f, 0.75f, 1.25f, 1.75f, 2.5f,  3.5f, 5.f,   6.f,  7.f,  -9.f,  15.9f,
                          -16.f, 1e9f, -1e9f, 1e30f, std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  const std::vector<float> r = ramp(14, 1.3f, -4.f);
  v.insert(v.end(), r.begin(), r.end());
  return v;  // 33: an odd count
}

class GpuPackedCast : public EngineOnEmulatedGpu {
 protected:
  // One cast node on both engines: one cast_packed launch, the same bytes.
  void expect_cast(DType in, DType out, bool saturate, const std::vector<int64_t>& dims, const std::vector<uint8_t>& x,
                   int64_t numel) {
    const std::string what = std::string(dtype_name(in)) + " -> " + dtype_name(out);
    ASSERT_EQ(x.size(), dtype_bytes_for(in, static_cast<uint64_t>(numel))) << what << ": the input's bytes";
    expect_one_cast_launch(in, out, saturate, dims, x, "cast_packed", what);
  }
};

// float32 [3, 11] (33 elements: a last byte half or partly used) to each sub-byte dtype.
TEST_F(GpuPackedCast, Float32ToEachSubByteDtypeMatchesTheCpuEngine) {
  const std::vector<uint8_t> x = bytes_of(probes());
  for (DType d : {DType::kFloat4E2M1Fn, DType::kUInt2, DType::kInt2, DType::kUInt4, DType::kInt4})
    expect_cast(DType::kFloat32, d, true, {3, 11}, x, 33);
}

// Every code of each sub-byte dtype, read out to a whole-byte dtype; the saturate flag of the
// node reaches the kernel.
TEST_F(GpuPackedCast, EveryCodeReadsAsOnTheCpuEngine) {
  expect_cast(DType::kFloat4E2M1Fn, DType::kFloat16, true, {16, 32}, every_byte(), 512);
  expect_cast(DType::kFloat4E2M1Fn, DType::kFloat8E4M3Fn, false, {512}, every_byte(), 512);
  expect_cast(DType::kInt2, DType::kInt32, true, {1024}, every_byte(), 1024);
  expect_cast(DType::kUInt4, DType::kBFloat16, true, {512}, every_byte(), 512);
}

// Packed to packed: int4 to float4 and back, uint2 to int4 (odd lengths).
TEST_F(GpuPackedCast, SubByteToSubByteMatchesTheCpuEngine) {
  std::vector<uint8_t> x = every_byte();
  x.resize(128);  // 255 4-bit elements, 511 2-bit ones
  expect_cast(DType::kInt4, DType::kFloat4E2M1Fn, true, {255}, x, 255);
  expect_cast(DType::kFloat4E2M1Fn, DType::kInt4, true, {255}, x, 255);
  expect_cast(DType::kUInt2, DType::kInt4, true, {511}, x, 511);
}

// x * x -> int4 -> float32 + x: the elementwise ops run as generated kernels, each cast as a
// cast_packed launch of its own; no fused kernel holds the int4 value.
TEST_F(GpuPackedCast, PackedValuesStayOutOfFusedKernels) {
  Graph g("through_int4");
  ValueId x = g.add_input("x", f32_on_gpu({6}));
  Attrs to_int4, to_f32;
  to_int4.set("dtype", DType::kInt4);
  to_f32.set("dtype", DType::kFloat32);
  ValueId packed = g.add_op("cast", {g.add_op("mul", {x, x})[0]}, to_int4)[0];
  ValueId back = g.add_op("cast", {packed}, to_f32)[0];
  g.set_outputs({{"y", g.add_op("add", {back, x})[0]}});
  compile(g)->execute(std::vector<Ref<Tensor>>{host_tensor({6}, ramp(6, 1.f))->copy(gpu_)});
  std::vector<std::string> casts, others;
  for (const std::string& name : driver_log().launches)
    (name.find("cast_packed") != std::string::npos ? casts : others).push_back(name);
  ASSERT_EQ(casts.size(), 2u);
  EXPECT_NE(casts[0].find("packed_int4"), std::string::npos) << casts[0];
  EXPECT_NE(casts[1].find("packed_int4"), std::string::npos) << casts[1];
  EXPECT_EQ(others.size(), 2u) << "the mul and the add, each a generated kernel";
}

// Only casts handle the sub-byte dtypes; other ops on them are refused naming the dtype,
// when the node is lowered.
TEST_F(GpuPackedCast, OtherOpsAreRefusedNamingTheDtype) {
  EXPECT_MAXC_ERROR(lower("transpose", Attrs{{"axis_1", int64_t{0}}, {"axis_2", int64_t{1}}},
                          {Shape{DType::kInt4, {2, 4}}}, {Shape{DType::kInt4, {4, 2}}}),
                    Code::kUnimplemented, "int4");
  EXPECT_MAXC_ERROR(lower("add", Attrs{}, {Shape{DType::kUInt4, {4}}, Shape{DType::kUInt4, {4}}},
                          {Shape{DType::kUInt4, {4}}}),
                    Code::kUnimplemented, "uint4");
  EXPECT_MAXC_ERROR(lower("abs", Attrs{}, {Shape{DType::kFloat4E2M1Fn, {4}}}, {Shape{DType::kFloat4E2M1Fn, {4}}}),
                    Code::kUnimplemented, "float4_e2m1fn");
}

// A cast to its own dtype moves nothing: the output is the input's bytes.
TEST_F(GpuPackedCast, CastToTheSameSubByteDtypeIsAnAlias) {
  const Lowered l = lower("cast", Attrs{{"dtype", DType::kInt2}}, {Shape{DType::kInt2, {8}}}, {Shape{DType::kInt2, {8}}});
  EXPECT_TRUE(l.alias) << "no kernel for a cast to the same dtype";
}

}  // namespace
}  // namespace maxc::testing

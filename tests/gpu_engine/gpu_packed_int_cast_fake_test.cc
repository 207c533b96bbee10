// The sub-byte integers (uint2, int2, uint4, int4) have no GPU kernel: the GPU engine refuses a
// cast to or from one, and any other op on one, as UNIMPLEMENTED naming the dtype when it
// lowers the node, before any kernel is compiled, so these run without NVRTC.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/test_util.h"
#include "gpu_engine/engine_on_fake.h"

namespace maxc::testing {
namespace {

class GpuPackedIntOnFake : public EngineOnFake {
 protected:
  void SetUp() override { start_on(Device::get(Device::Kind::kCuda, 0)); }

  Lowered lower_cast(DType from, DType to) {
    return lower("cast", Attrs{{"dtype", to}}, {Shape{from, {8}}}, {Shape{to, {8}}});
  }
};

TEST_F(GpuPackedIntOnFake, CastsAreRefusedNamingTheDtype) {
  EXPECT_MAXC_ERROR(lower_cast(DType::kFloat32, DType::kInt4), Code::kUnimplemented,
                    "op 'cast': no GPU kernel for a cast from float32 to int4 (int4 packs several elements per byte)");
  EXPECT_MAXC_ERROR(lower_cast(DType::kUInt2, DType::kFloat16), Code::kUnimplemented,
                    "a cast from uint2 to float16 (uint2 packs");
  EXPECT_MAXC_ERROR(lower_cast(DType::kInt2, DType::kFloat8E4M3Fn), Code::kUnimplemented,
                    "a cast from int2 to float8_e4m3fn (int2 packs");
  EXPECT_MAXC_ERROR(lower_cast(DType::kFloat4E2M1Fn, DType::kUInt4), Code::kUnimplemented,
                    "a cast from float4_e2m1fn to uint4 (uint4 packs");
}

TEST_F(GpuPackedIntOnFake, OtherOpsAreRefusedNamingTheDtype) {
  EXPECT_MAXC_ERROR(lower("transpose", Attrs{{"axis_1", int64_t{0}}, {"axis_2", int64_t{1}}},
                          {Shape{DType::kInt4, {2, 4}}}, {Shape{DType::kInt4, {4, 2}}}),
                    Code::kUnimplemented, "int4");
  EXPECT_MAXC_ERROR(lower("add", Attrs{}, {Shape{DType::kUInt4, {4}}, Shape{DType::kUInt4, {4}}},
                          {Shape{DType::kUInt4, {4}}}),
                    Code::kUnimplemented, "uint4");
}

// Through the whole compile: the graph is valid, the GPU engine lacks the kernel.
TEST_F(GpuPackedIntOnFake, CompileRefusesACastToInt4) {
  Graph g("cast");
  ValueId x = g.add_input("x", f32_on_gpu({4}));
  Attrs a;
  a.set("dtype", DType::kInt4);
  g.set_outputs({{"y", g.add_op("cast", {x}, a)[0]}});
  EXPECT_MAXC_ERROR(CompiledModel::compile(context_, g, CompileSettings{}), Code::kUnimplemented,
                    "a cast from float32 to int4");
}

}  // namespace
}  // namespace maxc::testing

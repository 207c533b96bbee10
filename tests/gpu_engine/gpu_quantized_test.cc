// dequantize and qmatmul on the GPU engine (engine/lower_gpu/quantized.cc) on the emulated GPU
// (tests/emulated_gpu), past what the op suite reaches: an empty batch launches nothing, and
// the dtypes the kernels do not take are refused in the engine's words. The op suite checks
// both ops' values on this GPU for every encoding.
#include <gtest/gtest.h>

#include <string>

#include "base/quant_encoding.h"
#include "driver/test_util.h"
#include "gpu_engine/engine_on_emulated.h"

namespace maxc::testing {
namespace {

using GpuQuantized = EngineOnEmulatedGpu;

Attrs encoding_attrs(QuantEncoding e) {
  Attrs a;
  a.set("encoding", std::string(quant_encoding_name(e)));
  return a;
}

// What the graph does not reach: an empty batch launches nothing, and dtypes the kernels do
// not take are refused in the engine's words.
TEST_F(GpuQuantized, EmptyShapesLaunchNothingAndOtherDtypesAreRefused) {
  const int64_t row_bytes = quant_row_bytes(QuantEncoding::kQ8_0, 64);
  const Attrs q8 = encoding_attrs(QuantEncoding::kQ8_0);
  const Lowered empty = lower("qmatmul", q8, {Shape{DType::kFloat32, {0, 64}}, Shape{DType::kUInt8, {3, row_bytes}}},
                              {Shape{DType::kFloat32, {0, 3}}});
  KernelArgs a{};
  driver_log().launches.clear();
  empty.run(a);
  const Lowered no_rows = lower("dequantize", q8, {Shape{DType::kUInt8, {0, row_bytes}}}, {Shape{DType::kFloat32, {0, 64}}});
  no_rows.run(a);
  EXPECT_TRUE(driver_log().launches.empty());
  EXPECT_MAXC_ERROR(lower("qmatmul", q8, {Shape{DType::kFloat16, {2, 64}}, Shape{DType::kUInt8, {3, row_bytes}}},
                          {Shape{DType::kFloat32, {2, 3}}}),
                    Code::kUnimplemented, "op 'qmatmul': no GPU kernel for lhs float16[2, 64]");
}

}  // namespace
}  // namespace maxc::testing

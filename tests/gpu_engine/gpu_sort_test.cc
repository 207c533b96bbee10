// top_k and argsort on the GPU engine (engine/lower_gpu/scan_sort.cc) on the emulated GPU
// (tests/emulated_gpu), past what the op suite reaches: a line longer than shared memory
// sorts in global scratch, sized for the grid, and gives the CPU engine's results. Variants
// the CPU refuses are refused in its words.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "driver/test_util.h"
#include "gpu_engine/engine_on_emulated.h"
#include "kernels/cuda/common/sort_params.cuh"

namespace maxc::testing {
namespace {

class GpuSort : public EngineOnEmulatedGpu {
 protected:
  // The graph's outputs on the GPU engine and on the CPU engine, for one input.
  template <class T>
  void run_both(const std::function<Graph(DeviceRef)>& build, DType dtype, std::vector<int64_t> dims,
                const std::vector<T>& x, std::vector<Ref<Tensor>>* on_gpu, std::vector<Ref<Tensor>>* on_cpu) {
    EngineOnEmulatedGpu::run_both(build, {host_tensor(dtype, dims, x)}, on_gpu, on_cpu);
  }
};

Attrs top_k_attrs(int64_t k, int64_t axis) {
  Attrs a;
  a.set("k", k);
  a.set("axis", axis);
  return a;
}

std::function<Graph(DeviceRef)> top_k_graph(DType dtype, std::vector<Dim> dims, int64_t k, int64_t axis) {
  return [=](DeviceRef device) {
    Graph g("top_k");
    ValueId x = g.add_input("x", TensorType{dtype, dims, device});
    std::vector<ValueId> out = g.add_op("top_k", {x}, top_k_attrs(k, axis));
    g.set_outputs({{"values", out[0]}, {"indices", out[1]}});
    return g;
  };
}

// A line longer than shared memory sorts in the step's scratch (sized by the lowering, below).
TEST_F(GpuSort, LongLinesSortInScratchAndMatchTheCpuEngine) {
  const int64_t n = gpu::kSortSharedLength + 100;
  std::vector<int32_t> x(static_cast<size_t>(2 * n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>((i * 2654435761u) % 97) - 48;
  std::vector<Ref<Tensor>> gpu, cpu;
  run_both(top_k_graph(DType::kInt32, {2, n}, 5, -1), DType::kInt32, {2, n}, x, &gpu, &cpu);
  EXPECT_EQ(launches_of("sort_lines"), 1u);
  EXPECT_EQ(values_of<int32_t>(*gpu[0]), values_of<int32_t>(*cpu[0]));
  EXPECT_EQ(values_of<int64_t>(*gpu[1]), values_of<int64_t>(*cpu[1]));
}

TEST_F(GpuSort, ScratchHoldsOneLongLinePerBlockOfTheGrid) {
  const Shape in{DType::kFloat64, {3, 5000}};
  const Lowered l = lower("top_k", top_k_attrs(2, 1), {in}, {Shape{DType::kFloat64, {3, 2}}, Shape{DType::kInt64, {3, 2}}});
  EXPECT_EQ(l.scratch_bytes, 3u * 8192 * (8 + 4)) << "3 lines, one block each, padded to 8192 (double, int32) pairs";
  const Lowered short_lines = lower("top_k", top_k_attrs(2, 1), {Shape{DType::kFloat16, {3, 2048}}},
                                    {Shape{DType::kFloat16, {3, 2}}, Shape{DType::kInt64, {3, 2}}});
  EXPECT_EQ(short_lines.scratch_bytes, 0u) << "2048 fits in shared memory";
  const Lowered none = lower("top_k", top_k_attrs(0, 1), {in}, {Shape{DType::kFloat64, {3, 0}}, Shape{DType::kInt64, {3, 0}}});
  EXPECT_EQ(none.scratch_bytes, 0u) << "k = 0 launches nothing";
}

// Every dtype the CPU sorts compiles; the rest, and what the CPU refuses, fail as on the CPU.
TEST_F(GpuSort, DtypesAndShapesAreThoseOfTheCpu) {
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt64}) {
    EXPECT_NO_THROW(lower("top_k", top_k_attrs(1, 0), {Shape{d, {4, 2}}}, {Shape{d, {1, 2}}, Shape{DType::kInt64, {1, 2}}}))
        << dtype_name(d);
    Attrs a;
    a.set("ascending", true);
    EXPECT_NO_THROW(lower("argsort", a, {Shape{d, {4}}}, {Shape{DType::kInt64, {4}}})) << dtype_name(d);
  }
  const Shape b{DType::kBool, {4}}, i8{DType::kInt8, {4}};
  EXPECT_MAXC_ERROR(lower("top_k", top_k_attrs(1, 0), {b}, {Shape{DType::kBool, {1}}, Shape{DType::kInt64, {1}}}),
                    Code::kUnimplemented, "op 'top_k': no GPU kernel for dtype bool (input bool[4])");
  Attrs a;
  a.set("ascending", false);
  EXPECT_MAXC_ERROR(lower("argsort", a, {i8}, {Shape{DType::kInt64, {4}}}), Code::kUnimplemented,
                    "op 'argsort': no GPU kernel for dtype int8 (input int8[4])");
  EXPECT_MAXC_ERROR(lower("argsort", a, {Shape{DType::kFloat32, {2, 2}}}, {Shape{DType::kInt64, {2, 2}}}),
                    Code::kUnimplemented, "op 'argsort': no GPU kernel for input float32[2, 2] of rank 2");
  EXPECT_MAXC_ERROR(lower("top_k", top_k_attrs(5, 0), {Shape{DType::kFloat32, {4}}},
                          {Shape{DType::kFloat32, {5}}, Shape{DType::kInt64, {5}}}),
                    Code::kInvalidArgument, "op 'top_k': attribute 'k' is 5 but axis 0 of input float32[4] has 4");
  const int64_t too_long = gpu::kSortMaxLength + 1;
  EXPECT_MAXC_ERROR(lower("top_k", top_k_attrs(1, 0), {Shape{DType::kFloat32, {too_long}}},
                          {Shape{DType::kFloat32, {1}}, Shape{DType::kInt64, {1}}}),
                    Code::kUnimplemented, "op 'top_k': no GPU kernel for lines of 1073741825 elements");
}

}  // namespace
}  // namespace maxc::testing

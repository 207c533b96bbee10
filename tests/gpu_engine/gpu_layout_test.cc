// The layout and indexing ops on the GPU engine, on the emulated GPU (tests/emulated_gpu) with
// their real kernels: what the op suite does not see, which is when no kernel runs, the order
// of a two-kernel op, the error word a kernel sets, and the errors for what the GPU does not
// support, naming the op. The op suite checks these ops' values over their dtypes and shapes.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <vector>

#include "driver/test_util.h"
#include "gpu_engine/engine_on_emulated.h"

namespace maxc::testing {
namespace {

constexpr int64_t kOpen = INT64_MAX;

class GpuLayout : public EngineOnEmulatedGpu {
 protected:
  template <typename T>
  Ref<Tensor> on_device(DType dtype, std::vector<int64_t> dims, std::vector<T> values) {
    auto t = Tensor::create(Device::cpu(), dtype, dims);
    std::memcpy(t->data(), values.data(), values.size() * sizeof(T));
    return t->copy(gpu_);
  }
  Ref<Tensor> f32(std::vector<int64_t> dims, std::vector<float> values) {
    return on_device(DType::kFloat32, std::move(dims), std::move(values));
  }
  Ref<Tensor> i64(std::vector<int64_t> dims, std::vector<int64_t> values) {
    return on_device(DType::kInt64, std::move(dims), std::move(values));
  }

  std::vector<Ref<Tensor>> run(Model& m, std::vector<Ref<Tensor>> inputs) { return m.execute(inputs); }
};

// A slice that keeps everything is the input itself: no kernel runs.
TEST_F(GpuLayout, WholeSliceLaunchesNothing) {
  Graph g("slice_all");
  ValueId x = g.add_input("x", f32_on_gpu({2, 2}));
  Attrs attrs{{"starts", std::vector<Dim>{0}}, {"stops", std::vector<Dim>{kOpen}}};
  g.set_outputs({{"y", g.add_op("relu", {g.add_op("slice_tensor", {x}, attrs)[0]})[0]}});
  Ref<Model> model = compile(g);
  run(*model, {f32({2, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(driver_log().launches.size(), 1u) << "only the relu";
}

TEST_F(GpuLayout, PadWithAValueAnIntegerCannotHoldFailsNamingTheOp) {
  Graph g("pad_int");
  ValueId x = g.add_input("x", on_gpu(DType::kInt32, {2}));
  g.set_outputs({{"y", g.add_op("pad", {x}, Attrs{{"paddings", std::vector<int64_t>{1, 1}}, {"value", 1e30}})[0]}});
  EXPECT_MAXC_ERROR(CompiledModel::compile(context_, g, CompileSettings{}), Code::kInvalidArgument,
                    "op 'pad': attribute 'value'", "does not fit int32");
}

// The dims are the plan's: a symbol is evaluated for the call's shapes and copied, with no
// kernel, into device memory.
TEST_F(GpuLayout, ShapeToTensorCopiesThePlansDims) {
  Graph g("shape");
  ValueId x = g.add_input("x", f32_on_gpu({"n", 2}));
  Attrs attrs{{"shape", std::vector<Dim>{Dim("n"), 7}}};
  attrs.set("device", DeviceRef::gpu(0));
  g.set_outputs({{"y", g.add_op("shape_to_tensor", {}, attrs)[0]}, {"x2", g.add_op("relu", {x})[0]}});
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out = run(*model, {f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(driver_log().launches.size(), 1u) << "only the relu";
  EXPECT_TRUE(in_device_memory(out[0]->data()));
  EXPECT_EQ(values_of<int64_t>(*out[0]), (std::vector<int64_t>{3, 7}));
}

// Per-slice counts: repeat_starts writes where each slice's copies begin into the step's
// scratch, then repeat_rows reads them.
TEST_F(GpuLayout, RepeatInterleaveWithCountsRunsStartsThenRowsThroughScratch) {
  Graph g("repeat");
  ValueId x = g.add_input("x", f32_on_gpu({3, 2}));
  ValueId counts = g.add_input("counts", on_gpu(DType::kInt64, {3}));
  g.set_outputs({{"y", g.add_op("repeat_interleave", {x, counts},
                                Attrs{{"axis", int64_t{0}}, {"out_dim", std::vector<Dim>{4}}})[0]}});
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out = run(*model, {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({3}, {1, 0, 3})});
  ASSERT_EQ(driver_log().launches.size(), 2u);
  EXPECT_NE(driver_log().launches[0].find("repeat_starts"), std::string::npos) << driver_log().launches[0];
  EXPECT_NE(driver_log().launches[1].find("repeat_rows"), std::string::npos) << driver_log().launches[1];
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{1, 2, 5, 6, 5, 6, 5, 6}));
}

TEST_F(GpuLayout, RepeatInterleaveConstantCountsMustSumToOutDim) {
  Graph g("repeat3");
  ValueId x = g.add_input("x", f32_on_gpu({2}));
  const int64_t ones[] = {1, 1};
  ValueId counts = g.add_constant(Constant::copy_of(on_gpu(DType::kInt64, {2}),
                                                    {reinterpret_cast<const uint8_t*>(ones), sizeof ones}));
  g.set_outputs({{"y", g.add_op("repeat_interleave", {x, counts},
                                Attrs{{"axis", int64_t{0}}, {"out_dim", std::vector<Dim>{3}}})[0]}});
  EXPECT_MAXC_ERROR(CompiledModel::compile(context_, g, CompileSettings{}), Code::kInvalidArgument,
                    "op 'repeat_interleave': the repeats sum to 2 but attribute 'out_dim' is 3");
}

// A tuple out of range sets the step's error word: the call fails naming the op and the dims,
// and the next call runs.
TEST_F(GpuLayout, GatherNdIndexOutOfRangeFailsTheCallNamingTheOp) {
  Graph g("gather_nd");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3, 2}));
  ValueId idx = g.add_input("idx", on_gpu(DType::kInt64, {2, 2}));
  g.set_outputs({{"y", g.add_op("gather_nd", {x, idx}, Attrs{{"batch_dims", int64_t{0}}})[0]}});
  Ref<Model> model = compile(g);
  Ref<Tensor> in = f32({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_MAXC_ERROR(run(*model, {in, i64({2, 2}, {0, 1, 1, 3})}), Code::kInvalidArgument,
                    "op 'gather_nd': index values of 'indices' are out of range for [2, 3]");
  std::vector<Ref<Tensor>> out = run(*model, {in, i64({2, 2}, {1, -1, 0, 1})});
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{10, 11, 2, 3}));
}

TEST_F(GpuLayout, ScatterReductionOnADtypeWithoutOneIsUnimplementedNamingTheOp) {
  Graph g("scatter_nd_i16");
  ValueId x = g.add_input("x", on_gpu(DType::kInt16, {3}));
  ValueId upd = g.add_input("upd", on_gpu(DType::kInt16, {1}));
  ValueId idx = g.add_input("idx", on_gpu(DType::kInt64, {1, 1}));
  g.set_outputs({{"y", g.add_op("scatter_nd", {x, upd, idx}, Attrs{{"reduction", std::string("mul")}})[0]}});
  EXPECT_MAXC_ERROR(CompiledModel::compile(context_, g, CompileSettings{}), Code::kUnimplemented,
                    "op 'scatter_nd': no GPU kernel for reduction \"mul\" on dtype int16");
}

}  // namespace
}  // namespace maxc::testing

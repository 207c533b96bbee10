// The layout and indexing ops on the GPU engine, on the fake CUDA driver (gpu/fake_cuda.h)
// with the real NVRTC compiling their kernels (layout.cu, gather_nd.cu, scatter.cu,
// transpose.cu): which kernels launch, with which arguments, on which memory, and the errors
// for what the GPU does not support, naming the op. The launches are emulated on the host
// from their arguments (the fake's device memory is host memory), so each test also checks
// the values the plumbing leads to; the kernels' own numerics are checked by
// tests/gpu_emu/layout_emu_test.cc, which runs the real kernels.
#include <gtest/gtest.h>

#include <bit>
#include <climits>
#include <cstring>
#include <vector>

#include "driver/cuda/cuda_driver.h"
#include "driver/cuda/nvrtc_api.h"
#include "driver/device.h"
#include "driver/test_util.h"
#include "engine/compiled_model.h"
#include "engine/model.h"
#include "gpu/fake_cuda.h"
#include "gpu/gpu_test_util.h"
#include "gpu_engine/engine_on_fake.h"
#include "kernels/cuda/common/indexing.cuh"
#include "kernels/cuda/common/layout.cuh"

namespace maxc::testing {
namespace {

constexpr int64_t kOpen = INT64_MAX;

// ---- the launches of the 4-byte-element instances, run on the host -----------------------------

using W = uint32_t;  // float32 and int32 move as 32-bit words

void copy_strided(void** args) {
  const auto* x = arg<const W*>(args, 0);
  const auto xl = arg<gpu::Layout>(args, 1);
  auto* y = arg<W*>(args, 2);
  const auto shape = arg<gpu::Shape>(args, 3);
  for (int64_t i = 0; i < shape.numel; ++i) y[i] = x[gpu::offset_of(i, shape, xl)];
}

void copy_between(void** args) {
  const auto* x = arg<const W*>(args, 0);
  const auto xl = arg<gpu::Layout>(args, 1);
  auto* y = arg<W*>(args, 2);
  const auto yl = arg<gpu::Layout>(args, 3);
  const auto shape = arg<gpu::Shape>(args, 4);
  for (int64_t i = 0; i < shape.numel; ++i) y[gpu::offset_of(i, shape, yl)] = x[gpu::offset_of(i, shape, xl)];
}

void pad_constant(void** args) {
  const auto* x = arg<const W*>(args, 0);
  const auto g = arg<gpu::PadGeometry>(args, 1);
  auto* y = arg<W*>(args, 2);
  const auto shape = arg<gpu::Shape>(args, 3);
  const W fill = arg<W>(args, 4);
  for (int64_t i = 0; i < shape.numel; ++i) {
    int64_t rest = i, src = 0, stride = 1;
    bool inside = true;
    for (int d = shape.rank - 1; d >= 0; --d) {
      const int64_t k = rest % shape.dims[d] - g.before[d];
      rest /= shape.dims[d];
      inside = inside && k >= 0 && k < g.in_dims[d];
      src += k * stride;
      stride *= g.in_dims[d];
    }
    y[i] = inside ? x[src] : fill;
  }
}

// gather_nd<u32, i64>
void gather_nd(void** args) {
  const auto* x = arg<const W*>(args, 0);
  const auto* idx = arg<const int64_t*>(args, 1);
  auto* y = arg<W*>(args, 2);
  const auto batch = arg<int64_t>(args, 3), per_batch = arg<int64_t>(args, 4);
  const auto dims = arg<gpu::IndexedDims>(args, 5);
  const auto slice = arg<int64_t>(args, 6);
  auto* bad = arg<int32_t*>(args, 7);
  int64_t batch_slices = 1;
  for (int j = 0; j < dims.k; ++j) batch_slices *= dims.dims[j];
  for (int64_t item = 0; item < batch * per_batch; ++item) {
    int64_t pos = 0;
    bool ok = true;
    for (int j = 0; j < dims.k; ++j) {
      const int64_t v = gpu::wrap_index(idx[item * dims.k + j], dims.dims[j]);
      ok = ok && v >= 0;
      pos = pos * dims.dims[j] + v;
    }
    if (!ok) *bad = 1;
    for (int64_t s = 0; s < slice; ++s)
      y[item * slice + s] = ok ? x[((item / per_batch) * batch_slices + pos) * slice + s] : 0;
  }
}

class GpuLayoutOnFake : public EngineOnFake {
 protected:
  void SetUp() override {
    EngineOnFake::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    fake().on_launch = [](const std::string& name, void** args) {
      if (named(name, "copy_strided")) copy_strided(args);
      else if (named(name, "copy_between")) copy_between(args);
      else if (named(name, "pad_constant")) pad_constant(args);
      else if (named(name, "gather_nd")) gather_nd(args);
    };
  }

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

  template <typename T = float>
  static std::vector<T> values_of(const Tensor& t) {
    Ref<Tensor> host = t.copy(Device::cpu());
    const auto* p = reinterpret_cast<const T*>(host->data());
    return std::vector<T>(p, p + host->num_elements());
  }

  std::vector<Ref<Tensor>> run(Model& m, std::vector<Ref<Tensor>> inputs) { return m.execute(inputs); }
};

// ---- slice_tensor ------------------------------------------------------------------------------

// x[1:3, ::2] is one copy_strided launch (the CPU's lowering, on the GPU) reading from row 1
// with the column stride doubled.
TEST_F(GpuLayoutOnFake, SliceIsOneStridedCopyFromItsStart) {
  Graph g("slice");
  ValueId x = g.add_input("x", f32_on_gpu({3, 4}));
  Attrs attrs{{"starts", std::vector<Dim>{1, 0}}, {"stops", std::vector<Dim>{3, kOpen}}};
  attrs.set("steps", std::vector<int64_t>{1, 2});
  g.set_outputs({{"y", g.add_op("slice_tensor", {x}, attrs)[0]}});
  Ref<Model> model = compile(g);
  Ref<Tensor> in = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  std::vector<Ref<Tensor>> out = run(*model, {in});
  ASSERT_EQ(fake().launches.size(), 1u);
  EXPECT_TRUE(named(fake().launches[0], "copy_strided")) << fake().launches[0];
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{4, 6, 8, 10}));
}

// A slice that keeps everything is the input itself: no kernel runs.
TEST_F(GpuLayoutOnFake, WholeSliceLaunchesNothing) {
  Graph g("slice_all");
  ValueId x = g.add_input("x", f32_on_gpu({2, 2}));
  Attrs attrs{{"starts", std::vector<Dim>{0}}, {"stops", std::vector<Dim>{kOpen}}};
  g.set_outputs({{"y", g.add_op("relu", {g.add_op("slice_tensor", {x}, attrs)[0]})[0]}});
  fake().on_launch = [](const std::string&, void**) {};
  Ref<Model> model = compile(g);
  run(*model, {f32({2, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(fake().launches.size(), 1u) << "only the relu";
}

// ---- concat, stack, split, chunk ---------------------------------------------------------------

// One copy_between per input, each writing its window of the output: rows of the whole
// output's width, starting at the input's offset along the axis.
TEST_F(GpuLayoutOnFake, ConcatCopiesEachInputIntoItsWindow) {
  Graph g("concat");
  ValueId a = g.add_input("a", f32_on_gpu({2, 1}));
  ValueId b = g.add_input("b", f32_on_gpu({2, 2}));
  g.set_outputs({{"y", g.add_op("concat", {a, b}, Attrs{{"axis", int64_t{1}}})[0]}});
  std::vector<std::pair<gpu::Layout, uintptr_t>> writes;
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_TRUE(named(name, "copy_between")) << name;
    ASSERT_TRUE(in_device_memory(arg<void*>(args, 2)));
    writes.push_back({arg<gpu::Layout>(args, 3), reinterpret_cast<uintptr_t>(arg<void*>(args, 2))});
    copy_between(args);
  };
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out = run(*model, {f32({2, 1}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})});
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0].first.strides[0], 3);
  EXPECT_EQ(writes[0].first.dense, 0);
  EXPECT_EQ(writes[1].second - writes[0].second, sizeof(float)) << "b starts one column in";
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{1, 3, 4, 2, 5, 6}));
}

TEST_F(GpuLayoutOnFake, StackPutsEachInputAtItsIndexOfTheNewAxis) {
  Graph g("stack");
  ValueId a = g.add_input("a", f32_on_gpu({3}));
  ValueId b = g.add_input("b", f32_on_gpu({3}));
  g.set_outputs({{"y", g.add_op("stack", {a, b}, Attrs{{"axis", int64_t{1}}})[0]}});
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out = run(*model, {f32({3}, {1, 2, 3}), f32({3}, {10, 20, 30})});
  EXPECT_EQ(fake().launches.size(), 2u);
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{1, 10, 2, 20, 3, 30}));
}

// A concat along the first axis writes each input densely at its offset.
TEST_F(GpuLayoutOnFake, ConcatAlongTheFirstAxisWritesDenseWindows) {
  Graph g("concat0");
  ValueId a = g.add_input("a", f32_on_gpu({1, 2}));
  ValueId b = g.add_input("b", f32_on_gpu({2, 2}));
  g.set_outputs({{"y", g.add_op("concat", {a, b})[0]}});
  int dense = 0;
  fake().on_launch = [&](const std::string&, void** args) {
    dense += arg<gpu::Layout>(args, 3).dense;
    copy_between(args);
  };
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out = run(*model, {f32({1, 2}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})});
  EXPECT_EQ(dense, 2);
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(GpuLayoutOnFake, SplitAndChunkReadEachOutputsWindow) {
  Graph g("split");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  std::vector<ValueId> parts =
      g.add_op("split", {x}, Attrs{{"split_sizes", std::vector<Dim>{1, 2}}, {"axis", int64_t{1}}});
  std::vector<ValueId> halves = g.add_op("chunk", {x}, Attrs{{"chunks", int64_t{2}}, {"axis", int64_t{0}}});
  g.set_outputs({{"a", parts[0]}, {"b", parts[1]}, {"c", halves[0]}, {"d", halves[1]}});
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out = run(*model, {f32({2, 3}, {0, 1, 2, 3, 4, 5})});
  EXPECT_EQ(fake().launches.size(), 4u);
  for (const std::string& name : fake().launches) EXPECT_TRUE(named(name, "copy_between")) << name;
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{0, 3}));
  EXPECT_EQ(values_of(*out[1]), (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(values_of(*out[2]), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(values_of(*out[3]), (std::vector<float>{3, 4, 5}));
}

// ---- pad ---------------------------------------------------------------------------------------

// One pad_constant launch with the fill value's bits; a dim without padding merges into the
// dim before it, so the kernel sees one dim of (2 + 1) * 2 * 2 for z [2, 2, 2] padded on axis 0.
TEST_F(GpuLayoutOnFake, PadFillsAroundTheInputWithTheValuesBits) {
  Graph g("pad");
  ValueId x = g.add_input("x", f32_on_gpu({2, 2}));
  ValueId z = g.add_input("z", f32_on_gpu({2, 2, 2}));
  g.set_outputs({{"y", g.add_op("pad", {x}, Attrs{{"paddings", std::vector<int64_t>{1, 0, 0, 1}}, {"value", 7.5}})[0]},
                 {"w", g.add_op("pad", {z}, Attrs{{"paddings", std::vector<int64_t>{0, 1, 0, 0, 0, 0}}})[0]}});
  std::vector<gpu::Shape> shapes;
  std::vector<W> fills;
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_TRUE(named(name, "pad_constant")) << name;
    shapes.push_back(arg<gpu::Shape>(args, 3));
    fills.push_back(arg<W>(args, 4));
    pad_constant(args);
  };
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out =
      run(*model, {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})});
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(fills[0], std::bit_cast<W>(7.5f));
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{7.5, 7.5, 7.5, 1, 2, 7.5, 3, 4, 7.5}));
  EXPECT_EQ(shapes[1].rank, 1);
  EXPECT_EQ(shapes[1].dims[0], 12);
  EXPECT_EQ(values_of(*out[1]), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0}));
}

TEST_F(GpuLayoutOnFake, PadWithAValueAnIntegerCannotHoldFailsNamingTheOp) {
  Graph g("pad_int");
  ValueId x = g.add_input("x", on_gpu(DType::kInt32, {2}));
  g.set_outputs({{"y", g.add_op("pad", {x}, Attrs{{"paddings", std::vector<int64_t>{1, 1}}, {"value", 1e30}})[0]}});
  EXPECT_MAXC_ERROR(CompiledModel::compile(context_, g, CompileSettings{}), Code::kInvalidArgument,
                    "op 'pad': attribute 'value'", "does not fit int32");
}

// ---- band_part, range, outer, shape_to_tensor, repeat_interleave -----------------------------

TEST_F(GpuLayoutOnFake, BandPartLaunchesWithItsBoundsAndMayRunInPlace) {
  Graph g("band");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3, 4}));
  g.set_outputs({{"y", g.add_op("band_part", {g.add_op("relu", {x})[0]},
                                Attrs{{"num_lower", int64_t{0}}, {"exclude", true}})[0]}});
  std::vector<int64_t> seen;
  const void* in = nullptr;
  void* out = nullptr;
  fake().on_launch = [&](const std::string& name, void** args) {
    if (!named(name, "band_part")) return;
    in = arg<const void*>(args, 0);
    out = arg<void*>(args, 1);
    for (size_t i = 2; i < 7; ++i) seen.push_back(arg<int64_t>(args, i));
    seen.push_back(arg<int32_t>(args, 7));
  };
  Ref<Model> model = compile(g);
  run(*model, {f32({2, 3, 4}, std::vector<float>(24, 1))});
  EXPECT_EQ(seen, (std::vector<int64_t>{6, 3, 4, 0, -1, 1})) << "rows, m, n, lower, upper (none), exclude";
  EXPECT_TRUE(in_device_memory(in));
  EXPECT_TRUE(in_device_memory(out));
}

TEST_F(GpuLayoutOnFake, RangeReadsStartAndStepFromDeviceMemory) {
  Graph g("range");
  ValueId start = g.add_input("start", f32_on_gpu({}));
  ValueId stop = g.add_input("stop", f32_on_gpu({}));
  ValueId step = g.add_input("step", f32_on_gpu({}));
  g.set_outputs({{"y", g.add_op("range", {start, stop, step}, Attrs{{"out_dim", std::vector<Dim>{5}}})[0]}});
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_TRUE(named(name, "range_fill")) << name;
    const auto* s = arg<const float*>(args, 0);
    const auto* d = arg<const float*>(args, 1);
    ASSERT_TRUE(in_device_memory(s) && in_device_memory(d));
    auto* y = arg<float*>(args, 2);
    for (int64_t i = 0; i < arg<int64_t>(args, 3); ++i) y[i] = *s + static_cast<float>(i) * *d;
  };
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out = run(*model, {f32({}, {1}), f32({}, {3.5}), f32({}, {0.5})});
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{1, 1.5, 2, 2.5, 3}));
}

TEST_F(GpuLayoutOnFake, OuterIsOneLaunchOverBothFlattenedInputs) {
  Graph g("outer");
  ValueId a = g.add_input("a", f32_on_gpu({2}));
  ValueId b = g.add_input("b", f32_on_gpu({1, 3}));
  g.set_outputs({{"y", g.add_op("outer", {a, b})[0]}});
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_TRUE(named(name, "outer")) << name;
    const auto *u = arg<const float*>(args, 0), *v = arg<const float*>(args, 1);
    auto* y = arg<float*>(args, 2);
    const auto na = arg<int64_t>(args, 3), nb = arg<int64_t>(args, 4);
    ASSERT_EQ(na, 2);
    ASSERT_EQ(nb, 3);
    for (int64_t i = 0; i < na * nb; ++i) y[i] = u[i / nb] * v[i % nb];
  };
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out = run(*model, {f32({2}, {1, 2}), f32({1, 3}, {1, 10, 100})});
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{1, 10, 100, 2, 20, 200}));
}

// The dims are the plan's: a symbol is evaluated for the call's shapes and copied, with no
// kernel, into device memory.
TEST_F(GpuLayoutOnFake, ShapeToTensorCopiesThePlansDims) {
  Graph g("shape");
  ValueId x = g.add_input("x", f32_on_gpu({"n", 2}));
  Attrs attrs{{"shape", std::vector<Dim>{Dim("n"), 7}}};
  attrs.set("device", DeviceRef::gpu(0));
  g.set_outputs({{"y", g.add_op("shape_to_tensor", {}, attrs)[0]}, {"x2", g.add_op("relu", {x})[0]}});
  fake().on_launch = [](const std::string&, void**) {};
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out = run(*model, {f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_TRUE(in_device_memory(out[0]->data()));
  EXPECT_EQ(values_of<int64_t>(*out[0]), (std::vector<int64_t>{3, 7}));
}

// Per-slice counts: repeat_starts writes where each slice's copies begin into the step's
// scratch (device memory), then repeat_rows reads them.
TEST_F(GpuLayoutOnFake, RepeatInterleaveWithCountsRunsStartsThenRowsThroughScratch) {
  Graph g("repeat");
  ValueId x = g.add_input("x", f32_on_gpu({3, 2}));
  ValueId counts = g.add_input("counts", on_gpu(DType::kInt64, {3}));
  g.set_outputs({{"y", g.add_op("repeat_interleave", {x, counts},
                                Attrs{{"axis", int64_t{0}}, {"out_dim", std::vector<Dim>{4}}})[0]}});
  const void* starts_written = nullptr;
  const void* starts_read = nullptr;
  fake().on_launch = [&](const std::string& name, void** args) {
    if (named(name, "repeat_starts")) {
      ASSERT_EQ(arg<int64_t>(args, 1), 3) << "num_counts";
      ASSERT_EQ(arg<int64_t>(args, 3), 4) << "out_len";
      starts_written = arg<const void*>(args, 4);
    } else {
      ASSERT_TRUE(named(name, "repeat_rows")) << name;
      starts_read = arg<const void*>(args, 1);
    }
  };
  Ref<Model> model = compile(g);
  run(*model, {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({3}, {1, 0, 3})});
  ASSERT_EQ(fake().launches.size(), 2u);
  EXPECT_TRUE(in_device_memory(starts_written));
  EXPECT_EQ(starts_written, starts_read);
}

TEST_F(GpuLayoutOnFake, RepeatInterleaveByOneCountIsAStridedCopy) {
  Graph g("repeat2");
  ValueId x = g.add_input("x", f32_on_gpu({2, 2}));
  g.set_outputs({{"y", g.add_op("repeat_interleave", {x}, Attrs{{"repeats", int64_t{2}}, {"axis", int64_t{1}}})[0]}});
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out = run(*model, {f32({2, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(fake().launches.size(), 1u);
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));
}

TEST_F(GpuLayoutOnFake, RepeatInterleaveConstantCountsMustSumToOutDim) {
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

// ---- gather_nd, scatter, scatter_nd ----------------------------------------------------------

// A tuple out of range sets the step's error word: the call fails naming the op and the dims,
// and the next call runs.
TEST_F(GpuLayoutOnFake, GatherNdIndexOutOfRangeFailsTheCallNamingTheOp) {
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

// scatter's reduction is in the kernel's name; the output starts as a copy of the input and
// a thread walks the scatter axis (here all 3 updates of the one row, in order).
TEST_F(GpuLayoutOnFake, ScatterAddLaunchesTheReducingKernelOverTheOffAxisPositions) {
  Graph g("scatter");
  ValueId x = g.add_input("x", f32_on_gpu({2, 4}));
  ValueId upd = g.add_input("upd", f32_on_gpu({2, 3}));
  ValueId idx = g.add_input("idx", on_gpu(DType::kInt64, {2, 3}));
  g.set_outputs({{"y", g.add_op("scatter", {x, upd, idx},
                                Attrs{{"axis", int64_t{1}}, {"reduction", std::string("add")}})[0]}});
  gpu::ScatterGeometry geometry{};
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_TRUE(named(name, "scatter_elements")) << name;
    ASSERT_TRUE(named(name, "ScatterAdd")) << name;
    geometry = arg<gpu::ScatterGeometry>(args, 3);
    const auto* u = arg<const float*>(args, 0);
    const auto* i = arg<const int64_t*>(args, 1);
    auto* y = arg<float*>(args, 2);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t a = 0; a < 3; ++a) y[r * 4 + i[r * 3 + a]] += u[r * 3 + a];
  };
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out =
      run(*model, {f32({2, 4}, {1, 1, 1, 1, 2, 2, 2, 2}), f32({2, 3}, {1, 2, 3, 4, 5, 6}),
                   i64({2, 3}, {0, 0, 3, 1, 1, 1})});
  EXPECT_EQ(geometry.rank, 2);
  EXPECT_EQ(geometry.axis, 1);
  EXPECT_EQ(geometry.axis_dim, 4);
  EXPECT_EQ(geometry.out_strides[0], 4);
  EXPECT_EQ(geometry.upd_dims[1], 3);
  EXPECT_EQ(values_of(*out[0]), (std::vector<float>{4, 1, 1, 4, 2, 17, 2, 2}));
}

// scatter_nd overwrites with raw words (any dtype), one thread per element of the slice.
TEST_F(GpuLayoutOnFake, ScatterNdAssignsWithTheWordKernelOverTheSlice) {
  Graph g("scatter_nd");
  ValueId x = g.add_input("x", on_gpu(DType::kInt32, {3, 2}));
  ValueId upd = g.add_input("upd", on_gpu(DType::kInt32, {2, 2}));
  ValueId idx = g.add_input("idx", on_gpu(DType::kInt64, {2, 1}));
  g.set_outputs({{"y", g.add_op("scatter_nd", {x, upd, idx})[0]}});
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_TRUE(named(name, "scatter_nd")) << name;
    ASSERT_TRUE(named(name, "ScatterAssign")) << name;
    const auto* u = arg<const int32_t*>(args, 0);
    const auto* i = arg<const int64_t*>(args, 1);
    auto* y = arg<int32_t*>(args, 2);
    const auto dims = arg<gpu::IndexedDims>(args, 3);
    ASSERT_EQ(dims.k, 1);
    ASSERT_EQ(dims.dims[0], 3);
    const auto count = arg<int64_t>(args, 4), slice = arg<int64_t>(args, 5);
    for (int64_t n = 0; n < count; ++n)
      for (int64_t s = 0; s < slice; ++s) y[i[n] * slice + s] = u[n * slice + s];
  };
  Ref<Model> model = compile(g);
  std::vector<Ref<Tensor>> out =
      run(*model, {on_device<int32_t>(DType::kInt32, {3, 2}, {1, 2, 3, 4, 5, 6}),
                   on_device<int32_t>(DType::kInt32, {2, 2}, {7, 8, 9, 10}), i64({2, 1}, {1, 1})});
  EXPECT_EQ(values_of<int32_t>(*out[0]), (std::vector<int32_t>{1, 2, 9, 10, 5, 6}));
}

TEST_F(GpuLayoutOnFake, ScatterReductionOnADtypeWithoutOneIsUnimplementedNamingTheOp) {
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

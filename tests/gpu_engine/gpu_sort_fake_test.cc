// top_k and argsort on the GPU engine (engine/lower_gpu/scan_sort.cc) on the fake CUDA driver
// (gpu/fake_cuda.h), with real NVRTC compiles: each node is one sort_lines launch whose
// arguments the hook checks (device memory, the [outer, n, inner] split, k, the direction,
// the scratch of long lines) and then runs through the real kernel source under the host
// emulator (gpu_emu/cuda_emulator.h), so the engine's results are compared with the CPU
// engine's for the same graph end to end. Variants the CPU refuses are refused in its words.
#include "gpu_emu/cuda_emulator.h"  // first: sort.cu must see MAXC_EMULATED
#include "kernels/cuda/sort.cu"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "driver/test_util.h"
#include "gpu_engine/engine_on_fake.h"

namespace maxc::testing {
namespace {

// What a sort_lines launch was given.
struct SortArgs {
  int64_t outer, n, inner, k;
  int32_t descending;
  bool values, scratch;
};

class GpuSortOnFake : public EngineOnFake {
 protected:
  // Runs each sort_lines launch through the emulated kernel of storage type S, on one block
  // of kGpuBlock threads (a grid-stride kernel: one block runs every line, in its slice 0 of
  // the scratch), recording its arguments.
  template <class S>
  void emulate_sort() {
    fake().on_launch = [this](const std::string& name, void** args) {
      ASSERT_NE(name.find("sort_lines"), std::string::npos) << name;
      const auto* x = arg<const S*>(args, 0);
      auto* values = arg<S*>(args, 1);
      auto* indices = arg<gpu::i64*>(args, 2);
      void* scratch = arg<void*>(args, 8);
      SortArgs s{arg<int64_t>(args, 3), arg<int64_t>(args, 4), arg<int64_t>(args, 5), arg<int64_t>(args, 6),
                 arg<int32_t>(args, 7),  values != nullptr,     scratch != nullptr};
      EXPECT_TRUE(in_device_memory(x));
      EXPECT_TRUE(in_device_memory(indices));
      if (values) EXPECT_TRUE(in_device_memory(values));
      if (scratch) EXPECT_TRUE(in_device_memory(scratch));
      launches_.push_back(s);
      gpu_emu::emulate_launch(dim3(1), dim3(256), gpu::sort_lines<S>, x, values, indices, s.outer, s.n, s.inner, s.k,
                              s.descending, scratch);
    };
  }

  // The graph's outputs on the GPU engine and on the CPU engine, for one input.
  template <class T>
  void run_both(const std::function<Graph(DeviceRef)>& build, DType dtype, std::vector<int64_t> dims,
                const std::vector<T>& x, std::vector<Ref<Tensor>>* on_gpu, std::vector<Ref<Tensor>>* on_cpu) {
    Ref<Model> gpu_model = compile(build(DeviceRef::gpu(0)));
    *on_gpu = gpu_model->execute(std::vector<Ref<Tensor>>{host_tensor(dtype, dims, x)->copy(gpu_)});
    Ref<Context> cpu = Context::create(ContextOptions{{Device::cpu()}, 1});
    Ref<Model> cpu_model = Model::create(CompiledModel::compile(cpu, build(DeviceRef::cpu()), CompileSettings{}), NamedTensors{});
    *on_cpu = cpu_model->execute(std::vector<Ref<Tensor>>{host_tensor(dtype, dims, x)});
  }

  std::vector<SortArgs> launches_;
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

std::function<Graph(DeviceRef)> argsort_graph(DType dtype, int64_t n, bool ascending) {
  return [=](DeviceRef device) {
    Graph g("argsort");
    ValueId x = g.add_input("x", TensorType{dtype, {n}, device});
    Attrs a;
    a.set("ascending", ascending);
    g.set_outputs({{"indices", g.add_op("argsort", {x}, a)[0]}});
    return g;
  };
}

// Values with many ties, NaNs and both zeros.
std::vector<float> awkward_floats(size_t n) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float pool[] = {1, -0.f, 0.f, nan, 2, -1, 1, std::numeric_limits<float>::infinity(), 2, 0.f, 3};
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = pool[(i * 7 + i / 5) % 11];
  return v;
}

template <typename T>
void expect_same_bits(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)), 0) << what;
}

// top_k along a middle axis: one launch splitting [4, 6, 3] around axis 1, giving the CPU
// engine's values and positions.
TEST_F(GpuSortOnFake, TopKAlongAMiddleAxisMatchesTheCpuEngine) {
  emulate_sort<float>();
  for (int64_t k : {1, 2, 6}) {
    launches_.clear();
    std::vector<Ref<Tensor>> gpu, cpu;
    run_both(top_k_graph(DType::kFloat32, {4, 6, 3}, k, 1), DType::kFloat32, {4, 6, 3}, awkward_floats(72), &gpu,
             &cpu);
    ASSERT_EQ(launches_.size(), 1u);
    const SortArgs& s = launches_[0];
    EXPECT_EQ(s.outer, 4);
    EXPECT_EQ(s.n, 6);
    EXPECT_EQ(s.inner, 3);
    EXPECT_EQ(s.k, k);
    EXPECT_EQ(s.descending, 1);
    EXPECT_TRUE(s.values);
    EXPECT_FALSE(s.scratch) << "a line of 6 sorts in shared memory";
    expect_same_bits(values_of<float>(*gpu[0]), values_of<float>(*cpu[0]), "values");
    EXPECT_EQ(values_of<int64_t>(*gpu[1]), values_of<int64_t>(*cpu[1])) << "k = " << k;
  }
}

// argsort either way round: positions only, NaNs last ascending and first descending.
TEST_F(GpuSortOnFake, ArgsortBothDirectionsMatchesTheCpuEngine) {
  emulate_sort<float>();
  for (bool ascending : {true, false}) {
    launches_.clear();
    std::vector<Ref<Tensor>> gpu, cpu;
    run_both(argsort_graph(DType::kFloat32, 40, ascending), DType::kFloat32, {40}, awkward_floats(40), &gpu, &cpu);
    ASSERT_EQ(launches_.size(), 1u);
    EXPECT_EQ(launches_[0].descending, ascending ? 0 : 1);
    EXPECT_FALSE(launches_[0].values);
    EXPECT_EQ(launches_[0].k, 40);
    EXPECT_EQ(values_of<int64_t>(*gpu[0]), values_of<int64_t>(*cpu[0])) << (ascending ? "ascending" : "descending");
  }
}

// A line longer than shared memory sorts in the step's scratch, in device memory.
TEST_F(GpuSortOnFake, LongLinesSortInScratchAndMatchTheCpuEngine) {
  emulate_sort<gpu::i32>();
  const int64_t n = gpu::kSortSharedLength + 100;
  std::vector<int32_t> x(static_cast<size_t>(2 * n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>((i * 2654435761u) % 97) - 48;
  std::vector<Ref<Tensor>> gpu, cpu;
  run_both(top_k_graph(DType::kInt32, {2, n}, 5, -1), DType::kInt32, {2, n}, x, &gpu, &cpu);
  ASSERT_EQ(launches_.size(), 1u);
  EXPECT_TRUE(launches_[0].scratch);
  EXPECT_EQ(values_of<int32_t>(*gpu[0]), values_of<int32_t>(*cpu[0]));
  EXPECT_EQ(values_of<int64_t>(*gpu[1]), values_of<int64_t>(*cpu[1]));
}

TEST_F(GpuSortOnFake, ScratchHoldsOneLongLinePerBlockOfTheGrid) {
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
TEST_F(GpuSortOnFake, DtypesAndShapesAreThoseOfTheCpu) {
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

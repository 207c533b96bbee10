// The GPU engine's matmuls on the emulated GPU (tests/emulated_gpu) with the fake cuBLASLt
// (gpu/fake_cublaslt.h) installed as the process's: which nodes go to cuBLASLt and which to
// the tiled kernel (run from its real source), what cuBLASLt is asked, and the numbers the
// fake computes as the column-major library does, against a row-major reference written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "driver/cuda/cublaslt_api.h"
#include "driver/device.h"
#include "driver/test_util.h"
#include "engine/compiled_model.h"
#include "engine/model.h"
#include "gpu/fake_cublaslt.h"
#include "gpu_engine/engine_on_emulated.h"

namespace maxc::testing {
namespace {

std::vector<float> values(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % 5) - 0.5f * static_cast<float>(i % 2);
  return v;
}

// Row-major c[b][i][j] = sum_p a[b][i][p] * w[p][j] (w shared by every batch) + bias[j].
std::vector<float> reference(int64_t batch, int64_t m, int64_t n, int64_t k, const std::vector<float>& a,
                             const std::vector<float>& w, const std::vector<float>& bias = {}) {
  std::vector<float> c(static_cast<size_t>(batch * m * n));
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = bias.empty() ? 0.0 : bias[j];
        for (int64_t p = 0; p < k; ++p) acc += double(a[(t * m + i) * k + p]) * w[p * n + j];
        c[(t * m + i) * n + j] = static_cast<float>(acc);
      }
  return c;
}

std::vector<float> relu(std::vector<float> v) {
  for (float& x : v) x = std::max(x, 0.0f);
  return v;
}

class CublasLtEngine : public EngineOnEmulatedGpu {
 protected:
  void SetUp() override {
    EngineOnEmulatedGpu::SetUp();
    if (HasFatalFailure()) return;
    unsetenv("MAX_C_CUBLASLT");
    reset_fake_lt();
    cuda::set_process_cublaslt(
        cuda::init_cublaslt([](const char* name) { return fake_cublaslt_symbol(name); }, "fake cuBLASLt"));
  }

  // Back to what ctest set: no cuBLASLt, which would be handed the emulated GPU's host memory.
  void TearDown() override {
    cuda::set_process_cublaslt(nullptr);
    setenv("MAX_C_CUBLASLT", "0", 1);
  }

  std::vector<float> run(const Ref<Model>& model, std::vector<int64_t> dims, const std::vector<float>& x) {
    Ref<Tensor> in = host_tensor(std::move(dims), x)->copy(gpu_);
    return values_of(*model->execute(std::vector<Ref<Tensor>>{in})[0]);
  }

  // y = x @ w, w a [k, n] weight.
  Ref<Model> matmul_model(std::vector<Dim> x_dims, int64_t k, int64_t n, const std::vector<float>& w) {
    Graph g("matmul");
    ValueId x = g.add_input("x", f32_on_gpu(std::move(x_dims)));
    ValueId wv = g.add_weight("w", f32_on_gpu({k, n}));
    g.set_outputs({{"y", g.add_op("matmul", {x, wv})[0]}});
    return compile(g, {{"w", host_tensor({k, n}, w)}});
  }

  // y = act(x @ w + b), with `activation` an op name ("" for none) and its attributes.
  Ref<Model> dense_model(int64_t m, int64_t k, int64_t n, const std::string& activation, const Attrs& act_attrs,
                         const std::vector<float>& w, const std::vector<float>& b) {
    Graph g("dense");
    ValueId x = g.add_input("x", f32_on_gpu({m, k}));
    ValueId wv = g.add_weight("w", f32_on_gpu({k, n}));
    ValueId bv = g.add_weight("b", f32_on_gpu({static_cast<int64_t>(b.size())}));
    ValueId y = g.add_op("add", {g.add_op("matmul", {x, wv})[0], bv})[0];
    if (!activation.empty()) y = g.add_op(activation, {y}, act_attrs)[0];
    g.set_outputs({{"y", y}});
    return compile(g, {{"w", host_tensor({k, n}, w)}, {"b", host_tensor({static_cast<int64_t>(b.size())}, b)}});
  }

};

TEST_F(CublasLtEngine, Float32MatmulRunsOnCublasLtNotTheTiledKernel) {
  const std::vector<float> w = values(12, -1.0f, 0.5f), x = values(6, 0.5f, 0.75f);
  Ref<Model> model = matmul_model({2, 3}, 3, 4, w);
  EXPECT_EQ(run(model, {2, 3}, x), reference(1, 2, 4, 3, x, w));
  EXPECT_TRUE(driver_log().launches.empty()) << "the tiled kernel ran: " << driver_log().launches[0];
  ASSERT_EQ(fake_lt().matmuls.size(), 1u);
  const FakeLtMatmulCall& call = fake_lt().matmuls[0];
  for (const void* p : {call.a_ptr, call.b_ptr, call.c_ptr, static_cast<const void*>(call.d_ptr)})
    EXPECT_TRUE(in_device_memory(p)) << "cuBLASLt got a pointer outside device memory";
  EXPECT_NE(call.stream, nullptr) << "cuBLASLt was not given the call's stream";
  EXPECT_EQ(call.desc.compute_type, 68) << "CUBLAS_COMPUTE_32F: exact float32";
  EXPECT_EQ(fake_lt().heuristic_descs.size(), 1u) << "the algorithm is chosen once, when the plan is built";
  run(model, {2, 3}, x);
  EXPECT_EQ(fake_lt().heuristic_descs.size(), 1u) << "a second call asked the heuristic again";
  EXPECT_EQ(fake_lt().matmuls.size(), 2u);
}

// torch's Linear: x @ transpose(W) with W [n, k] is one fused matmul reading W transposed.
TEST_F(CublasLtEngine, TransposedWeightIsReadTransposedByCublasLt) {
  Graph g("linear");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  ValueId w = g.add_weight("w", f32_on_gpu({4, 3}));
  Attrs t;
  t.set("axis_1", int64_t{0});
  t.set("axis_2", int64_t{1});
  g.set_outputs({{"y", g.add_op("matmul", {x, g.add_op("transpose", {w}, t)[0]})[0]}});
  const std::vector<float> wt = values(12, -2.0f, 0.5f), xv = values(6, 1.0f, -0.5f);
  Ref<Model> model = compile(g, {{"w", host_tensor({4, 3}, wt)}});
  std::vector<float> w_kn(12);  // W^T, [3, 4]
  for (int j = 0; j < 4; ++j)
    for (int p = 0; p < 3; ++p) w_kn[p * 4 + j] = wt[j * 3 + p];
  EXPECT_EQ(run(model, {2, 3}, xv), reference(1, 2, 4, 3, xv, w_kn));
  EXPECT_TRUE(driver_log().launches.empty()) << "a transpose or the tiled kernel ran: " << driver_log().launches[0];
  ASSERT_EQ(fake_lt().matmuls.size(), 1u);
  EXPECT_EQ(fake_lt().matmuls[0].desc.trans_a, 1) << "CUBLAS_OP_T on cuBLASLt's A, our weight";
}

// [2, 4] @ [3, 4, 5]: three batches sharing the lhs, batch stride 0 for it. (A batched lhs
// with a shared rhs is folded into one matmul of its rows before it gets here.)
TEST_F(CublasLtEngine, BatchesShareABroadcastOperandThroughStrideZero) {
  Graph g("batched");
  ValueId a = g.add_weight("a", f32_on_gpu({2, 4}));
  ValueId x = g.add_input("x", f32_on_gpu({3, 4, 5}));
  g.set_outputs({{"y", g.add_op("matmul", {a, x})[0]}});
  const std::vector<float> av = values(8, -1.0f, 0.25f), xv = values(60, 0.5f, 0.5f);
  Ref<Model> model = compile(g, {{"a", host_tensor({2, 4}, av)}});
  std::vector<float> want(30);
  for (int t = 0; t < 3; ++t)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 5; ++j) {
        double acc = 0;
        for (int p = 0; p < 4; ++p) acc += double(av[i * 4 + p]) * xv[(t * 4 + p) * 5 + j];
        want[(t * 2 + i) * 5 + j] = static_cast<float>(acc);
      }
  EXPECT_EQ(run(model, {3, 4, 5}, xv), want);
  ASSERT_EQ(fake_lt().matmuls.size(), 1u);
  const FakeLtMatmulCall& call = fake_lt().matmuls[0];
  EXPECT_EQ(call.d.batch_count, 3);
  EXPECT_EQ(call.b.batch_stride, 0) << "our lhs (cuBLASLt's B), shared by every batch";
  EXPECT_EQ(call.a.batch_stride, 20);
  EXPECT_EQ(call.d.batch_stride, 10);
}

// [2, 1, 3, 4] @ [5, 4, 6]: the batch dims [2, 5] do not collapse into one, so the tiled
// kernel runs once per index of the first, over the 5 of the second, at its offsets.
TEST_F(CublasLtEngine, UnevenBatchDimsAreALoopOfTiledLaunches) {
  Graph g("uneven");
  ValueId x = g.add_input("x", f32_on_gpu({2, 1, 3, 4}));
  ValueId w = g.add_weight("w", f32_on_gpu({5, 4, 6}));
  g.set_outputs({{"y", g.add_op("matmul", {x, w})[0]}});
  const std::vector<float> xv = values(24, -1.0f, 0.25f), wv = values(120, 0.5f, -0.125f);
  Ref<Model> model = compile(g, {{"w", host_tensor({5, 4, 6}, wv)}});
  const std::vector<float> got = run(model, {2, 1, 3, 4}, xv);
  std::vector<float> want(2 * 5 * 3 * 6);
  for (int o = 0; o < 2; ++o)
    for (int t = 0; t < 5; ++t)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 6; ++j) {
          double acc = 0;
          for (int p = 0; p < 4; ++p) acc += double(xv[(o * 3 + i) * 4 + p]) * wv[(t * 4 + p) * 6 + j];
          want[((o * 5 + t) * 3 + i) * 6 + j] = static_cast<float>(acc);
        }
  EXPECT_EQ(got, want);
  EXPECT_TRUE(fake_lt().matmuls.empty()) << "cuBLASLt takes one batch stride per operand";
  EXPECT_EQ(driver_log().launches.size(), 2u);
  EXPECT_EQ(launches_of("matmul_tiled"), 2u);
}

TEST_F(CublasLtEngine, BiasAndReluAreCublasLtsEpilogue) {
  const std::vector<float> w = values(6, -1.0f, 0.75f), b = {0.5f, -4.0f}, x = values(6, 1.0f, -0.5f);
  Ref<Model> model = dense_model(2, 3, 2, "relu", {}, w, b);
  EXPECT_EQ(run(model, {2, 3}, x), relu(reference(1, 2, 2, 3, x, w, b)));
  EXPECT_TRUE(driver_log().launches.empty()) << driver_log().launches[0];
  ASSERT_EQ(fake_lt().matmuls.size(), 1u);
  const FakeLtMatmulCall& call = fake_lt().matmuls[0];
  EXPECT_EQ(call.desc.epilogue, 6u) << "CUBLASLT_EPILOGUE_RELU_BIAS";
  EXPECT_TRUE(in_device_memory(call.desc.bias)) << "the bias pointer is the weight's device copy";
}

TEST_F(CublasLtEngine, TanhGeluIsCublasLtsGeluEpilogue) {
  Attrs tanh;
  tanh.set("approximate", std::string("tanh"));
  const std::vector<float> w = values(6, -1.0f, 0.75f), b = {0.5f, -1.0f};
  Ref<Model> model = dense_model(2, 3, 2, "gelu", tanh, w, b);
  run(model, {2, 3}, values(6, 1.0f, -0.5f));
  ASSERT_EQ(fake_lt().matmuls.size(), 1u);
  EXPECT_EQ(fake_lt().matmuls[0].desc.epilogue, 36u) << "CUBLASLT_EPILOGUE_GELU_BIAS";
}

// Activations cuBLASLt has no epilogue for, the erf GELU among them (its GELU is the tanh
// one), and a bias of one value for every column, stay on the tiled kernel.
TEST_F(CublasLtEngine, EpiloguesCublasLtLacksFallBackToTheTiledKernel) {
  Attrs erf;
  erf.set("approximate", std::string("none"));
  struct Case {
    std::string activation;
    Attrs attrs;
    std::vector<float> bias;
    const char* kernel_part;
  };
  const std::vector<Case> cases = {{"gelu", erf, {0.5f, 1.0f}, "GeluErf"},
                                   {"sigmoid", {}, {0.5f, 1.0f}, "Sigmoid"},
                                   {"relu", {}, {0.5f}, "Relu"}};
  for (const Case& c : cases) {
    reset_fake_lt();
    driver_log().launches.clear();
    Ref<Model> model = dense_model(2, 3, 2, c.activation, c.attrs, values(6, 1.0f, 0.5f), c.bias);
    run(model, {2, 3}, values(6, 1.0f, 0.5f));
    EXPECT_TRUE(fake_lt().matmuls.empty()) << c.activation << " went to cuBLASLt";
    ASSERT_EQ(driver_log().launches.size(), 1u) << c.activation;
    EXPECT_NE(driver_log().launches[0].find("matmul_tiled"), std::string::npos) << driver_log().launches[0];
    EXPECT_NE(driver_log().launches[0].find(c.kernel_part), std::string::npos) << driver_log().launches[0];
  }
}

TEST_F(CublasLtEngine, EnvironmentSwitchKeepsTheTiledKernel) {
  setenv("MAX_C_CUBLASLT", "0", 1);
  const std::vector<float> w = values(12, -1.0f, 0.5f), x = values(6, 0.5f, 0.75f);
  Ref<Model> model = matmul_model({2, 3}, 3, 4, w);
  EXPECT_EQ(run(model, {2, 3}, x), reference(1, 2, 4, 3, x, w));
  EXPECT_TRUE(fake_lt().matmuls.empty());
  EXPECT_TRUE(fake_lt().heuristic_descs.empty()) << "cuBLASLt was asked to plan";
  EXPECT_EQ(launches_of("matmul_tiled"), 1u);
}

TEST_F(CublasLtEngine, NoAlgorithmForTheShapeKeepsTheTiledKernel) {
  fake_lt().heuristic_finds_none = true;
  const std::vector<float> w = values(12, -1.0f, 0.5f), x = values(6, 0.5f, 0.75f);
  Ref<Model> model = matmul_model({2, 3}, 3, 4, w);
  EXPECT_EQ(run(model, {2, 3}, x), reference(1, 2, 4, 3, x, w));
  EXPECT_TRUE(fake_lt().matmuls.empty());
  EXPECT_EQ(launches_of("matmul_tiled"), 1u);
}

TEST_F(CublasLtEngine, CublasLtFailureFailsTheCallNamingTheOp) {
  Ref<Model> model = matmul_model({2, 3}, 3, 4, values(12, 1.0f, 0.5f));
  fake_lt().matmul_result = cuda::cublas_status::kExecutionFailed;
  Ref<Tensor> in = host_tensor({2, 3}, values(6, 1.0f, 0.5f))->copy(gpu_);
  EXPECT_MAXC_ERROR(model->execute(std::vector<Ref<Tensor>>{in}), Code::kInternal,
                    "op 'matmul': cublasLtMatmul failed: CUBLAS_STATUS_EXECUTION_FAILED");
  fake_lt().matmul_result = cuda::cublas_status::kSuccess;
  EXPECT_NO_THROW(model->execute(std::vector<Ref<Tensor>>{in})) << "the model is not usable after a failed call";
}

TEST_F(CublasLtEngine, HandleFailureFailsTheCompileNamingTheOpAndTheSwitch) {
  fake_lt().create_result = cuda::cublas_status::kNotInitialized;
  Graph g("matmul");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3}));
  ValueId w = g.add_input("w", f32_on_gpu({3, 4}));
  g.set_outputs({{"y", g.add_op("matmul", {x, w})[0]}});
  // Plans are built for concrete shapes: at compile for static ones, else at the first call.
  auto attempt = [&] {
    Ref<Model> model = compile(g);
    model->execute(std::vector<Ref<Tensor>>{host_tensor({2, 3}, values(6, 1, 1))->copy(gpu_),
                                            host_tensor({3, 4}, values(12, 1, 1))->copy(gpu_)});
  };
  EXPECT_MAXC_ERROR(attempt(), Code::kUnavailable, "op 'matmul': cublasLtCreate on cuda:0",
                    "CUBLAS_STATUS_NOT_INITIALIZED", "MAX_C_CUBLASLT=0");
}

// The algorithm's workspace comes from the plan's device arena, aligned as cuBLASLt wants it.
TEST_F(CublasLtEngine, WorkspaceIsScratchInTheDeviceArena) {
  fake_lt().algo_workspace = 4096;
  Ref<Model> model = matmul_model({2, 3}, 3, 4, values(12, 1.0f, 0.5f));
  run(model, {2, 3}, values(6, 1.0f, 0.5f));
  ASSERT_EQ(fake_lt().matmuls.size(), 1u);
  const FakeLtMatmulCall& call = fake_lt().matmuls[0];
  EXPECT_EQ(call.workspace_bytes, 4096u);
  EXPECT_TRUE(in_device_memory(call.workspace));
  EXPECT_TRUE(in_device_memory(static_cast<char*>(call.workspace) + 4095));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(call.workspace) % 256, 0u);
}

TEST_F(CublasLtEngine, MissingLibraryLeavesMatmulsOnTheTiledKernel) {
  cuda::set_process_cublaslt(cuda::load_cublaslt({"/nonexistent/libcublasLt.so.12"}));
  ASSERT_FALSE(cuda::cublaslt()->available);
  const std::vector<float> w = values(20, -1.0f, 0.25f), x = values(8, 0.5f, 0.5f);
  Ref<Model> model = matmul_model({2, 4}, 4, 5, w);
  EXPECT_EQ(run(model, {2, 4}, x), reference(1, 2, 5, 4, x, w));
  EXPECT_EQ(launches_of("matmul_tiled"), 1u);
}

}  // namespace
}  // namespace maxc::testing

// cuBLASLt's loader (binding, the search, unavailability with its reasons, status names) and
// the row-major matmul plan on the fake library of fake_cublaslt.h, which multiplies as the
// column-major cuBLASLt does, over the fake driver's host memory. The plan's tests run twice:
// on cuBLASLt over a CUDA device, and on hipBLASLt (gpu/fake_hipblaslt.h, through the
// adapters of driver/hip/hipblaslt_api.h) over a HIP device. With
// MAX_C_CUBLASLT_LIBRARY naming a real libcublasLt (no GPU needed), the last tests check our
// hand-written ABI against it: every symbol binds, every attribute we set is accepted at the
// size we pass, and our status names are the library's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include "driver/cuda/cublaslt_api.h"
#include "driver/cuda/cublaslt_matmul.h"
#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_driver.h"
#include "driver/test_util.h"
#include "gpu/fake_cublaslt.h"
#include "gpu/fake_cuda.h"
#include "gpu/fake_hip.h"
#include "gpu/fake_hipblaslt.h"
#include "kernels/cpu/half.h"

namespace maxc::cuda {
// gtest prints a test's parameter with this: "HIP" rather than its bytes.
inline void PrintTo(GpuBackend backend, std::ostream* os) { *os << backend_name(backend); }
}  // namespace maxc::cuda

namespace maxc::testing {
namespace {

using namespace maxc::cuda;

std::shared_ptr<const CublasLtLibrary> fake_library() {
  return init_cublaslt([](const char* n) { return fake_cublaslt_symbol(n); }, "fake cuBLASLt");
}

// ---- the loader ----

TEST(CublasLtLoader, BindsEveryFunctionThroughTheLookup) {
  reset_fake_lt();
  auto lib = fake_library();
  ASSERT_TRUE(lib->available) << lib->unavailable_reason;
  EXPECT_EQ(lib->version_string(), "12.6.4");
  EXPECT_EQ(lib->path, "fake cuBLASLt");
#define MAXC_EXPECT_BOUND(ret, name, params) EXPECT_NE(lib->api.name, nullptr) << #name;
  MAXC_CUBLASLT_FUNCTIONS(MAXC_EXPECT_BOUND)
#undef MAXC_EXPECT_BOUND
}

TEST(CublasLtLoader, MissingSymbolIsTheReason) {
  auto lib = init_cublaslt([](const char* n) { return fake_cublaslt_symbol(n, {"cublasLtMatmulAlgoGetHeuristic"}); },
                           "old cuBLASLt");
  EXPECT_FALSE(lib->available);
  EXPECT_EQ(lib->api.cublasLtCreate, nullptr) << "an incomplete table must not be left half bound";
  EXPECT_NE(lib->unavailable_reason.find("old cuBLASLt lacks cublasLtMatmulAlgoGetHeuristic"), std::string::npos)
      << lib->unavailable_reason;
}

TEST(CublasLtLoader, LibraryThatReportsNoVersionIsRefused) {
  reset_fake_lt();
  fake_lt().version = 0;
  auto lib = fake_library();
  EXPECT_FALSE(lib->available);
  EXPECT_NE(lib->unavailable_reason.find("cublasLtGetVersion returned 0"), std::string::npos) << lib->unavailable_reason;
  reset_fake_lt();
}

TEST(CublasLtLoader, AbsentLibraryIsUnavailableWithEveryPlaceSearched) {
  auto lib = load_cublaslt({"/nonexistent/libcublasLt.so.12", "libmaxc_no_such_cublasLt.so"});
  EXPECT_FALSE(lib->available);
  for (const char* piece : {"/nonexistent/libcublasLt.so.12", "libmaxc_no_such_cublasLt.so", "MAX_C_CUBLASLT_LIBRARY"})
    EXPECT_NE(lib->unavailable_reason.find(piece), std::string::npos) << lib->unavailable_reason;
}

TEST(CublasLtLoader, LibraryWithoutItsSymbolsIsRefusedNamingTheFirstMissing) {
  auto lib = load_cublaslt({"libm.so.6"});
  EXPECT_FALSE(lib->available);
  EXPECT_NE(lib->unavailable_reason.find("libm.so.6 lacks cublasLtGetVersion"), std::string::npos)
      << lib->unavailable_reason;
}

TEST(CublasLtLoader, CandidatesFollowTheEnvironment) {
  const char* saved = std::getenv("MAX_C_CUBLASLT_LIBRARY");
  const std::string before = saved ? saved : "";
  setenv("MAX_C_CUBLASLT_LIBRARY", "/opt/cuda/lib64/libcublasLt.so.12", 1);
  EXPECT_EQ(cublaslt_library_candidates(), (std::vector<std::string>{"/opt/cuda/lib64/libcublasLt.so.12"}));
  unsetenv("MAX_C_CUBLASLT_LIBRARY");
  EXPECT_EQ(cublaslt_library_candidates(),
            (std::vector<std::string>{"libcublasLt.so.12", "libcublasLt.so.13", "libcublasLt.so"}));
  if (saved) setenv("MAX_C_CUBLASLT_LIBRARY", before.c_str(), 1);
}

TEST(CublasLtLoader, StatusesBecomeErrorsWithTheirNames) {
  EXPECT_EQ(cublas_status_name(cublas_status::kNotSupported), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_EQ(cublas_status_name(99), "cuBLAS status 99");
  EXPECT_NO_THROW(check_cublas(cublas_status::kSuccess, "x"));
  EXPECT_MAXC_ERROR(check_cublas(cublas_status::kAllocFailed, "cublasLtMatmul"), Code::kResourceExhausted,
                    "cublasLtMatmul failed: CUBLAS_STATUS_ALLOC_FAILED");
  EXPECT_MAXC_ERROR(check_cublas(cublas_status::kExecutionFailed, "cublasLtMatmul"), Code::kInternal,
                    "CUBLAS_STATUS_EXECUTION_FAILED");
  EXPECT_MAXC_ERROR(check_cublas(cublas_status::kArchMismatch, "cublasLtMatmul"), Code::kUnimplemented,
                    "CUBLAS_STATUS_ARCH_MISMATCH");
}

// ---- the plan, on the fake library and driver ----

class CublasLtPlanTest : public ::testing::TestWithParam<GpuBackend> {
 protected:
  void SetUp() override {
    reset_fake_hip();
    reset_fake_hiplt();
    if (hip())
      driver_ = init_hip_driver([](const char* n) { return fake_hip_symbol(n); }, "fake HIP");
    else
      driver_ = init_cuda_driver([](const char* n) { return fake_cuda_symbol(n); }, "fake");
    ASSERT_TRUE(driver_->available) << driver_->unavailable_reason;
    device_ = std::make_unique<CudaDevice>(driver_->api, 0);
    handle_ = CublasLtHandle::get(library(), *device_);
  }
  bool hip() const { return GetParam() == GpuBackend::kHip; }
  // A fresh library of the backend's: the fake cuBLASLt, or the fake hipBLASLt bound as one.
  std::shared_ptr<const CublasLtLibrary> library() const {
    if (!hip()) return fake_library();
    auto lib = init_cublaslt([](const char* n) { return fake_hipblaslt_symbol(n); }, "fake hipBLASLt", GpuBackend::kHip);
    EXPECT_TRUE(lib->available) << lib->unavailable_reason;
    return lib;
  }
  void TearDown() override {
    handle_.reset();
    EXPECT_EQ(fake_lt().handles_live, 0);
    EXPECT_EQ(fake_lt().descs_live, 0);
    EXPECT_EQ(fake_lt().layouts_live, 0);
    EXPECT_EQ(fake_lt().preferences_live, 0);
    device_.reset();
    EXPECT_EQ(fake().context_depth, 0) << "a context push was not popped";
  }

  std::unique_ptr<CublasLtMatmul> plan(const CublasLtMatmulSpec& spec) {
    std::string why;
    auto p = CublasLtMatmul::plan(handle_, spec, &why);
    EXPECT_TRUE(p) << why;
    return p;
  }

  std::unique_ptr<CudaDriver> driver_;
  std::unique_ptr<CudaDevice> device_;
  std::shared_ptr<const CublasLtHandle> handle_;
};

// Row-major reference: c[b][i][j] = act(sum_p a[b][i][p] * B[b][p][j] + bias[j]).
std::vector<float> reference(const CublasLtMatmulSpec& s, const std::vector<float>& a, const std::vector<float>& b,
                             const std::vector<float>& bias) {
  std::vector<float> c(static_cast<size_t>(s.batch * s.m * s.n));
  for (int64_t t = 0; t < s.batch; ++t)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double acc = bias.empty() ? 0.0 : bias[j];
        for (int64_t p = 0; p < s.k; ++p) {
          const float bv = s.b_transposed ? b[t * s.b_batch_stride + j * s.k + p] : b[t * s.b_batch_stride + p * s.n + j];
          acc += double(a[t * s.a_batch_stride + i * s.k + p]) * bv;
        }
        auto x = static_cast<float>(acc);
        if (s.activation == CublasLtActivation::kRelu) x = std::max(x, 0.0f);
        if (s.activation == CublasLtActivation::kGeluTanh)
          x = 0.5f * x * (1.0f + std::tanh(0.79788456f * (x + 0.044715f * x * x * x)));
        c[t * s.m * s.n + i * s.n + j] = x;
      }
  return c;
}

std::vector<float> iota_values(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % 7) - 0.25f * static_cast<float>(i % 3);
  return v;
}

// Buffers 16-byte aligned, as the plan requires (vector's allocator aligns to 16 on x86-64).
TEST_P(CublasLtPlanTest, RowMajorMatmulIsTheTransposedColumnMajorOne) {
  CublasLtMatmulSpec s;
  s.m = 3;
  s.n = 5;
  s.k = 4;
  auto p = plan(s);
  ASSERT_TRUE(p);
  ASSERT_EQ(fake_lt().heuristic_descs.size(), 1u);
  const FakeLtDesc& d = fake_lt().heuristic_descs[0];
  EXPECT_EQ(d.compute_type, 68) << "CUBLAS_COMPUTE_32F: exact float32 unless TF32 is asked for";
  EXPECT_EQ(d.scale_type, 0) << "CUDA_R_32F";
  EXPECT_EQ(d.epilogue, 1u) << "CUBLASLT_EPILOGUE_DEFAULT";
  const FakeLtPreference& pref = fake_lt().heuristic_preferences[0];
  EXPECT_EQ(pref.max_workspace, uint64_t{32} << 20);
  // hipBLASLt has no alignment preference: the fake's defaults stay as they were.
  for (uint32_t alignment : pref.min_alignment) EXPECT_EQ(alignment, hip() ? 256u : 16u);
  EXPECT_EQ(p->workspace_bytes(), 0u);

  const std::vector<float> a = iota_values(12, -1.0f, 0.5f), b = iota_values(20, 0.5f, -0.25f);
  std::vector<float> c(15, -99.0f);
  p->run(a.data(), b.data(), nullptr, c.data(), nullptr, nullptr);
  ASSERT_EQ(fake_lt().matmuls.size(), 1u);
  const FakeLtMatmulCall& call = fake_lt().matmuls[0];
  EXPECT_EQ(call.a_ptr, b.data()) << "cuBLASLt's A is our B";
  EXPECT_EQ(call.b_ptr, a.data()) << "cuBLASLt's B is our A";
  EXPECT_EQ(call.d_ptr, c.data());
  EXPECT_EQ(call.alpha, 1.0f);
  EXPECT_EQ(call.beta, 0.0f);
  EXPECT_EQ(c, reference(s, a, b, {}));
}

TEST_P(CublasLtPlanTest, TransposedRhsIsTransa) {
  CublasLtMatmulSpec s;
  s.m = 2;
  s.n = 3;
  s.k = 5;
  s.b_transposed = true;  // B stored [n][k]
  auto p = plan(s);
  ASSERT_TRUE(p);
  const std::vector<float> a = iota_values(10, 1.0f, 0.5f), b = iota_values(15, -2.0f, 0.75f);
  std::vector<float> c(6);
  p->run(a.data(), b.data(), nullptr, c.data(), nullptr, nullptr);
  EXPECT_EQ(fake_lt().matmuls[0].desc.trans_a, 1) << "CUBLAS_OP_T";
  EXPECT_EQ(fake_lt().matmuls[0].desc.trans_b, 0) << "CUBLAS_OP_N";
  EXPECT_EQ(c, reference(s, a, b, {}));
}

TEST_P(CublasLtPlanTest, BatchesWithASharedOperandUseStrideZero) {
  CublasLtMatmulSpec s;
  s.m = 2;
  s.n = 3;
  s.k = 4;
  s.batch = 3;
  s.a_batch_stride = s.m * s.k;
  s.b_batch_stride = 0;  // one B for every batch
  auto p = plan(s);
  ASSERT_TRUE(p);
  const std::vector<float> a = iota_values(24, -1.5f, 0.5f), b = iota_values(12, 0.25f, 0.5f);
  std::vector<float> c(18);
  p->run(a.data(), b.data(), nullptr, c.data(), nullptr, nullptr);
  const FakeLtMatmulCall& call = fake_lt().matmuls[0];
  EXPECT_EQ(call.a.batch_count, 3);
  EXPECT_EQ(call.a.batch_stride, 0);
  EXPECT_EQ(call.b.batch_stride, 8);
  EXPECT_EQ(call.d.batch_stride, 6);
  EXPECT_EQ(c, reference(s, a, b, {}));
}

TEST_P(CublasLtPlanTest, BiasAndReluAreTheEpilogue) {
  CublasLtMatmulSpec s;
  s.m = 2;
  s.n = 4;
  s.k = 3;
  s.bias = true;
  s.activation = CublasLtActivation::kRelu;
  auto p = plan(s);
  ASSERT_TRUE(p);
  // The heuristic saw a stand-in bias pointer aligned exactly as the plan promises.
  EXPECT_EQ(fake_lt().heuristic_descs[0].bias, reinterpret_cast<const void*>(CublasLtMatmul::kAlignment));
  EXPECT_EQ(fake_lt().heuristic_descs[0].epilogue, 6u) << "CUBLASLT_EPILOGUE_RELU_BIAS";
  EXPECT_EQ(fake_lt().heuristic_descs[0].bias_type, 0) << "CUDA_R_32F";
  const std::vector<float> a = iota_values(6, -2.0f, 0.75f), b = iota_values(12, -1.0f, 0.5f);
  const std::vector<float> bias = {0.5f, -3.0f, 1.0f, 0.0f};
  std::vector<float> c(8);
  p->run(a.data(), b.data(), bias.data(), c.data(), nullptr, nullptr);
  EXPECT_EQ(fake_lt().matmuls[0].desc.bias, bias.data());
  EXPECT_EQ(c, reference(s, a, b, bias));
  EXPECT_TRUE(std::any_of(c.begin(), c.end(), [](float x) { return x == 0.0f; })) << "relu clamped nothing";
}

TEST_P(CublasLtPlanTest, HalfPrecisionWithBiasAndTanhGelu) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    fake_lt().heuristic_descs.clear();
    CublasLtMatmulSpec s;
    s.dtype = dtype;
    s.m = 3;
    s.n = 2;
    s.k = 4;
    s.bias = true;
    s.activation = CublasLtActivation::kGeluTanh;
    s.allow_tf32 = true;  // means nothing for half types
    auto p = plan(s);
    ASSERT_TRUE(p);
    const FakeLtDesc& d = fake_lt().heuristic_descs[0];
    EXPECT_EQ(d.compute_type, 68) << "CUBLAS_COMPUTE_32F";
    EXPECT_EQ(d.epilogue, 36u) << "CUBLASLT_EPILOGUE_GELU_BIAS";
    EXPECT_EQ(d.bias_type, dtype == DType::kFloat16 ? 2 : 14);
    auto to_half = [&](const std::vector<float>& v) {
      std::vector<uint16_t> h(v.size());
      for (size_t i = 0; i < v.size(); ++i) h[i] = dtype == DType::kFloat16 ? cpu::float_to_f16(v[i]) : cpu::float_to_bf16(v[i]);
      return h;
    };
    const std::vector<float> a = iota_values(12, -1.0f, 0.5f), b = iota_values(8, 0.5f, -0.25f), bias = {0.25f, -0.5f};
    const auto ah = to_half(a), bh = to_half(b), biash = to_half(bias);
    std::vector<uint16_t> ch(6);
    p->run(ah.data(), bh.data(), biash.data(), ch.data(), nullptr, nullptr);
    const std::vector<float> want = reference(s, a, b, bias);
    for (size_t i = 0; i < ch.size(); ++i) {
      const float got = dtype == DType::kFloat16 ? cpu::f16_to_float(ch[i]) : cpu::bf16_to_float(ch[i]);
      EXPECT_NEAR(got, want[i], 0.03f * (1.0f + std::fabs(want[i]))) << dtype_name(dtype) << " element " << i;
    }
  }
}

TEST_P(CublasLtPlanTest, Tf32OnlyWhenAskedForFloat32) {
  CublasLtMatmulSpec s;
  s.m = s.n = s.k = 2;
  s.allow_tf32 = true;
  auto p = plan(s);
  EXPECT_EQ(fake_lt().heuristic_descs[0].compute_type, 77) << "CUBLAS_COMPUTE_32F_FAST_TF32";
}

TEST_P(CublasLtPlanTest, WorkspaceIsTheAlgorithmsPlusAlignmentSlack) {
  fake_lt().algo_workspace = 1000;
  CublasLtMatmulSpec s;
  s.m = s.n = s.k = 2;
  auto p = plan(s);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->workspace_bytes(), 1000u + 256u);
  std::vector<float> a(4, 1.0f), b(4, 1.0f), c(4);
  // What the arena hands over: workspace_bytes() at an address aligned to 64 but not to 256.
  std::vector<unsigned char> storage(p->workspace_bytes() + 256 + 64);
  const uintptr_t start = reinterpret_cast<uintptr_t>(storage.data());
  unsigned char* workspace = storage.data() + ((start + 255) / 256 * 256 - start) + 64;
  p->run(a.data(), b.data(), nullptr, c.data(), workspace, nullptr);
  const FakeLtMatmulCall& call = fake_lt().matmuls[0];
  EXPECT_EQ(reinterpret_cast<uintptr_t>(call.workspace) % 256, 0u);
  EXPECT_GE(static_cast<unsigned char*>(call.workspace), workspace);
  EXPECT_LE(static_cast<unsigned char*>(call.workspace) + call.workspace_bytes, workspace + p->workspace_bytes());
  EXPECT_EQ(call.workspace_bytes, 1000u);
  EXPECT_EQ(c, (std::vector<float>{2, 2, 2, 2}));
}

TEST_P(CublasLtPlanTest, WhatCublasLtCannotTakeIsNullWithTheReason) {
  std::string why;
  CublasLtMatmulSpec s;
  s.m = s.n = s.k = 2;
  s.dtype = DType::kFloat64;
  EXPECT_FALSE(CublasLtMatmul::plan(handle_, s, &why));
  EXPECT_NE(why.find("not float64"), std::string::npos) << why;
  s.dtype = DType::kFloat32;
  s.k = 0;
  EXPECT_FALSE(CublasLtMatmul::plan(handle_, s, &why));
  EXPECT_NE(why.find("empty"), std::string::npos) << why;
  s.k = 2;
  fake_lt().heuristic_finds_none = true;
  EXPECT_FALSE(CublasLtMatmul::plan(handle_, s, &why));
  EXPECT_NE(why.find("no algorithm"), std::string::npos) << why;
  fake_lt().heuristic_finds_none = false;
  fake_lt().heuristic_result = cublas_status::kNotSupported;
  EXPECT_FALSE(CublasLtMatmul::plan(handle_, s, &why));
  EXPECT_NE(why.find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos) << why;
}

TEST_P(CublasLtPlanTest, FailuresThrowWithTheStatusName) {
  CublasLtMatmulSpec s;
  s.m = s.n = s.k = 2;
  fake_lt().heuristic_result = cublas_status::kInvalidValue;
  std::string why;
  EXPECT_MAXC_ERROR(CublasLtMatmul::plan(handle_, s, &why), Code::kInternal,
                    "cublasLtMatmulAlgoGetHeuristic failed: CUBLAS_STATUS_INVALID_VALUE");
  fake_lt().heuristic_result = cublas_status::kSuccess;
  auto p = plan(s);
  ASSERT_TRUE(p);
  fake_lt().matmul_result = cublas_status::kExecutionFailed;
  std::vector<float> a(4), b(4), c(4);
  EXPECT_MAXC_ERROR(p->run(a.data(), b.data(), nullptr, c.data(), nullptr, nullptr), Code::kInternal,
                    "cublasLtMatmul failed: CUBLAS_STATUS_EXECUTION_FAILED");
}

TEST_P(CublasLtPlanTest, OneHandlePerLibraryAndDeviceWhileHeld) {
  auto library = this->library();
  auto first = CublasLtHandle::get(library, *device_);
  auto second = CublasLtHandle::get(library, *device_);
  EXPECT_EQ(first.get(), second.get());
  EXPECT_NE(first.get(), handle_.get()) << "another library is another handle";
  EXPECT_EQ(fake_lt().handles_live, 2);
  first.reset();
  second.reset();
  EXPECT_EQ(fake_lt().handles_live, 1) << "a handle goes with its last holder";
}

TEST_P(CublasLtPlanTest, HandleCreationFailureNamesTheDevice) {
  auto library = this->library();
  fake_lt().create_result = cublas_status::kNotInitialized;
  const std::string device = hip() ? "hip:0 (Fake GPU 0, gfx90a:sramecc+:xnack-)" : "cuda:0 (Fake GPU 0, sm_90)";
  EXPECT_EQ(device_->describe(), device);
  const std::string message = "cublasLtCreate on " + device + " failed: CUBLAS_STATUS_NOT_INITIALIZED";
  EXPECT_MAXC_ERROR(CublasLtHandle::get(library, *device_), Code::kUnavailable, message.c_str());
}

INSTANTIATE_TEST_SUITE_P(Libraries, CublasLtPlanTest, ::testing::Values(GpuBackend::kCuda, GpuBackend::kHip),
                         [](const ::testing::TestParamInfo<GpuBackend>& info) {
                           return std::string(info.param == GpuBackend::kHip ? "hipBLASLt" : "cuBLASLt");
                         });

TEST(CublasLtAlignment, EveryPointerMustBeSixteenByteAligned) {
  alignas(16) static float buffer[16];
  EXPECT_TRUE(CublasLtMatmul::pointers_aligned(buffer, buffer + 4, nullptr, buffer + 8));
  EXPECT_FALSE(CublasLtMatmul::pointers_aligned(buffer + 1, buffer + 4, nullptr, buffer + 8));
  EXPECT_FALSE(CublasLtMatmul::pointers_aligned(buffer, buffer + 4, buffer + 2, buffer + 8));
}

// ---- a real libcublasLt, when MAX_C_CUBLASLT_LIBRARY names one ----

std::unique_ptr<CublasLtLibrary> real_library() {
  const char* env = std::getenv("MAX_C_CUBLASLT_LIBRARY");
  if (!env || !*env) return nullptr;
  return load_cublaslt({env});
}

TEST(CublasLtRealLibrary, BindsAndAcceptsEveryAttributeAtOurSizes) {
  auto lib = real_library();
  if (!lib) GTEST_SKIP() << "MAX_C_CUBLASLT_LIBRARY is not set";
  ASSERT_TRUE(lib->available) << lib->unavailable_reason;
  EXPECT_GE(lib->version, 110000u) << lib->version_string();
  const CublasLtApi& api = lib->api;
  // Descriptors live in host memory: no GPU is needed to make them.
  cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(api.cublasLtMatmulDescCreate(&desc, cublas_compute::k32F, cuda_data_type::kR32F), cublas_status::kSuccess);
  const int32_t op = cublas_op::kT, type = cuda_data_type::kR16BF;
  const uint32_t epi = epilogue::kGeluBias;
  const void* bias = reinterpret_cast<const void*>(CublasLtMatmul::kAlignment);
  EXPECT_EQ(api.cublasLtMatmulDescSetAttribute(desc, matmul_desc::kTransA, &op, sizeof op), 0);
  EXPECT_EQ(api.cublasLtMatmulDescSetAttribute(desc, matmul_desc::kTransB, &op, sizeof op), 0);
  EXPECT_EQ(api.cublasLtMatmulDescSetAttribute(desc, matmul_desc::kEpilogue, &epi, sizeof epi), 0);
  EXPECT_EQ(api.cublasLtMatmulDescSetAttribute(desc, matmul_desc::kBiasPointer, &bias, sizeof bias), 0);
  EXPECT_EQ(api.cublasLtMatmulDescSetAttribute(desc, matmul_desc::kBiasDataType, &type, sizeof type), 0);
  // A size other than the attribute's is refused: the checks above are not vacuous.
  const int64_t wide = 0;
  EXPECT_EQ(api.cublasLtMatmulDescSetAttribute(desc, matmul_desc::kTransA, &wide, sizeof wide),
            cublas_status::kInvalidValue);
  EXPECT_EQ(api.cublasLtMatmulDescDestroy(desc), 0);

  cublasLtMatrixLayout_t layout = nullptr;
  ASSERT_EQ(api.cublasLtMatrixLayoutCreate(&layout, cuda_data_type::kR16F, 8, 4, 8), 0);
  const int32_t count = 3;
  const int64_t stride = 0;
  EXPECT_EQ(api.cublasLtMatrixLayoutSetAttribute(layout, matrix_layout::kBatchCount, &count, sizeof count), 0);
  EXPECT_EQ(api.cublasLtMatrixLayoutSetAttribute(layout, matrix_layout::kStridedBatchOffset, &stride, sizeof stride), 0);
  EXPECT_EQ(api.cublasLtMatrixLayoutDestroy(layout), 0);

  cublasLtMatmulPreference_t pref = nullptr;
  ASSERT_EQ(api.cublasLtMatmulPreferenceCreate(&pref), 0);
  const uint64_t workspace = uint64_t{32} << 20;
  const uint32_t alignment = 16;
  EXPECT_EQ(api.cublasLtMatmulPreferenceSetAttribute(pref, matmul_pref::kMaxWorkspaceBytes, &workspace, sizeof workspace), 0);
  for (auto attribute : {matmul_pref::kMinAlignmentABytes, matmul_pref::kMinAlignmentBBytes,
                         matmul_pref::kMinAlignmentCBytes, matmul_pref::kMinAlignmentDBytes})
    EXPECT_EQ(api.cublasLtMatmulPreferenceSetAttribute(pref, attribute, &alignment, sizeof alignment), 0) << attribute;
  EXPECT_EQ(api.cublasLtMatmulPreferenceDestroy(pref), 0);
}

TEST(CublasLtRealLibrary, OurStatusNamesAreTheLibrarys) {
  auto lib = real_library();
  if (!lib) GTEST_SKIP() << "MAX_C_CUBLASLT_LIBRARY is not set";
  ASSERT_TRUE(lib->available) << lib->unavailable_reason;
  using NameFn = const char* (*)(cublasStatus_t);
  auto name_of = reinterpret_cast<NameFn>(lib->library->symbol("cublasLtGetStatusName"));
  if (!name_of) GTEST_SKIP() << "this libcublasLt has no cublasLtGetStatusName";
  for (cublasStatus_t s : {0, 1, 3, 7, 8, 11, 13, 14, 15, 16}) EXPECT_EQ(cublas_status_name(s), name_of(s)) << s;
}

}  // namespace
}  // namespace maxc::testing

// hipBLASLt bound into cuBLASLt's table (driver/hip/hipblaslt_api.h), against the fake of
// gpu/fake_hipblaslt.h: every adapter binds by its hipBLASLt name, the version comes through a
// handle of its own and in cuBLASLt's encoding, libraries older than 0.7 are refused, and
// every hipBLAS status becomes the cuBLAS status of its name. The matmul plan over it runs in
// cublaslt_test.cc, with the cuBLASLt plan's tests.
#include "driver/hip/hipblaslt_api.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "driver/cuda/cublaslt_api.h"
#include "gpu/fake_hipblaslt.h"

namespace maxc::testing {
namespace {

using namespace maxc::cuda;

std::unique_ptr<CublasLtLibrary> fake_hip_library(std::set<std::string> hidden = {}) {
  return init_cublaslt([hidden](const char* n) { return fake_hipblaslt_symbol(n, hidden); }, "fake hipBLASLt",
                       GpuBackend::kHip);
}

TEST(HipblasLtLoader, BindsEveryEntryAndReportsItsVersionThroughAHandle) {
  reset_fake_hiplt();
  auto lib = fake_hip_library();
  ASSERT_TRUE(lib->available) << lib->unavailable_reason;
  EXPECT_EQ(lib->backend, GpuBackend::kHip);
  EXPECT_STREQ(lib->name(), "hipBLASLt");
  EXPECT_EQ(lib->version_string(), "1.1.0");
  EXPECT_EQ(fake_hiplt().versions_asked, 1);
  EXPECT_EQ(fake_lt().handles_live, 0) << "the handle made to ask the version was kept";
#define MAXC_EXPECT_BOUND(ret, name, params) EXPECT_NE(lib->api.name, nullptr) << #name;
  MAXC_CUBLASLT_FUNCTIONS(MAXC_EXPECT_BOUND)
#undef MAXC_EXPECT_BOUND
}

TEST(HipblasLtLoader, MissingSymbolNamesItsHipblasLtName) {
  for (const char* hidden : {"hipblasLtMatmulAlgoGetHeuristic", "hipblasLtGetVersion"}) {
    auto lib = fake_hip_library({hidden});
    EXPECT_FALSE(lib->available);
    EXPECT_EQ(lib->unavailable_reason, std::string("fake hipBLASLt lacks ") + hidden + " (not hipBLASLt, or one too old)");
    EXPECT_EQ(lib->api.cublasLtMatmul, nullptr) << "an incomplete table was kept";
  }
}

TEST(HipblasLtLoader, VersionsBefore07AreRefusedNamingWhy) {
  reset_fake_hiplt();
  fake_hiplt().version = 600;  // 0.6.0: hipBLASLt's own data and compute type numbering
  auto old = fake_hip_library();
  EXPECT_FALSE(old->available);
  EXPECT_NE(old->unavailable_reason.find("predates 0.7"), std::string::npos) << old->unavailable_reason;
  fake_hiplt().version = 700;
  auto first = fake_hip_library();
  EXPECT_TRUE(first->available) << first->unavailable_reason;
  EXPECT_EQ(first->version_string(), "0.7.0");
  fake_hiplt().version = 1001203;  // 10.12.3: a two-digit minor, re-encoded as cuBLASLt writes it
  EXPECT_EQ(fake_hip_library()->version_string(), "10.12.3");
}

TEST(HipblasLtLoader, NoHandleMeansNoVersionAndNoLibrary) {
  reset_fake_hiplt();
  fake_lt().create_result = cublas_status::kNotInitialized;
  auto lib = fake_hip_library();
  EXPECT_FALSE(lib->available);
  EXPECT_NE(lib->unavailable_reason.find("made no handle"), std::string::npos) << lib->unavailable_reason;
  reset_fake_hiplt();
}

TEST(HipblasLtLoader, AbsentLibraryNamesItsVariable) {
  auto lib = load_cublaslt({"/nonexistent/libhipblaslt.so.0"}, GpuBackend::kHip);
  EXPECT_FALSE(lib->available);
  EXPECT_EQ(lib->backend, GpuBackend::kHip);
  EXPECT_EQ(lib->unavailable_reason.rfind("hipBLASLt not found (set MAX_C_HIPBLASLT_LIBRARY", 0), 0u)
      << lib->unavailable_reason;
  EXPECT_NE(lib->unavailable_reason.find("/nonexistent/libhipblaslt.so.0"), std::string::npos);
  auto not_one = load_cublaslt({"libm.so.6"}, GpuBackend::kHip);
  EXPECT_NE(not_one->unavailable_reason.find("libm.so.6 lacks hipblasLtGetVersion (not hipBLASLt"), std::string::npos)
      << not_one->unavailable_reason;
}

TEST(HipblasLtLoader, CandidatesFollowTheEnvironment) {
  ::setenv("MAX_C_HIPBLASLT_LIBRARY", "/opt/rocm/lib/libhipblaslt.so.0", 1);
  EXPECT_EQ(hip::hipblaslt_library_candidates(), (std::vector<std::string>{"/opt/rocm/lib/libhipblaslt.so.0"}));
  ::unsetenv("MAX_C_HIPBLASLT_LIBRARY");
  EXPECT_EQ(hip::hipblaslt_library_candidates(),
            (std::vector<std::string>{"libhipblaslt.so.1", "libhipblaslt.so.0", "libhipblaslt.so"}));
}

TEST(HipblasLtLoader, EveryHipblasStatusIsTheCublasStatusOfItsName) {
  // hipblas-common.h's numbering, and the cuBLAS status each is reported as.
  const std::vector<std::pair<int32_t, std::string>> cases = {
      {0, "CUBLAS_STATUS_SUCCESS"},          {1, "CUBLAS_STATUS_NOT_INITIALIZED"},
      {2, "CUBLAS_STATUS_ALLOC_FAILED"},     {3, "CUBLAS_STATUS_INVALID_VALUE"},
      {4, "CUBLAS_STATUS_MAPPING_ERROR"},    {5, "CUBLAS_STATUS_EXECUTION_FAILED"},
      {6, "CUBLAS_STATUS_INTERNAL_ERROR"},   {7, "CUBLAS_STATUS_NOT_SUPPORTED"},
      {8, "CUBLAS_STATUS_ARCH_MISMATCH"},    {9, "CUBLAS_STATUS_NOT_INITIALIZED"},  // HANDLE_IS_NULLPTR
      {10, "CUBLAS_STATUS_INVALID_VALUE"},   // INVALID_ENUM
      {11, "CUBLAS_STATUS_INTERNAL_ERROR"},  // UNKNOWN
      {42, "CUBLAS_STATUS_INTERNAL_ERROR"},  // newer than hipblas-common.h
  };
  for (const auto& [hip, name] : cases) EXPECT_EQ(cublas_status_name(hip::cublas_status_of(hip)), name) << hip;
  EXPECT_EQ(cublas_status_code(hip::cublas_status_of(7)), Code::kUnimplemented);
  EXPECT_EQ(cublas_status_code(hip::cublas_status_of(2)), Code::kResourceExhausted);
}

TEST(HipblasLtLoader, AttributesTheAdaptersDoNotKnowAreRefused) {
  reset_fake_hiplt();
  auto lib = fake_hip_library();
  ASSERT_TRUE(lib->available);
  const CublasLtApi& api = lib->api;
  cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(api.cublasLtMatmulDescCreate(&desc, cublas_compute::k32F, cuda_data_type::kR32F), 0);
  const int32_t conjugate = 2;  // CUBLAS_OP_C: the plan never asks it, so the adapter has no word for it
  EXPECT_EQ(api.cublasLtMatmulDescSetAttribute(desc, matmul_desc::kTransA, &conjugate, sizeof conjugate),
            cublas_status::kInvalidValue);
  const int32_t scale = 0;
  EXPECT_EQ(api.cublasLtMatmulDescSetAttribute(desc, 9 /* CUBLASLT_MATMUL_DESC_A_SCALE_POINTER */, &scale, sizeof scale),
            cublas_status::kInvalidValue);
  EXPECT_EQ(api.cublasLtMatmulDescDestroy(desc), 0);
  cublasLtMatmulDesc_t other = nullptr;
  EXPECT_EQ(api.cublasLtMatmulDescCreate(&other, 64 /* CUBLAS_COMPUTE_16F */, cuda_data_type::kR32F),
            cublas_status::kInvalidValue);
  EXPECT_EQ(fake_lt().descs_live, 0);
}

}  // namespace
}  // namespace maxc::testing

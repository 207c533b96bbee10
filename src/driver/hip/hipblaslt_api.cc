#include "driver/hip/hipblaslt_api.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace maxc::hip {
namespace {

namespace cu = cuda;

// hipBLASLt's functions the adapters call: the process has one hipBLASLt, and a table of plain
// function pointers has no room for a closure, so the adapters find them here.
struct HipblasLtCalls {
#define MAXC_HIPBLASLT_DECLARE(name, params) hipblasStatus_t(*name) params = nullptr;
  MAXC_HIPBLASLT_FUNCTIONS(MAXC_HIPBLASLT_DECLARE)
#undef MAXC_HIPBLASLT_DECLARE
};

HipblasLtCalls& calls() {
  static HipblasLtCalls c;
  return c;
}

// A descriptor attribute as hipBLASLt numbers it; -1 for one the plan never sets.
int32_t desc_attribute(cu::cublasLtMatmulDescAttributes_t a) {
  switch (a) {
    case cu::matmul_desc::kTransA: return hipblaslt_matmul_desc::kTransA;
    case cu::matmul_desc::kTransB: return hipblaslt_matmul_desc::kTransB;
    case cu::matmul_desc::kEpilogue: return hipblaslt_matmul_desc::kEpilogue;
    case cu::matmul_desc::kBiasPointer: return hipblaslt_matmul_desc::kBiasPointer;
    case cu::matmul_desc::kBiasDataType: return hipblaslt_matmul_desc::kBiasDataType;
    default: return -1;
  }
}

size_t get_version() {
  cu::cublasLtHandle_t handle = nullptr;
  if (calls().hipblasLtCreate(&handle) != hipblas_status::kSuccess) return 0;
  int version = 0;
  const hipblasStatus_t s = calls().hipblasLtGetVersion(handle, &version);
  calls().hipblasLtDestroy(handle);
  if (s != hipblas_status::kSuccess || version < kOldestHipblasLtVersion) return 0;
  const int major = version / 100000, minor = version / 100 % 1000, patch = version % 100;
  return static_cast<size_t>(major) * 10000 + static_cast<size_t>(minor) * 100 + static_cast<size_t>(patch);
}

cu::cublasStatus_t create(cu::cublasLtHandle_t* handle) { return cublas_status_of(calls().hipblasLtCreate(handle)); }

cu::cublasStatus_t destroy(cu::cublasLtHandle_t handle) { return cublas_status_of(calls().hipblasLtDestroy(handle)); }

cu::cublasStatus_t desc_create(cu::cublasLtMatmulDesc_t* desc, cu::cublasComputeType_t compute,
                               cu::cudaDataType_t scale) {
  int32_t hip_compute = 0;
  switch (compute) {
    case cu::cublas_compute::k32F: hip_compute = hipblas_compute::k32F; break;
    case cu::cublas_compute::k32FFastTF32: hip_compute = hipblas_compute::k32FFastTF32; break;
    default: return cu::cublas_status::kInvalidValue;
  }
  return cublas_status_of(calls().hipblasLtMatmulDescCreate(desc, hip_compute, scale));
}

cu::cublasStatus_t desc_destroy(cu::cublasLtMatmulDesc_t desc) {
  return cublas_status_of(calls().hipblasLtMatmulDescDestroy(desc));
}

cu::cublasStatus_t desc_set(cu::cublasLtMatmulDesc_t desc, cu::cublasLtMatmulDescAttributes_t attribute,
                            const void* value, size_t bytes) {
  const int32_t hip = desc_attribute(attribute);
  if (hip < 0) return cu::cublas_status::kInvalidValue;
  const bool transpose = attribute == cu::matmul_desc::kTransA || attribute == cu::matmul_desc::kTransB;
  if (!transpose) return cublas_status_of(calls().hipblasLtMatmulDescSetAttribute(desc, hip, value, bytes));
  int32_t op = 0;
  if (!value || bytes != sizeof op) return cu::cublas_status::kInvalidValue;
  std::memcpy(&op, value, sizeof op);
  if (op != cu::cublas_op::kN && op != cu::cublas_op::kT) return cu::cublas_status::kInvalidValue;
  const int32_t hip_op = op == cu::cublas_op::kN ? hipblas_op::kN : hipblas_op::kT;
  return cublas_status_of(calls().hipblasLtMatmulDescSetAttribute(desc, hip, &hip_op, sizeof hip_op));
}

cu::cublasStatus_t layout_create(cu::cublasLtMatrixLayout_t* layout, cu::cudaDataType_t type, uint64_t rows,
                                 uint64_t cols, int64_t ld) {
  return cublas_status_of(calls().hipblasLtMatrixLayoutCreate(layout, type, rows, cols, ld));
}

cu::cublasStatus_t layout_destroy(cu::cublasLtMatrixLayout_t layout) {
  return cublas_status_of(calls().hipblasLtMatrixLayoutDestroy(layout));
}

cu::cublasStatus_t layout_set(cu::cublasLtMatrixLayout_t layout, cu::cublasLtMatrixLayoutAttribute_t attribute,
                              const void* value, size_t bytes) {
  int32_t hip = 0;
  switch (attribute) {
    case cu::matrix_layout::kBatchCount: hip = hipblaslt_matrix_layout::kBatchCount; break;
    case cu::matrix_layout::kStridedBatchOffset: hip = hipblaslt_matrix_layout::kStridedBatchOffset; break;
    default: return cu::cublas_status::kInvalidValue;
  }
  return cublas_status_of(calls().hipblasLtMatrixLayoutSetAttribute(layout, hip, value, bytes));
}

cu::cublasStatus_t preference_create(cu::cublasLtMatmulPreference_t* preference) {
  return cublas_status_of(calls().hipblasLtMatmulPreferenceCreate(preference));
}

cu::cublasStatus_t preference_destroy(cu::cublasLtMatmulPreference_t preference) {
  return cublas_status_of(calls().hipblasLtMatmulPreferenceDestroy(preference));
}

cu::cublasStatus_t preference_set(cu::cublasLtMatmulPreference_t preference,
                                  cu::cublasLtMatmulPreferenceAttributes_t attribute, const void* value, size_t bytes) {
  switch (attribute) {
    case cu::matmul_pref::kMaxWorkspaceBytes:
      return cublas_status_of(calls().hipblasLtMatmulPreferenceSetAttribute(
          preference, hipblaslt_matmul_pref::kMaxWorkspaceBytes, value, bytes));
    case cu::matmul_pref::kMinAlignmentABytes:
    case cu::matmul_pref::kMinAlignmentBBytes:
    case cu::matmul_pref::kMinAlignmentCBytes:
    case cu::matmul_pref::kMinAlignmentDBytes:
      return value && bytes == sizeof(uint32_t) ? cu::cublas_status::kSuccess : cu::cublas_status::kInvalidValue;
    default: return cu::cublas_status::kInvalidValue;
  }
}

cu::cublasStatus_t heuristic(cu::cublasLtHandle_t handle, cu::cublasLtMatmulDesc_t desc, cu::cublasLtMatrixLayout_t a,
                             cu::cublasLtMatrixLayout_t b, cu::cublasLtMatrixLayout_t c, cu::cublasLtMatrixLayout_t d,
                             cu::cublasLtMatmulPreference_t preference, int requested,
                             cu::cublasLtMatmulHeuristicResult_t* results, int* returned) {
  if (requested <= 0) return cu::cublas_status::kInvalidValue;
  std::vector<hipblasLtMatmulHeuristicResult_t> hip(static_cast<size_t>(requested));
  int found = 0;
  const hipblasStatus_t s = calls().hipblasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, d, preference, requested,
                                                                    hip.data(), &found);
  if (s != hipblas_status::kSuccess) return cublas_status_of(s);
  *returned = found;
  for (int i = 0; i < found; ++i) {
    cu::cublasLtMatmulHeuristicResult_t& r = results[i];
    r = cu::cublasLtMatmulHeuristicResult_t{};
    std::memcpy(r.algo.data, &hip[i].algo, sizeof hip[i].algo);
    r.workspaceSize = hip[i].workspaceSize;
    r.state = cublas_status_of(hip[i].state);
    r.wavesCount = hip[i].wavesCount;
  }
  return cu::cublas_status::kSuccess;
}

cu::cublasStatus_t matmul(cu::cublasLtHandle_t handle, cu::cublasLtMatmulDesc_t desc, const void* alpha,
                          const void* a, cu::cublasLtMatrixLayout_t a_layout, const void* b,
                          cu::cublasLtMatrixLayout_t b_layout, const void* beta, const void* c,
                          cu::cublasLtMatrixLayout_t c_layout, void* d, cu::cublasLtMatrixLayout_t d_layout,
                          const cu::cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                          cu::CUstream stream) {
  hipblasLtMatmulAlgo_t hip_algo{};
  if (algo) std::memcpy(&hip_algo, algo->data, sizeof hip_algo);
  return cublas_status_of(calls().hipblasLtMatmul(handle, desc, alpha, a, a_layout, b, b_layout, beta, c, c_layout, d,
                                                  d_layout, algo ? &hip_algo : nullptr, workspace, workspace_bytes,
                                                  stream));
}

}  // namespace

cu::cublasStatus_t cublas_status_of(hipblasStatus_t s) {
  namespace cs = cu::cublas_status;
  switch (s) {
    case hipblas_status::kSuccess: return cs::kSuccess;
    case hipblas_status::kNotInitialized:
    case hipblas_status::kHandleIsNullptr: return cs::kNotInitialized;
    case hipblas_status::kAllocFailed: return cs::kAllocFailed;
    case hipblas_status::kInvalidValue:
    case hipblas_status::kInvalidEnum: return cs::kInvalidValue;
    case hipblas_status::kMappingError: return cs::kMappingError;
    case hipblas_status::kExecutionFailed: return cs::kExecutionFailed;
    case hipblas_status::kNotSupported: return cs::kNotSupported;
    case hipblas_status::kArchMismatch: return cs::kArchMismatch;
    default: return cs::kInternalError;  // INTERNAL_ERROR, UNKNOWN, and values newer than this file
  }
}

std::string bind_hipblaslt_as_cublaslt_api(const cuda::SymbolLookup& lookup, cuda::CublasLtApi& api) {
  HipblasLtCalls found;
#define MAXC_HIPBLASLT_BIND(name, params)                                 \
  found.name = reinterpret_cast<decltype(found.name)>(lookup(#name));     \
  if (!found.name) return #name;
  MAXC_HIPBLASLT_FUNCTIONS(MAXC_HIPBLASLT_BIND)
#undef MAXC_HIPBLASLT_BIND
  static std::mutex mu;
  {
    std::lock_guard lock(mu);
    calls() = found;
  }
  api.cublasLtGetVersion = get_version;
  api.cublasLtCreate = create;
  api.cublasLtDestroy = destroy;
  api.cublasLtMatmulDescCreate = desc_create;
  api.cublasLtMatmulDescDestroy = desc_destroy;
  api.cublasLtMatmulDescSetAttribute = desc_set;
  api.cublasLtMatrixLayoutCreate = layout_create;
  api.cublasLtMatrixLayoutDestroy = layout_destroy;
  api.cublasLtMatrixLayoutSetAttribute = layout_set;
  api.cublasLtMatmulPreferenceCreate = preference_create;
  api.cublasLtMatmulPreferenceDestroy = preference_destroy;
  api.cublasLtMatmulPreferenceSetAttribute = preference_set;
  api.cublasLtMatmulAlgoGetHeuristic = heuristic;
  api.cublasLtMatmul = matmul;
  return "";
}

std::vector<std::string> hipblaslt_library_candidates() {
  const char* env = std::getenv("MAX_C_HIPBLASLT_LIBRARY");
  if (env && *env) return {env};
  return {"libhipblaslt.so.1", "libhipblaslt.so.0", "libhipblaslt.so"};
}

}  // namespace maxc::hip

// hipBLASLt, AMD's GEMM library with fused epilogues, bound into cuBLASLt's function table
// (driver/cuda/cublaslt_api.h), as HIP's runtime is bound into the driver's: the matmul plan
// (driver/cuda/cublaslt_matmul.h) then serves AMD GPUs unchanged. hipBLASLt mirrors cuBLASLt
// call for call, but numbers almost everything differently, so every entry is a small adapter
// over hipBLASLt's own function:
//   statuses          hipBLAS numbers them apart; each is returned as the cuBLAS status of
//                     the same name (HANDLE_IS_NULLPTR as NOT_INITIALIZED, INVALID_ENUM as
//                     INVALID_VALUE, UNKNOWN as INTERNAL_ERROR)
//   compute types     CUBLAS_COMPUTE_32F and _32F_FAST_TF32 become HIPBLAS_COMPUTE_32F and
//                     _32F_FAST_TF32
//   attributes        the descriptor, layout and preference attributes the plan sets are
//                     renumbered, and TRANSA/TRANSB's values too (HIPBLAS_OP_N is 111); the
//                     MIN_ALIGNMENT preferences have no hipBLASLt counterpart and are taken
//                     as set (the plan keeps its alignment promise itself: pointers_aligned)
//   the algorithm     hipblasLtMatmulAlgo_t is 24 bytes, not 64: it travels inside
//                     cuBLASLt's algorithm struct, copied in by the heuristic adapter and out
//                     by the matmul adapter
//   the version       hipblasLtGetVersion needs a handle: the adapter makes one on the current
//                     device and gives the version in cuBLASLt's encoding
// Data types (hipDataType: R_32F 0, R_16F 2, R_16BF 14), epilogues and opaque handles are
// the same values and C ABI in both.
//
// The values below are hipBLASLt's documented ABI as hipblaslt.h and hipblas-common.h give it
// from hipBLASLt 0.7 (ROCm 6.1) on. Older hipBLASLt numbered data and compute types with
// types of its own, so a library reporting a version before 0.7 is refused (its version
// adapter reports 0, which the loader turns into the reason).
//
// Thread-safety: binding writes the process's adapter targets; bind once (the process's
// hipBLASLt, or one fake in a test binary) before any adapter runs. Every other call is as
// thread-safe as hipBLASLt's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "driver/cuda/cublaslt_api.h"

namespace maxc::hip {

using hipblasStatus_t = int32_t;

// hipblasLtMatmulAlgo_t: opaque bytes and the workspace the algorithm was chosen for.
struct hipblasLtMatmulAlgo_t {
  uint8_t data[16];
  size_t max_workspace_bytes;
};
struct hipblasLtMatmulHeuristicResult_t {
  hipblasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  hipblasStatus_t state;
  float wavesCount;
  int reserved[4];
};
static_assert(sizeof(hipblasLtMatmulAlgo_t) == 24, "hipblasLtMatmulAlgo_t is 24 bytes in hipblaslt.h");
static_assert(sizeof(hipblasLtMatmulHeuristicResult_t) == 56,
              "hipblasLtMatmulHeuristicResult_t is 56 bytes in hipblaslt.h");
static_assert(sizeof(hipblasLtMatmulAlgo_t) <= sizeof(cuda::cublasLtMatmulAlgo_t),
              "hipBLASLt's algorithm travels inside cuBLASLt's");

namespace hipblas_status {  // hipblasStatus_t (hipblas-common.h)
constexpr hipblasStatus_t kSuccess = 0;
constexpr hipblasStatus_t kNotInitialized = 1;
constexpr hipblasStatus_t kAllocFailed = 2;
constexpr hipblasStatus_t kInvalidValue = 3;
constexpr hipblasStatus_t kMappingError = 4;
constexpr hipblasStatus_t kExecutionFailed = 5;
constexpr hipblasStatus_t kInternalError = 6;
constexpr hipblasStatus_t kNotSupported = 7;
constexpr hipblasStatus_t kArchMismatch = 8;
constexpr hipblasStatus_t kHandleIsNullptr = 9;
constexpr hipblasStatus_t kInvalidEnum = 10;
constexpr hipblasStatus_t kUnknown = 11;
}  // namespace hipblas_status

namespace hipblas_compute {  // hipblasComputeType_t (hipblas-common.h)
constexpr int32_t k32F = 2;
constexpr int32_t k32FFastTF32 = 6;
}  // namespace hipblas_compute

namespace hipblas_op {  // hipblasOperation_t (hipblas-common.h)
constexpr int32_t kN = 111;
constexpr int32_t kT = 112;
}  // namespace hipblas_op

namespace hipblaslt_matmul_desc {  // hipblasLtMatmulDescAttributes_t
constexpr int32_t kTransA = 0;
constexpr int32_t kTransB = 1;
constexpr int32_t kEpilogue = 2;
constexpr int32_t kBiasPointer = 3;
constexpr int32_t kBiasDataType = 4;
}  // namespace hipblaslt_matmul_desc

namespace hipblaslt_matrix_layout {  // hipblasLtMatrixLayoutAttribute_t
constexpr int32_t kBatchCount = 0;
constexpr int32_t kStridedBatchOffset = 1;
}  // namespace hipblaslt_matrix_layout

namespace hipblaslt_matmul_pref {  // hipblasLtMatmulPreferenceAttributes_t
constexpr int32_t kMaxWorkspaceBytes = 1;
}  // namespace hipblaslt_matmul_pref

// The oldest hipBLASLt whose types are hipDataType and hipblasComputeType_t, in its own
// encoding (major * 100000 + minor * 100 + patch).
constexpr int kOldestHipblasLtVersion = 700;

// hipBLASLt's functions the adapters call, under hipBLASLt's names: X(name, parameters).
// Every one returns a hipblasStatus_t.
#define MAXC_HIPBLASLT_FUNCTIONS(X)                                                                           \
  X(hipblasLtGetVersion, (cuda::cublasLtHandle_t handle, int* version))                                      \
  X(hipblasLtCreate, (cuda::cublasLtHandle_t * handle))                                                      \
  X(hipblasLtDestroy, (cuda::cublasLtHandle_t handle))                                                       \
  X(hipblasLtMatmulDescCreate, (cuda::cublasLtMatmulDesc_t * desc, int32_t compute_type, int32_t scale_type)) \
  X(hipblasLtMatmulDescDestroy, (cuda::cublasLtMatmulDesc_t desc))                                           \
  X(hipblasLtMatmulDescSetAttribute,                                                                         \
    (cuda::cublasLtMatmulDesc_t desc, int32_t attribute, const void* value, size_t bytes))                   \
  X(hipblasLtMatrixLayoutCreate,                                                                             \
    (cuda::cublasLtMatrixLayout_t * layout, int32_t type, uint64_t rows, uint64_t cols, int64_t ld))         \
  X(hipblasLtMatrixLayoutDestroy, (cuda::cublasLtMatrixLayout_t layout))                                     \
  X(hipblasLtMatrixLayoutSetAttribute,                                                                       \
    (cuda::cublasLtMatrixLayout_t layout, int32_t attribute, const void* value, size_t bytes))               \
  X(hipblasLtMatmulPreferenceCreate, (cuda::cublasLtMatmulPreference_t * preference))                        \
  X(hipblasLtMatmulPreferenceDestroy, (cuda::cublasLtMatmulPreference_t preference))                         \
  X(hipblasLtMatmulPreferenceSetAttribute,                                                                   \
    (cuda::cublasLtMatmulPreference_t preference, int32_t attribute, const void* value, size_t bytes))       \
  X(hipblasLtMatmulAlgoGetHeuristic,                                                                         \
    (cuda::cublasLtHandle_t handle, cuda::cublasLtMatmulDesc_t desc, cuda::cublasLtMatrixLayout_t a,         \
     cuda::cublasLtMatrixLayout_t b, cuda::cublasLtMatrixLayout_t c, cuda::cublasLtMatrixLayout_t d,         \
     cuda::cublasLtMatmulPreference_t preference, int requested, hipblasLtMatmulHeuristicResult_t* results,  \
     int* returned))                                                                                         \
  X(hipblasLtMatmul,                                                                                         \
    (cuda::cublasLtHandle_t handle, cuda::cublasLtMatmulDesc_t desc, const void* alpha, const void* a,       \
     cuda::cublasLtMatrixLayout_t a_layout, const void* b, cuda::cublasLtMatrixLayout_t b_layout,            \
     const void* beta, const void* c, cuda::cublasLtMatrixLayout_t c_layout, void* d,                        \
     cuda::cublasLtMatrixLayout_t d_layout, const hipblasLtMatmulAlgo_t* algo, void* workspace,              \
     size_t workspace_bytes, cuda::CUstream stream))

// The cuBLASLt status of the same name as hipBLAS status `status`.
cuda::cublasStatus_t cublas_status_of(hipblasStatus_t status);

// Fills `api` with the adapters over hipBLASLt's functions, found through `lookup` by their
// hipBLASLt names. Returns the name of the first missing symbol ("" when all were found); the
// table is then incomplete and must not be used.
std::string bind_hipblaslt_as_cublaslt_api(const cuda::SymbolLookup& lookup, cuda::CublasLtApi& api);

// The libraries searched, in order: $MAX_C_HIPBLASLT_LIBRARY alone when set (a path or
// soname), else libhipblaslt.so.1 (ROCm 7), libhipblaslt.so.0 (ROCm 6), libhipblaslt.so.
std::vector<std::string> hipblaslt_library_candidates();

}  // namespace maxc::hip

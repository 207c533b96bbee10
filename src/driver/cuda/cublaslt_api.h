// cuBLASLt, NVIDIA's GEMM library with fused epilogues, loaded with dlopen like the driver and
// NVRTC: its function table, the library search, and its statuses as the project's errors.
// The types and constants below are spelled out by hand from NVIDIA's documented ABI, so no
// CUDA header is needed to build. Values are those of cublasLt.h, cublas_api.h and
// library_types.h of CUDA 12.6 (cuBLAS 12.6.4); each is a stable part of the ABI since cuBLAS
// 11.x (bias data type since 11.6) and unchanged in 12.9 and 13.x.
//
// Search order: $MAX_C_CUBLASLT_LIBRARY alone when set (a path or soname: the user said
// which), else libcublasLt.so.12, libcublasLt.so.13, libcublasLt.so. Loading never throws: a
// missing library is an ordinary answer with the reason, and matmuls use the tiled kernel.
// MAX_C_CUBLASLT=0 keeps the engine's matmuls off cuBLASLt even where it loads (the choice is
// made per node in engine/lower_gpu/linalg.cc, and logged at debug level).
//
// AMD's hipBLASLt fills the same table through adapters (driver/hip/hipblaslt_api.h), so one
// matmul plan serves both; a library's `backend` says which it is. The process keeps one of
// each: cuBLASLt for CUDA devices, hipBLASLt for HIP ones ($MAX_C_HIPBLASLT_LIBRARY, else
// libhipblaslt.so.1, .so.0, .so), and MAX_C_CUBLASLT=0 keeps matmuls off both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "driver/cuda/cuda_api.h"
#include "driver/cuda/dynamic_library.h"

namespace maxc::cuda {

// ---- types ---------------------------------------------------------------------------------
// C enums are int-sized on every platform CUDA supports; passing int32_t is the same ABI.
using cublasStatus_t = int32_t;
using cublasComputeType_t = int32_t;
using cudaDataType_t = int32_t;
using cublasOperation_t = int32_t;
using cublasLtMatmulDescAttributes_t = int32_t;
using cublasLtMatrixLayoutAttribute_t = int32_t;
using cublasLtMatmulPreferenceAttributes_t = int32_t;
using cublasLtEpilogue_t = uint32_t;  // the EPILOGUE attribute's value is a uint32_t

// Opaque handles: we only ever pass them back to the library.
struct cublasLtContext;
struct cublasLtMatmulDescOpaque;
struct cublasLtMatrixLayoutOpaque;
struct cublasLtMatmulPreferenceOpaque;
using cublasLtHandle_t = cublasLtContext*;
using cublasLtMatmulDesc_t = cublasLtMatmulDescOpaque*;
using cublasLtMatrixLayout_t = cublasLtMatrixLayoutOpaque*;
using cublasLtMatmulPreference_t = cublasLtMatmulPreferenceOpaque*;

// Semi-opaque: the caller owns the storage, so the sizes are part of the ABI.
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;  // bytes of workspace the algorithm needs
  cublasStatus_t state;  // the other fields are valid only when this is success
  float wavesCount;
  int reserved[4];
};
static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96, "cublasLtMatmulHeuristicResult_t is 96 bytes in cublasLt.h");

// ---- constants -----------------------------------------------------------------------------
namespace cublas_status {  // cublasStatus_t (cublas_api.h)
constexpr cublasStatus_t kSuccess = 0;
constexpr cublasStatus_t kNotInitialized = 1;
constexpr cublasStatus_t kAllocFailed = 3;
constexpr cublasStatus_t kInvalidValue = 7;
constexpr cublasStatus_t kArchMismatch = 8;
constexpr cublasStatus_t kMappingError = 11;
constexpr cublasStatus_t kExecutionFailed = 13;
constexpr cublasStatus_t kInternalError = 14;
constexpr cublasStatus_t kNotSupported = 15;
constexpr cublasStatus_t kLicenseError = 16;
}  // namespace cublas_status

namespace cublas_compute {  // cublasComputeType_t (cublas_api.h)
constexpr cublasComputeType_t k32F = 68;          // CUBLAS_COMPUTE_32F: fp32 accumulate, exact fp32 math
constexpr cublasComputeType_t k32FFastTF32 = 77;  // CUBLAS_COMPUTE_32F_FAST_TF32: fp32 inputs rounded to TF32
}  // namespace cublas_compute

namespace cuda_data_type {  // cudaDataType_t (library_types.h)
constexpr cudaDataType_t kR32F = 0;
constexpr cudaDataType_t kR16F = 2;
constexpr cudaDataType_t kR16BF = 14;
}  // namespace cuda_data_type

namespace cublas_op {  // cublasOperation_t (cublas_api.h)
constexpr cublasOperation_t kN = 0;
constexpr cublasOperation_t kT = 1;
}  // namespace cublas_op

namespace matmul_desc {  // cublasLtMatmulDescAttributes_t, with each value's C type
constexpr cublasLtMatmulDescAttributes_t kTransA = 3;         // int32_t (cublasOperation_t)
constexpr cublasLtMatmulDescAttributes_t kTransB = 4;         // int32_t (cublasOperation_t)
constexpr cublasLtMatmulDescAttributes_t kEpilogue = 7;       // uint32_t (cublasLtEpilogue_t)
constexpr cublasLtMatmulDescAttributes_t kBiasPointer = 8;    // const void*
constexpr cublasLtMatmulDescAttributes_t kBiasDataType = 26;  // int32_t (cudaDataType_t)
}  // namespace matmul_desc

namespace matrix_layout {  // cublasLtMatrixLayoutAttribute_t
constexpr cublasLtMatrixLayoutAttribute_t kBatchCount = 5;          // int32_t
constexpr cublasLtMatrixLayoutAttribute_t kStridedBatchOffset = 6;  // int64_t, elements
}  // namespace matrix_layout

namespace matmul_pref {  // cublasLtMatmulPreferenceAttributes_t
constexpr cublasLtMatmulPreferenceAttributes_t kMaxWorkspaceBytes = 1;  // uint64_t
constexpr cublasLtMatmulPreferenceAttributes_t kMinAlignmentABytes = 5;  // uint32_t (default 256)
constexpr cublasLtMatmulPreferenceAttributes_t kMinAlignmentBBytes = 6;
constexpr cublasLtMatmulPreferenceAttributes_t kMinAlignmentCBytes = 7;
constexpr cublasLtMatmulPreferenceAttributes_t kMinAlignmentDBytes = 8;
}  // namespace matmul_pref

namespace epilogue {  // cublasLtEpilogue_t
constexpr cublasLtEpilogue_t kDefault = 1;
constexpr cublasLtEpilogue_t kRelu = 2;
constexpr cublasLtEpilogue_t kBias = 4;
constexpr cublasLtEpilogue_t kReluBias = 6;  // bias, then relu
// GELU in its tanh approximation, 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), which is what
// cuBLASLt computes (PyTorch's _addmm_activation matches it with approximate='tanh').
constexpr cublasLtEpilogue_t kGelu = 32;
constexpr cublasLtEpilogue_t kGeluBias = 36;  // bias, then GELU
}  // namespace epilogue

// ---- the function table --------------------------------------------------------------------
// X(return type, name, parameters): one list drives the member declarations and the binding.
#define MAXC_CUBLASLT_FUNCTIONS(X)                                                                        \
  X(size_t, cublasLtGetVersion, ())                                                                      \
  X(cublasStatus_t, cublasLtCreate, (cublasLtHandle_t * handle))                                         \
  X(cublasStatus_t, cublasLtDestroy, (cublasLtHandle_t handle))                                          \
  X(cublasStatus_t, cublasLtMatmulDescCreate,                                                            \
    (cublasLtMatmulDesc_t * desc, cublasComputeType_t compute_type, cudaDataType_t scale_type))          \
  X(cublasStatus_t, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc))                              \
  X(cublasStatus_t, cublasLtMatmulDescSetAttribute,                                                      \
    (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const void* value, size_t bytes)) \
  X(cublasStatus_t, cublasLtMatrixLayoutCreate,                                                          \
    (cublasLtMatrixLayout_t * layout, cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld))    \
  X(cublasStatus_t, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout))                        \
  X(cublasStatus_t, cublasLtMatrixLayoutSetAttribute,                                                    \
    (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute, const void* value,        \
     size_t bytes))                                                                                      \
  X(cublasStatus_t, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * preference))           \
  X(cublasStatus_t, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t preference))            \
  X(cublasStatus_t, cublasLtMatmulPreferenceSetAttribute,                                                \
    (cublasLtMatmulPreference_t preference, cublasLtMatmulPreferenceAttributes_t attribute,              \
     const void* value, size_t bytes))                                                                   \
  X(cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,                                                      \
    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,                       \
     cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,                       \
     cublasLtMatmulPreference_t preference, int requested, cublasLtMatmulHeuristicResult_t* results,     \
     int* returned))                                                                                     \
  X(cublasStatus_t, cublasLtMatmul,                                                                      \
    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* a,               \
     cublasLtMatrixLayout_t a_layout, const void* b, cublasLtMatrixLayout_t b_layout, const void* beta,  \
     const void* c, cublasLtMatrixLayout_t c_layout, void* d, cublasLtMatrixLayout_t d_layout,           \
     const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes, CUstream stream))

struct CublasLtApi {
#define MAXC_CUBLASLT_DECLARE(ret, name, params) ret(*name) params = nullptr;
  MAXC_CUBLASLT_FUNCTIONS(MAXC_CUBLASLT_DECLARE)
#undef MAXC_CUBLASLT_DECLARE
};

// Fills every entry through `lookup`; the name of the first missing symbol, or "".
std::string bind_cublaslt_api(const SymbolLookup& lookup, CublasLtApi& api);

struct CublasLtLibrary {
  CublasLtApi api;
  GpuBackend backend = GpuBackend::kCuda;  // kHip: hipBLASLt behind the adapters
  bool available = false;
  std::string unavailable_reason;  // every place searched and why each failed
  std::string path;                // the name it was opened by
  size_t version = 0;              // cublasLtGetVersion: 120604 for 12.6.4
  std::unique_ptr<DynamicLibrary> library;  // null for a table bound by someone else (tests)

  std::string version_string() const;  // "12.6.4"
  const char* name() const;            // "cuBLASLt" or "hipBLASLt", for messages
};

// cuBLASLt's names searched, in order (see the top of this file); hipBLASLt's are
// hip::hipblaslt_library_candidates().
std::vector<std::string> cublaslt_library_candidates();
// The first candidate that opens and binds as `backend`'s library. Never throws.
std::unique_ptr<CublasLtLibrary> load_cublaslt(const std::vector<std::string>& candidates,
                                               GpuBackend backend = GpuBackend::kCuda);
// A table bound elsewhere (tests bind fakes), described as a loaded one would be: `lookup`
// finds cuBLASLt's symbols, or hipBLASLt's for kHip. Never throws.
std::unique_ptr<CublasLtLibrary> init_cublaslt(const SymbolLookup& lookup, const std::string& origin,
                                               GpuBackend backend = GpuBackend::kCuda);

// The process's library for `backend`'s devices: the one a test installed, else the search on
// the first call, kept to the end of the process. A real library calls its GPU runtime
// itself, so it is unavailable when the process's driver for `backend` is a table bound
// in-process (tests' fake drivers).
std::shared_ptr<const CublasLtLibrary> cublaslt(GpuBackend backend = GpuBackend::kCuda);
// Installs `library` as the process's library for `backend` (tests: a fake). Plans made before
// keep the library they were made with. Null removes the installed one: the searched one
// serves again.
void set_process_cublaslt(std::shared_ptr<const CublasLtLibrary> library, GpuBackend backend = GpuBackend::kCuda);

// "CUBLAS_STATUS_NOT_SUPPORTED", or "cuBLAS status <n>" for a value this file does not know.
std::string cublas_status_name(cublasStatus_t status);
// RESOURCE_EXHAUSTED for memory, UNIMPLEMENTED for what the library or device does not
// support, UNAVAILABLE for a library that cannot serve, INTERNAL for the rest.
Code cublas_status_code(cublasStatus_t status);
// Throws maxc::Error when `status` is not success: "<what> failed: CUBLAS_STATUS_...".
void check_cublas(cublasStatus_t status, const std::string& what);

}  // namespace maxc::cuda

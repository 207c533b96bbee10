// A fake hipBLASLt: hipBLASLt's symbols by their names, with hipBLASLt's numbering, over the
// fake cuBLASLt of fake_cublaslt.h. Each call reads hipBLASLt's numbers and keeps what they
// mean in the cuBLASLt fake's records (a TRANSA of HIPBLAS_OP_T is kept as CUBLAS_OP_T, a
// HIPBLAS_COMPUTE_32F as CUBLAS_COMPUTE_32F), and answers with hipBLAS's statuses, so tests
// written against the cuBLASLt fake hold for the hipBLASLt binding too, and a number the
// binding gets wrong shows as a value that means nothing (kept as kUnknownValue) or as a
// refused call.
//
// hipBLASLt's values are spelled here from hipblaslt.h and hipblas-common.h, apart from
// max_c's constants (driver/hip/hipblaslt_api.h), so a wrong constant there fails a test.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "driver/hip/hipblaslt_api.h"
#include "gpu/fake_cublaslt.h"

namespace maxc::testing {

struct FakeHipblasLt {
  int version = 100100;  // hipBLASLt 1.1.0, as hipblasLtGetVersion encodes it
  int versions_asked = 0;
};

inline FakeHipblasLt& fake_hiplt() {
  static FakeHipblasLt f;
  return f;
}
inline void reset_fake_hiplt() {
  reset_fake_lt();
  fake_hiplt() = FakeHipblasLt{};
}

namespace fake_hiplt_impl {

namespace lt = fake_lt_impl;
using Status = int32_t;  // hipblasStatus_t

constexpr int32_t kUnknownValue = -12345;  // what a number hipBLASLt does not know is kept as

// hipBLAS's status of the same name as cuBLAS status `s` (the fake cuBLASLt's answers).
inline Status hip_status(cublasStatus_t s) {
  switch (s) {
    case 0: return 0;   // SUCCESS
    case 1: return 1;   // NOT_INITIALIZED
    case 3: return 2;   // ALLOC_FAILED
    case 7: return 3;   // INVALID_VALUE
    case 11: return 4;  // MAPPING_ERROR
    case 13: return 5;  // EXECUTION_FAILED
    case 15: return 7;  // NOT_SUPPORTED
    case 8: return 8;   // ARCH_MISMATCH
    default: return 6;  // INTERNAL_ERROR
  }
}

// HIPBLAS_OP_N / _T (111, 112) as cuBLAS's (0, 1).
inline int32_t cublas_op(int32_t hip) { return hip == 111 ? 0 : hip == 112 ? 1 : kUnknownValue; }
// HIPBLAS_COMPUTE_32F / _32F_FAST_TF32 (2, 6) as cuBLAS's (68, 77).
inline int32_t cublas_compute(int32_t hip) { return hip == 2 ? 68 : hip == 6 ? 77 : kUnknownValue; }

// Reads an int32 operation attribute into a cuBLAS-numbered field.
inline Status assign_op(int32_t* field, const void* value, size_t bytes) {
  int32_t hip = 0;
  if (!value || bytes != sizeof hip) return 3;
  std::memcpy(&hip, value, sizeof hip);
  *field = cublas_op(hip);
  return 0;
}

// The driver's own declarations of hipblaslt.h's structs: a function called through the
// driver's pointer type must have exactly that type (clang's UBSan checks it; the real library is
// C and unchecked).
using HipAlgo = hip::hipblasLtMatmulAlgo_t;
using HipHeuristicResult = hip::hipblasLtMatmulHeuristicResult_t;

inline Status hipblasLtGetVersion(cublasLtHandle_t handle, int* version) {
  if (!handle) return 1;
  ++fake_hiplt().versions_asked;
  *version = fake_hiplt().version;
  return 0;
}
inline Status hipblasLtCreate(cublasLtHandle_t* h) { return hip_status(lt::cublasLtCreate(h)); }
inline Status hipblasLtDestroy(cublasLtHandle_t h) { return hip_status(lt::cublasLtDestroy(h)); }
inline Status hipblasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, int32_t compute, int32_t scale) {
  return hip_status(lt::cublasLtMatmulDescCreate(d, cublas_compute(compute), scale));
}
inline Status hipblasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { return hip_status(lt::cublasLtMatmulDescDestroy(d)); }
inline Status hipblasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t handle, int32_t attr, const void* value,
                                              size_t bytes) {
  auto* d = reinterpret_cast<FakeLtDesc*>(handle);
  switch (attr) {
    case 0: return assign_op(&d->trans_a, value, bytes);                   // TRANSA, int32_t
    case 1: return assign_op(&d->trans_b, value, bytes);                   // TRANSB, int32_t
    case 2: return hip_status(lt::assign(&d->epilogue, value, bytes));     // EPILOGUE, uint32_t
    case 3: return hip_status(lt::assign(&d->bias, value, bytes));         // BIAS_POINTER, void*
    case 4: return hip_status(lt::assign(&d->bias_type, value, bytes));    // BIAS_DATA_TYPE, int32_t
    default: return 3;                                                     // not one a test expects set
  }
}
inline Status hipblasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, int32_t type, uint64_t rows, uint64_t cols,
                                          int64_t ld) {
  return hip_status(lt::cublasLtMatrixLayoutCreate(l, type, rows, cols, ld));
}
inline Status hipblasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  return hip_status(lt::cublasLtMatrixLayoutDestroy(l));
}
inline Status hipblasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t handle, int32_t attr, const void* value,
                                                size_t bytes) {
  auto* l = reinterpret_cast<FakeLtLayout*>(handle);
  switch (attr) {
    case 0: return hip_status(lt::assign(&l->batch_count, value, bytes));   // BATCH_COUNT, int32_t
    case 1: return hip_status(lt::assign(&l->batch_stride, value, bytes));  // STRIDED_BATCH_OFFSET, int64_t
    default: return 3;
  }
}
inline Status hipblasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) {
  return hip_status(lt::cublasLtMatmulPreferenceCreate(p));
}
inline Status hipblasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  return hip_status(lt::cublasLtMatmulPreferenceDestroy(p));
}
inline Status hipblasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t handle, int32_t attr, const void* value,
                                                    size_t bytes) {
  auto* p = reinterpret_cast<FakeLtPreference*>(handle);
  if (attr == 1) return hip_status(lt::assign(&p->max_workspace, value, bytes));  // MAX_WORKSPACE_BYTES, uint64_t
  return 3;  // SEARCH_MODE (0) is never set; hipBLASLt has no others
}
inline Status hipblasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              HipHeuristicResult* results, int* returned) {
  cublasLtMatmulHeuristicResult_t found{};
  const cublasStatus_t s =
      lt::cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, d, pref, requested, &found, returned);
  if (s != 0 || *returned == 0) return hip_status(s);
  results[0] = HipHeuristicResult{};
  std::memcpy(results[0].algo.data, &found.algo.data[0], sizeof found.algo.data[0]);  // the fake's magic
  results[0].algo.max_workspace_bytes = found.workspaceSize;
  results[0].workspaceSize = found.workspaceSize;
  results[0].state = hip_status(found.state);
  results[0].wavesCount = found.wavesCount;
  return 0;
}
inline Status hipblasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* a,
                              cublasLtMatrixLayout_t al, const void* b, cublasLtMatrixLayout_t bl, const void* beta,
                              const void* c, cublasLtMatrixLayout_t cl, void* d, cublasLtMatrixLayout_t dl,
                              const HipAlgo* algo, void* workspace, size_t workspace_bytes, CUstream stream) {
  if (!algo) return 3;
  cublasLtMatmulAlgo_t cublas_algo{};
  std::memcpy(&cublas_algo.data[0], algo->data, sizeof cublas_algo.data[0]);
  if (algo->max_workspace_bytes != fake_lt().algo_workspace) return 3;  // not the heuristic's algorithm
  return hip_status(lt::cublasLtMatmul(handle, desc, alpha, a, al, b, bl, beta, c, cl, d, dl, &cublas_algo, workspace,
                                       workspace_bytes, stream));
}

}  // namespace fake_hiplt_impl

// The fake's symbols by name; `hidden` is reported missing (to test incomplete libraries).
inline void* fake_hipblaslt_symbol(const char* name, const std::set<std::string>& hidden = {}) {
#define MAXC_FAKE_HIPLT_ENTRY(fn) {#fn, reinterpret_cast<void*>(&fake_hiplt_impl::fn)},
  static const std::map<std::string, void*> table = {
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtGetVersion)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtCreate)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtDestroy)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatmulDescCreate)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatmulDescDestroy)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatmulDescSetAttribute)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatrixLayoutCreate)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatrixLayoutDestroy)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatrixLayoutSetAttribute)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatmulPreferenceCreate)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatmulPreferenceDestroy)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatmulPreferenceSetAttribute)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatmulAlgoGetHeuristic)
      MAXC_FAKE_HIPLT_ENTRY(hipblasLtMatmul)
  };
#undef MAXC_FAKE_HIPLT_ENTRY
  if (hidden.count(name)) return nullptr;
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace maxc::testing

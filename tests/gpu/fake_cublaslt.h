// A fake cuBLASLt, bound through the same SymbolLookup as the real one, for the fake CUDA
// driver of fake_cuda.h (whose device memory is host memory). It keeps what the descriptors
// were told, records each cublasLtMatmul with the descriptors as they were at that call, and
// computes the result on the host.
//
// The arithmetic is a literal reading of NVIDIA's documented semantics, written without
// reference to how max_c plans its calls, so that tests check the plan against cuBLASLt and
// not against itself: every matrix is column-major (element (r, c) at r + c * ld), D =
// alpha * op(A) * op(B) + beta * C with op(X) = X for CUBLAS_OP_N and Xᵀ for CUBLAS_OP_T,
// m = rows of op(A) = rows of D, batch i reads each matrix at i * its STRIDED_BATCH_OFFSET,
// the BIAS epilogues add bias[row of D] (the vector is as long as D has rows), then RELU is
// max(x, 0) and GELU the tanh approximation. The fake rejects what the library would: a
// wrong attribute size, dims that do not chain, a workspace smaller than the algorithm's.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "driver/cuda/cublaslt_api.h"
#include "kernels/cpu/half.h"

namespace maxc::testing {

using namespace maxc::cuda;

struct FakeLtDesc {
  int32_t compute_type = 0, scale_type = 0;
  int32_t trans_a = 0, trans_b = 0;  // CUBLAS_OP_N
  uint32_t epilogue = 1;              // CUBLASLT_EPILOGUE_DEFAULT
  const void* bias = nullptr;
  int32_t bias_type = -1;
};

struct FakeLtLayout {
  int32_t type = 0;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch_count = 1;
  int64_t batch_stride = 0;
};

struct FakeLtPreference {
  uint64_t max_workspace = 0;
  uint32_t min_alignment[4] = {256, 256, 256, 256};  // A, B, C, D
};

struct FakeLtMatmulCall {
  FakeLtDesc desc;
  FakeLtLayout a, b, c, d;
  float alpha = 0, beta = 0;
  const void *a_ptr = nullptr, *b_ptr = nullptr, *c_ptr = nullptr;
  void* d_ptr = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  CUstream stream = nullptr;
};

struct FakeCublasLt {
  // What the fake reports.
  size_t version = 120604;
  cublasStatus_t create_result = cublas_status::kSuccess;
  cublasStatus_t heuristic_result = cublas_status::kSuccess;
  bool heuristic_finds_none = false;  // success with no algorithm
  size_t algo_workspace = 0;          // bytes the algorithm it returns needs
  cublasStatus_t matmul_result = cublas_status::kSuccess;
  // What happened.
  int handles_live = 0, descs_live = 0, layouts_live = 0, preferences_live = 0;
  std::vector<FakeLtDesc> heuristic_descs;  // the descriptor as each heuristic query saw it
  std::vector<FakeLtPreference> heuristic_preferences;
  std::vector<FakeLtMatmulCall> matmuls;
};

inline FakeCublasLt& fake_lt() {
  static FakeCublasLt f;
  return f;
}
inline void reset_fake_lt() { fake_lt() = FakeCublasLt{}; }

namespace fake_lt_impl {

constexpr uint64_t kAlgoMagic = 0xC0B1A5;

// The fake spells NVIDIA's values itself (cublasLt.h, cublas_api.h, library_types.h), rather
// than taking max_c's constants, so a wrong constant there shows as a failing test here.
constexpr int32_t kOpN = 0, kOpT = 1;                      // cublasOperation_t
constexpr int32_t kR32F = 0, kR16F = 2, kR16BF = 14;       // cudaDataType_t
constexpr uint32_t kEpilogueBiasBit = 4, kEpilogueReluBit = 2, kEpilogueGeluBit = 32;  // cublasLtEpilogue_t
constexpr uint32_t kEpilogueDefault = 1, kEpilogueAuxBit = 128;

struct Handle {
  int magic = 7;
};

// Sets *field from value when the size is the attribute's documented one, as the library checks.
template <typename T>
cublasStatus_t assign(T* field, const void* value, size_t bytes) {
  if (!value || bytes != sizeof(T)) return cublas_status::kInvalidValue;
  std::memcpy(field, value, sizeof(T));
  return cublas_status::kSuccess;
}

inline size_t cublasLtGetVersion() { return fake_lt().version; }
inline cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) {
  if (fake_lt().create_result != cublas_status::kSuccess) return fake_lt().create_result;
  *h = reinterpret_cast<cublasLtHandle_t>(new Handle);
  ++fake_lt().handles_live;
  return cublas_status::kSuccess;
}
inline cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  delete reinterpret_cast<Handle*>(h);
  --fake_lt().handles_live;
  return cublas_status::kSuccess;
}
inline cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t compute,
                                               cudaDataType_t scale) {
  *d = reinterpret_cast<cublasLtMatmulDesc_t>(new FakeLtDesc{compute, scale});
  ++fake_lt().descs_live;
  return cublas_status::kSuccess;
}
inline cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  delete reinterpret_cast<FakeLtDesc*>(d);
  --fake_lt().descs_live;
  return cublas_status::kSuccess;
}
inline cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t handle, cublasLtMatmulDescAttributes_t attr,
                                                     const void* value, size_t bytes) {
  auto* d = reinterpret_cast<FakeLtDesc*>(handle);
  switch (attr) {
    case 3: return assign(&d->trans_a, value, bytes);    // CUBLASLT_MATMUL_DESC_TRANSA, int32_t
    case 4: return assign(&d->trans_b, value, bytes);    // CUBLASLT_MATMUL_DESC_TRANSB, int32_t
    case 7: return assign(&d->epilogue, value, bytes);   // CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t
    case 8: return assign(&d->bias, value, bytes);       // CUBLASLT_MATMUL_DESC_BIAS_POINTER, void*
    case 26: return assign(&d->bias_type, value, bytes);  // CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t
    default: return cublas_status::kInvalidValue;        // not one a test expects set
  }
}
inline cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType_t type, uint64_t rows,
                                                 uint64_t cols, int64_t ld) {
  // Column-major needs ld >= rows so that columns do not overlap.
  if (ld < static_cast<int64_t>(rows)) return cublas_status::kInvalidValue;
  *l = reinterpret_cast<cublasLtMatrixLayout_t>(new FakeLtLayout{type, rows, cols, ld});
  ++fake_lt().layouts_live;
  return cublas_status::kSuccess;
}
inline cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  delete reinterpret_cast<FakeLtLayout*>(l);
  --fake_lt().layouts_live;
  return cublas_status::kSuccess;
}
inline cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t handle,
                                                       cublasLtMatrixLayoutAttribute_t attr, const void* value,
                                                       size_t bytes) {
  auto* l = reinterpret_cast<FakeLtLayout*>(handle);
  switch (attr) {
    case 5: return assign(&l->batch_count, value, bytes);   // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t
    case 6: return assign(&l->batch_stride, value, bytes);  // CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t
    default: return cublas_status::kInvalidValue;
  }
}
inline cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) {
  *p = reinterpret_cast<cublasLtMatmulPreference_t>(new FakeLtPreference);
  ++fake_lt().preferences_live;
  return cublas_status::kSuccess;
}
inline cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  delete reinterpret_cast<FakeLtPreference*>(p);
  --fake_lt().preferences_live;
  return cublas_status::kSuccess;
}
inline cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t handle,
                                                           cublasLtMatmulPreferenceAttributes_t attr,
                                                           const void* value, size_t bytes) {
  auto* p = reinterpret_cast<FakeLtPreference*>(handle);
  if (attr == 1) return assign(&p->max_workspace, value, bytes);  // MAX_WORKSPACE_BYTES, uint64_t
  if (attr >= 5 && attr <= 8) return assign(&p->min_alignment[attr - 5], value, bytes);  // MIN_ALIGNMENT_*, uint32_t
  return cublas_status::kInvalidValue;
}
inline cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t,
                                                     cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                     cublasLtMatrixLayout_t, cublasLtMatmulPreference_t pref,
                                                     int requested, cublasLtMatmulHeuristicResult_t* results,
                                                     int* returned) {
  FakeCublasLt& f = fake_lt();
  if (requested <= 0) return cublas_status::kInvalidValue;
  f.heuristic_descs.push_back(*reinterpret_cast<FakeLtDesc*>(desc));
  f.heuristic_preferences.push_back(*reinterpret_cast<FakeLtPreference*>(pref));
  if (f.heuristic_result != cublas_status::kSuccess) return f.heuristic_result;
  const bool fits = f.algo_workspace <= reinterpret_cast<FakeLtPreference*>(pref)->max_workspace;
  *returned = f.heuristic_finds_none || !fits ? 0 : 1;
  if (*returned == 0) return cublas_status::kSuccess;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].algo.data[0] = kAlgoMagic;
  results[0].workspaceSize = f.algo_workspace;
  results[0].state = cublas_status::kSuccess;
  results[0].wavesCount = 1.0f;
  return cublas_status::kSuccess;
}

// ---- the host GEMM ----
inline float load(const void* base, int32_t type, int64_t i) {
  switch (type) {
    case kR32F: return static_cast<const float*>(base)[i];
    case kR16F: return cpu::f16_to_float(static_cast<const uint16_t*>(base)[i]);
    default: return cpu::bf16_to_float(static_cast<const uint16_t*>(base)[i]);
  }
}
inline void store(void* base, int32_t type, int64_t i, float v) {
  switch (type) {
    case kR32F: static_cast<float*>(base)[i] = v; break;
    case kR16F: static_cast<uint16_t*>(base)[i] = cpu::float_to_f16(v); break;
    default: static_cast<uint16_t*>(base)[i] = cpu::float_to_bf16(v); break;
  }
}
inline bool known_type(int32_t t) {
  return t == kR32F || t == kR16F || t == kR16BF;
}
// Element (r, c) of op(X) for a column-major X.
inline int64_t op_index(const FakeLtLayout& x, int32_t op, int64_t r, int64_t c) {
  return op == kOpN ? r + c * x.ld : c + r * x.ld;
}
inline float epilogue_apply(uint32_t e, float x, const FakeLtDesc& d, int32_t bias_type, int64_t row) {
  if (e & kEpilogueBiasBit) x += load(d.bias, bias_type, row);
  if (e & kEpilogueReluBit) x = x > 0 ? x : 0.0f;
  if (e & kEpilogueGeluBit) x = 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  return x;
}

inline cublasStatus_t compute(const FakeLtMatmulCall& call) {
  const FakeLtDesc& d = call.desc;
  if ((d.trans_a != kOpN && d.trans_a != kOpT) || (d.trans_b != kOpN && d.trans_b != kOpT))
    return cublas_status::kNotSupported;
  const int64_t m = d.trans_a == kOpN ? call.a.rows : call.a.cols;
  const int64_t k = d.trans_a == kOpN ? call.a.cols : call.a.rows;
  const int64_t kb = d.trans_b == kOpN ? call.b.rows : call.b.cols;
  const int64_t n = d.trans_b == kOpN ? call.b.cols : call.b.rows;
  if (kb != k || static_cast<int64_t>(call.d.rows) != m || static_cast<int64_t>(call.d.cols) != n)
    return cublas_status::kInvalidValue;
  const int32_t batches = call.d.batch_count;
  if (call.a.batch_count != batches || call.b.batch_count != batches || call.c.batch_count != batches)
    return cublas_status::kInvalidValue;
  const uint32_t e = d.epilogue;
  // The forward epilogues without an auxiliary output: DEFAULT, RELU, BIAS, GELU and their sums.
  if ((e & kEpilogueAuxBit) || (e & ~(kEpilogueDefault | kEpilogueBiasBit | kEpilogueReluBit | kEpilogueGeluBit)) ||
      ((e & kEpilogueReluBit) && (e & kEpilogueGeluBit)))
    return cublas_status::kNotSupported;
  if ((e & kEpilogueBiasBit) && !d.bias) return cublas_status::kInvalidValue;
  const int32_t bias_type = d.bias_type == -1 ? call.d.type : d.bias_type;
  for (int32_t i = 0; i < batches; ++i) {
    const int64_t ao = i * call.a.batch_stride, bo = i * call.b.batch_stride;
    const int64_t co = i * call.c.batch_stride, dof = i * call.d.batch_stride;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += double(load(call.a_ptr, call.a.type, ao + op_index(call.a, d.trans_a, r, p))) *
                 load(call.b_ptr, call.b.type, bo + op_index(call.b, d.trans_b, p, c));
        float v = call.alpha * static_cast<float>(acc);
        if (call.beta != 0) v += call.beta * load(call.c_ptr, call.c.type, co + r + c * call.c.ld);  // beta 0: C unread
        store(call.d_ptr, call.d.type, dof + r + c * call.d.ld, epilogue_apply(e, v, d, bias_type, r));
      }
  }
  return cublas_status::kSuccess;
}

inline cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                                     const void* a, cublasLtMatrixLayout_t al, const void* b, cublasLtMatrixLayout_t bl,
                                     const void* beta, const void* c, cublasLtMatrixLayout_t cl, void* d,
                                     cublasLtMatrixLayout_t dl, const cublasLtMatmulAlgo_t* algo, void* workspace,
                                     size_t workspace_bytes, CUstream stream) {
  FakeCublasLt& f = fake_lt();
  if (!handle || reinterpret_cast<Handle*>(handle)->magic != 7) return cublas_status::kNotInitialized;
  FakeLtMatmulCall call{*reinterpret_cast<FakeLtDesc*>(desc),
                        *reinterpret_cast<FakeLtLayout*>(al),
                        *reinterpret_cast<FakeLtLayout*>(bl),
                        *reinterpret_cast<FakeLtLayout*>(cl),
                        *reinterpret_cast<FakeLtLayout*>(dl)};
  // The scale type is float here (CUDA_R_32F), as every plan of max_c asks.
  if (call.desc.scale_type != kR32F) return cublas_status::kNotSupported;
  std::memcpy(&call.alpha, alpha, sizeof(float));
  std::memcpy(&call.beta, beta, sizeof(float));
  call.a_ptr = a;
  call.b_ptr = b;
  call.c_ptr = c;
  call.d_ptr = d;
  call.workspace = workspace;
  call.workspace_bytes = workspace_bytes;
  call.stream = stream;
  f.matmuls.push_back(call);
  if (f.matmul_result != cublas_status::kSuccess) return f.matmul_result;
  if (!algo || algo->data[0] != kAlgoMagic) return cublas_status::kInvalidValue;
  if (workspace_bytes < f.algo_workspace || (f.algo_workspace > 0 && !workspace)) return cublas_status::kInvalidValue;
  for (const FakeLtLayout* l : {&call.a, &call.b, &call.c, &call.d})
    if (!known_type(l->type)) return cublas_status::kNotSupported;
  return compute(call);
}

}  // namespace fake_lt_impl

// The fake's symbols by name; `hidden` is reported missing (to test incomplete libraries).
inline void* fake_cublaslt_symbol(const char* name, const std::set<std::string>& hidden = {}) {
  static const std::map<std::string, void*> table = {
#define MAXC_FAKE_LT_ENTRY(ret, fn, params) {#fn, reinterpret_cast<void*>(&fake_lt_impl::fn)},
      MAXC_CUBLASLT_FUNCTIONS(MAXC_FAKE_LT_ENTRY)
#undef MAXC_FAKE_LT_ENTRY
  };
  if (hidden.count(name)) return nullptr;
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace maxc::testing

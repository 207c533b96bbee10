// A row-major matmul planned once through cuBLASLt: C = act(A·B + bias) for float32, float16
// and bfloat16, batched, with the operand shared by every batch given batch stride 0.
//
// cuBLASLt is column-major. A row-major X[r][c] is, byte for byte, the column-major matrix
// Xᵀ (c rows, leading dimension c), so the plan asks cuBLASLt for Cᵀ = Bᵀ·Aᵀ: its "A" is our B,
// its "B" is our A, and its D (N rows, M columns) is our C. The bias, one value per column of
// our C, is then one per row of D, which is how cuBLASLt broadcasts its bias vector.
//
// On a HIP device the library is hipBLASLt, bound into the same table (driver/hip/
// hipblaslt_api.h), so the plan is the same.
//
// The algorithm is chosen by cuBLASLt's heuristic when the plan is made, not per call. Every
// pointer must be kAlignment-aligned (the heuristic is told so); callers check
// pointers_aligned and use another kernel for the rare pointer that is not.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/dtype.h"
#include "driver/cuda/cublaslt_api.h"

namespace maxc::cuda {

class CudaDevice;

// A cuBLASLt handle made in one device's primary context, shared by the plans on that device.
class CublasLtHandle {
 public:
  // The handle of `library` for `device`, made on first use and kept while a plan holds it.
  // Throws "cublasLtCreate on cuda:0 failed: CUBLAS_STATUS_...".
  static std::shared_ptr<const CublasLtHandle> get(std::shared_ptr<const CublasLtLibrary> library,
                                                   const CudaDevice& device);
  CublasLtHandle(std::shared_ptr<const CublasLtLibrary> library, const CudaDevice& device);
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;

  const CublasLtApi& api() const { return library_->api; }
  const CublasLtLibrary& library() const { return *library_; }
  cublasLtHandle_t handle() const { return handle_; }
  const CudaDevice& device() const { return device_; }

 private:
  std::shared_ptr<const CublasLtLibrary> library_;
  const CudaDevice& device_;
  cublasLtHandle_t handle_ = nullptr;
};

// The activations cuBLASLt's epilogues compute. Its GELU is the tanh approximation only.
enum class CublasLtActivation { kNone, kRelu, kGeluTanh };

struct CublasLtMatmulSpec {
  DType dtype = DType::kFloat32;  // of A, B, the bias and C
  int64_t m = 0, n = 0, k = 0;    // C[m][n] = A[m][k] · B[k][n], each row-major and dense
  int64_t batch = 1;
  int64_t a_batch_stride = 0, b_batch_stride = 0;  // elements; 0: one matrix for every batch
  bool b_transposed = false;                       // B is stored as [n][k]
  bool bias = false;                               // n values, one per column of C
  CublasLtActivation activation = CublasLtActivation::kNone;
  // float32 only: let cuBLASLt round the inputs to TF32 for tensor cores (about 3 decimal
  // digits). Off unless the caller opts in: the default is exact float32 arithmetic.
  bool allow_tf32 = false;
  uint64_t max_workspace_bytes = uint64_t{32} << 20;  // what the heuristic may choose up to
};

class CublasLtMatmul {
 public:
  // Byte alignment of every pointer run takes (16 keeps the vectorized and TMA algorithms).
  static constexpr uintptr_t kAlignment = 16;

  // Plans `spec` and picks its algorithm. Null, with the reason in *why_not, when cuBLASLt
  // cannot take it (a dtype or size it lacks, no algorithm for it on this device): the caller
  // then uses another kernel. Throws with the cuBLAS status name when cuBLASLt fails.
  static std::unique_ptr<CublasLtMatmul> plan(std::shared_ptr<const CublasLtHandle> handle,
                                              const CublasLtMatmulSpec& spec, std::string* why_not);
  ~CublasLtMatmul();
  CublasLtMatmul(const CublasLtMatmul&) = delete;
  CublasLtMatmul& operator=(const CublasLtMatmul&) = delete;

  const CublasLtMatmulSpec& spec() const { return spec_; }
  const char* library_name() const { return handle_->library().name(); }  // "cuBLASLt" or "hipBLASLt"
  // Device memory run needs as its workspace (0: none), alignment slack included.
  uint64_t workspace_bytes() const;
  // Whether run may take these pointers (bias may be null when the plan has none).
  static bool pointers_aligned(const void* a, const void* b, const void* bias, const void* c);
  // Queues the matmul on `stream`. Throws "cublasLtMatmul failed: CUBLAS_STATUS_...".
  void run(const void* a, const void* b, const void* bias, void* c, void* workspace, CUstream stream) const;

 private:
  CublasLtMatmul(std::shared_ptr<const CublasLtHandle> handle, const CublasLtMatmulSpec& spec);
  void describe_operation();
  void describe_layouts();
  bool choose_algorithm(std::string* why_not);
  void make_layout(cublasLtMatrixLayout_t* out, uint64_t rows, uint64_t cols, int64_t ld, int64_t batch_stride) const;
  void set_bias_pointer(const void* bias) const;

  std::shared_ptr<const CublasLtHandle> handle_;
  CublasLtMatmulSpec spec_;
  cudaDataType_t type_ = cuda_data_type::kR32F;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t lt_a_ = nullptr;  // cuBLASLt's A: our B
  cublasLtMatrixLayout_t lt_b_ = nullptr;  // cuBLASLt's B: our A
  cublasLtMatrixLayout_t lt_d_ = nullptr;  // cuBLASLt's C and D: our C
  cublasLtMatmulAlgo_t algo_{};
  size_t algo_workspace_ = 0;
  // The bias pointer lives in the descriptor and changes per call: calls of one plan from
  // several threads take turns setting it and queueing the matmul that reads it.
  mutable std::mutex mu_;
};

}  // namespace maxc::cuda

#include "driver/cuda/cublaslt_matmul.h"

#include <limits>
#include <optional>
#include <map>
#include <utility>

#include "base/log.h"
#include "base/str_cat.h"
#include "driver/cuda/cuda_context.h"
#include "driver/cuda/cuda_device.h"

namespace maxc::cuda {
namespace {

// cuBLASLt documents no alignment for the workspace; cuBLAS asks 256 bytes of its own, and
// the arena promises only 64, so run aligns it up and the plan asks for the slack.
constexpr uintptr_t kWorkspaceAlignment = 256;

std::optional<cudaDataType_t> data_type_of(DType d) {
  switch (d) {
    case DType::kFloat32: return cuda_data_type::kR32F;
    case DType::kFloat16: return cuda_data_type::kR16F;
    case DType::kBFloat16: return cuda_data_type::kR16BF;
    default: return std::nullopt;
  }
}

cublasLtEpilogue_t epilogue_of(CublasLtActivation a, bool bias) {
  switch (a) {
    case CublasLtActivation::kNone: return bias ? epilogue::kBias : epilogue::kDefault;
    case CublasLtActivation::kRelu: return bias ? epilogue::kReluBias : epilogue::kRelu;
    case CublasLtActivation::kGeluTanh: return bias ? epilogue::kGeluBias : epilogue::kGelu;
  }
  return epilogue::kDefault;
}

// Why cuBLASLt cannot take `spec` before asking it anything ("" when it may).
std::string unsupported_reason(const CublasLtMatmulSpec& s) {
  if (!data_type_of(s.dtype)) return str_cat("cuBLASLt here multiplies float32, float16 and bfloat16, not ", dtype_name(s.dtype));
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return "an empty matmul";
  // Layout extents are uint64_t, but cuBLASLt supports those that fit an int32_t; so is the batch count.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (s.m > kMax || s.n > kMax || s.k > kMax || s.batch > kMax || s.m * s.n > std::numeric_limits<int64_t>::max() / s.batch)
    return "dims past cuBLASLt's int32 range";
  return "";
}

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace

// ---- CublasLtHandle ------------------------------------------------------------------------

CublasLtHandle::CublasLtHandle(std::shared_ptr<const CublasLtLibrary> library, const CudaDevice& device)
    : library_(std::move(library)), device_(device) {
  // cuBLASLt runs on the CUDA runtime, which adopts the driver context current on the thread;
  // hipBLASLt ties its handle to the device of the context pushed here.
  ContextScope scope(device_.api(), device_.context());
  check_cublas(library_->api.cublasLtCreate(&handle_), str_cat("cublasLtCreate on ", device_.describe()));
}

CublasLtHandle::~CublasLtHandle() {
  if (!handle_) return;
  const cublasStatus_t s = library_->api.cublasLtDestroy(handle_);
  if (s != cublas_status::kSuccess) MAXC_LOG(kWarning, "cublasLtDestroy failed: ", cublas_status_name(s));
}

std::shared_ptr<const CublasLtHandle> CublasLtHandle::get(std::shared_ptr<const CublasLtLibrary> library,
                                                          const CudaDevice& device) {
  static std::mutex mu;
  // Never destroyed: plans may outlive static destruction. A live handle keeps its library
  // alive, so a key's library address cannot be reused while its entry is live.
  static auto* handles =
      new std::map<std::pair<const CublasLtLibrary*, const CudaDevice*>, std::weak_ptr<const CublasLtHandle>>();
  std::lock_guard lock(mu);
  std::weak_ptr<const CublasLtHandle>& slot = (*handles)[{library.get(), &device}];
  if (auto h = slot.lock()) return h;
  auto h = std::make_shared<const CublasLtHandle>(std::move(library), device);
  slot = h;
  return h;
}

// ---- CublasLtMatmul ------------------------------------------------------------------------

CublasLtMatmul::CublasLtMatmul(std::shared_ptr<const CublasLtHandle> handle, const CublasLtMatmulSpec& spec)
    : handle_(std::move(handle)), spec_(spec), type_(*data_type_of(spec.dtype)) {}

CublasLtMatmul::~CublasLtMatmul() {
  const CublasLtApi& api = handle_->api();
  for (cublasLtMatrixLayout_t layout : {lt_a_, lt_b_, lt_d_})
    if (layout) api.cublasLtMatrixLayoutDestroy(layout);
  if (desc_) api.cublasLtMatmulDescDestroy(desc_);
}

std::unique_ptr<CublasLtMatmul> CublasLtMatmul::plan(std::shared_ptr<const CublasLtHandle> handle,
                                                     const CublasLtMatmulSpec& spec, std::string* why_not) {
  *why_not = unsupported_reason(spec);
  if (!why_not->empty()) return nullptr;
  // Built in steps on a whole object, so a step that throws leaves its destructor to clean up.
  std::unique_ptr<CublasLtMatmul> p(new CublasLtMatmul(std::move(handle), spec));
  p->describe_operation();
  p->describe_layouts();
  if (!p->choose_algorithm(why_not)) return nullptr;
  return p;
}

void CublasLtMatmul::describe_operation() {
  const CublasLtApi& api = handle_->api();
  // fp16 and bf16 accumulate in fp32 too, so alpha and beta (the scale type) are floats.
  const bool tf32 = spec_.allow_tf32 && spec_.dtype == DType::kFloat32;
  const cublasComputeType_t compute = tf32 ? cublas_compute::k32FFastTF32 : cublas_compute::k32F;
  check_cublas(api.cublasLtMatmulDescCreate(&desc_, compute, cuda_data_type::kR32F), "cublasLtMatmulDescCreate");
  auto set = [&](cublasLtMatmulDescAttributes_t attribute, const auto& value, const char* name) {
    check_cublas(api.cublasLtMatmulDescSetAttribute(desc_, attribute, &value, sizeof value),
                 str_cat("cublasLtMatmulDescSetAttribute(", name, ")"));
  };
  const cublasOperation_t trans_a = spec_.b_transposed ? cublas_op::kT : cublas_op::kN;  // cuBLASLt's A is our B
  const cublasOperation_t trans_b = cublas_op::kN;
  set(matmul_desc::kTransA, trans_a, "TRANSA");
  set(matmul_desc::kTransB, trans_b, "TRANSB");
  set(matmul_desc::kEpilogue, epilogue_of(spec_.activation, spec_.bias), "EPILOGUE");
  if (!spec_.bias) return;
  const int32_t bias_type = type_;
  set(matmul_desc::kBiasDataType, bias_type, "BIAS_DATA_TYPE");
  // The heuristic reads the bias pointer's alignment from its value: a stand-in aligned to
  // exactly kAlignment promises what pointers_aligned later checks of the real one.
  set_bias_pointer(reinterpret_cast<const void*>(kAlignment));
}

void CublasLtMatmul::describe_layouts() {
  const auto m = static_cast<uint64_t>(spec_.m), n = static_cast<uint64_t>(spec_.n), k = static_cast<uint64_t>(spec_.k);
  // Our row-major B[k][n] is the column-major n x k matrix Bᵀ (ld n), used as is; stored as
  // [n][k] it is the column-major k x n matrix B (ld k), which TRANSA turns into Bᵀ.
  if (spec_.b_transposed)
    make_layout(&lt_a_, k, n, spec_.k, spec_.b_batch_stride);
  else
    make_layout(&lt_a_, n, k, spec_.n, spec_.b_batch_stride);
  make_layout(&lt_b_, k, m, spec_.k, spec_.a_batch_stride);  // our A[m][k]: Aᵀ, k x m
  make_layout(&lt_d_, n, m, spec_.n, spec_.m * spec_.n);     // our C[m][n]: Cᵀ, n x m
}

void CublasLtMatmul::make_layout(cublasLtMatrixLayout_t* out, uint64_t rows, uint64_t cols, int64_t ld,
                                 int64_t batch_stride) const {
  const CublasLtApi& api = handle_->api();
  check_cublas(api.cublasLtMatrixLayoutCreate(out, type_, rows, cols, ld), "cublasLtMatrixLayoutCreate");
  if (spec_.batch == 1) return;
  const auto count = static_cast<int32_t>(spec_.batch);
  check_cublas(api.cublasLtMatrixLayoutSetAttribute(*out, matrix_layout::kBatchCount, &count, sizeof count),
               "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
  check_cublas(
      api.cublasLtMatrixLayoutSetAttribute(*out, matrix_layout::kStridedBatchOffset, &batch_stride, sizeof batch_stride),
      "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
}

namespace {

// The preference of a plan: its workspace cap, and the pointer alignment run guarantees.
class Preference {
 public:
  Preference(const CublasLtApi& api, uint64_t max_workspace) : api_(api) {
    check_cublas(api_.cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
    set(matmul_pref::kMaxWorkspaceBytes, max_workspace, "MAX_WORKSPACE_BYTES");
    const auto alignment = static_cast<uint32_t>(CublasLtMatmul::kAlignment);
    set(matmul_pref::kMinAlignmentABytes, alignment, "MIN_ALIGNMENT_A_BYTES");
    set(matmul_pref::kMinAlignmentBBytes, alignment, "MIN_ALIGNMENT_B_BYTES");
    set(matmul_pref::kMinAlignmentCBytes, alignment, "MIN_ALIGNMENT_C_BYTES");
    set(matmul_pref::kMinAlignmentDBytes, alignment, "MIN_ALIGNMENT_D_BYTES");
  }
  ~Preference() {
    if (pref_) api_.cublasLtMatmulPreferenceDestroy(pref_);
  }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
  cublasLtMatmulPreference_t get() const { return pref_; }

 private:
  template <typename T>
  void set(cublasLtMatmulPreferenceAttributes_t attribute, const T& value, const char* name) {
    check_cublas(api_.cublasLtMatmulPreferenceSetAttribute(pref_, attribute, &value, sizeof value),
                 str_cat("cublasLtMatmulPreferenceSetAttribute(", name, ")"));
  }
  const CublasLtApi& api_;
  cublasLtMatmulPreference_t pref_ = nullptr;
};

}  // namespace

bool CublasLtMatmul::choose_algorithm(std::string* why_not) {
  const CublasLtApi& api = handle_->api();
  const Preference pref(api, spec_.max_workspace_bytes);
  cublasLtMatmulHeuristicResult_t best{};
  int returned = 0;
  cublasStatus_t s = cublas_status::kSuccess;
  {
    const CudaDevice& device = handle_->device();
    ContextScope scope(device.api(), device.context());
    s = api.cublasLtMatmulAlgoGetHeuristic(handle_->handle(), desc_, lt_a_, lt_b_, lt_d_, lt_d_, pref.get(), 1, &best,
                                           &returned);
  }
  // NOT_SUPPORTED, or no result: this device or library has no algorithm for the problem.
  if (s == cublas_status::kNotSupported || (s == cublas_status::kSuccess && returned == 0)) {
    *why_not = str_cat(library_name(), " has no algorithm for it on ", handle_->device().describe(), " (",
                       cublas_status_name(s == cublas_status::kSuccess ? cublas_status::kNotSupported : s), ")");
    return false;
  }
  check_cublas(s, "cublasLtMatmulAlgoGetHeuristic");
  if (best.state != cublas_status::kSuccess) {
    *why_not = str_cat(library_name(), "'s best algorithm for it is unusable (", cublas_status_name(best.state), ")");
    return false;
  }
  algo_ = best.algo;
  algo_workspace_ = best.workspaceSize;
  return true;
}

uint64_t CublasLtMatmul::workspace_bytes() const {
  return algo_workspace_ == 0 ? 0 : algo_workspace_ + kWorkspaceAlignment;
}

bool CublasLtMatmul::pointers_aligned(const void* a, const void* b, const void* bias, const void* c) {
  return (address(a) | address(b) | address(bias) | address(c)) % kAlignment == 0;
}

void CublasLtMatmul::set_bias_pointer(const void* bias) const {
  check_cublas(handle_->api().cublasLtMatmulDescSetAttribute(desc_, matmul_desc::kBiasPointer, &bias, sizeof bias),
               "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
}

void CublasLtMatmul::run(const void* a, const void* b, const void* bias, void* c, void* workspace,
                         CUstream stream) const {
  const float alpha = 1.0f, beta = 0.0f;  // the scale type is float32 for every dtype here
  void* aligned_workspace = nullptr;
  if (algo_workspace_ > 0)
    aligned_workspace = reinterpret_cast<void*>((address(workspace) + kWorkspaceAlignment - 1) / kWorkspaceAlignment *
                                                kWorkspaceAlignment);
  std::lock_guard lock(mu_);
  if (spec_.bias) set_bias_pointer(bias);
  const CudaDevice& device = handle_->device();
  ContextScope scope(device.api(), device.context());
  // beta is 0, so C is not read: it names the output itself, as cuBLASLt allows (C == D).
  check_cublas(handle_->api().cublasLtMatmul(handle_->handle(), desc_, &alpha, b, lt_a_, a, lt_b_, &beta, c, lt_d_, c,
                                             lt_d_, &algo_, aligned_workspace, algo_workspace_, stream),
               "cublasLtMatmul");
}

}  // namespace maxc::cuda

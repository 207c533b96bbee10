#include "driver/cuda/cublaslt_api.h"

#include <cstdlib>
#include <mutex>

#include "base/log.h"
#include "base/str_cat.h"
#include "driver/cuda/cuda_driver.h"

namespace maxc::cuda {
namespace {

// A bound table's version; a library that cannot say it is not one we can use.
bool describe(CublasLtLibrary& lib, const std::string& origin, std::string* why_not) {
  lib.version = lib.api.cublasLtGetVersion();
  if (lib.version == 0) {
    *why_not = str_cat(origin, ": cublasLtGetVersion returned 0");
    return false;
  }
  return true;
}

std::unique_ptr<CublasLtLibrary> try_open(const std::string& name, std::string* why_not) {
  auto lib = std::make_unique<CublasLtLibrary>();
  lib->library = DynamicLibrary::open(name, why_not);
  if (!lib->library) return nullptr;
  const DynamicLibrary* dl = lib->library.get();
  const std::string missing = bind_cublaslt_api([dl](const char* s) { return dl->symbol(s); }, lib->api);
  if (!missing.empty()) {
    *why_not = str_cat(name, " lacks ", missing, " (not cuBLASLt, or one too old)");
    return nullptr;
  }
  if (!describe(*lib, name, why_not)) return nullptr;
  lib->path = name;
  lib->available = true;
  return lib;
}

std::shared_ptr<const CublasLtLibrary> unavailable(std::string reason) {
  auto none = std::make_shared<CublasLtLibrary>();
  none->unavailable_reason = std::move(reason);
  return none;
}

// The search of the process's cuBLASLt, logged once.
std::shared_ptr<const CublasLtLibrary> load_for_process() {
  const CudaDriver& driver = cuda_driver();
  if (!driver.available) return unavailable(str_cat("cuBLASLt not loaded: no CUDA driver (", driver.unavailable_reason, ")"));
  if (!driver.library)
    return unavailable("cuBLASLt not loaded: the process's CUDA driver is a table bound in-process (a test's), "
                       "and a real cuBLASLt would call libcuda itself");
  std::shared_ptr<const CublasLtLibrary> lib = load_cublaslt(cublaslt_library_candidates());
  if (lib->available)
    MAXC_LOG(kInfo, "cuBLASLt ", lib->version_string(), " from ", lib->path);
  else
    MAXC_LOG(kInfo, lib->unavailable_reason);
  return lib;
}

std::mutex process_mu;
std::shared_ptr<const CublasLtLibrary>& installed_library() {
  static auto* lib = new std::shared_ptr<const CublasLtLibrary>();  // never destroyed: plans outlive statics
  return *lib;
}
std::shared_ptr<const CublasLtLibrary>& loaded_library() {
  static auto* lib = new std::shared_ptr<const CublasLtLibrary>();
  return *lib;
}

const char* known_status_name(cublasStatus_t s) {
  switch (s) {
    case cublas_status::kSuccess: return "CUBLAS_STATUS_SUCCESS";
    case cublas_status::kNotInitialized: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case cublas_status::kAllocFailed: return "CUBLAS_STATUS_ALLOC_FAILED";
    case cublas_status::kInvalidValue: return "CUBLAS_STATUS_INVALID_VALUE";
    case cublas_status::kArchMismatch: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case cublas_status::kMappingError: return "CUBLAS_STATUS_MAPPING_ERROR";
    case cublas_status::kExecutionFailed: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case cublas_status::kInternalError: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case cublas_status::kNotSupported: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case cublas_status::kLicenseError: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return nullptr;
}

}  // namespace

std::string bind_cublaslt_api(const SymbolLookup& lookup, CublasLtApi& api) {
#define MAXC_CUBLASLT_BIND(ret, name, params)                     \
  api.name = reinterpret_cast<decltype(api.name)>(lookup(#name)); \
  if (!api.name) return #name;
  MAXC_CUBLASLT_FUNCTIONS(MAXC_CUBLASLT_BIND)
#undef MAXC_CUBLASLT_BIND
  return "";
}

std::string CublasLtLibrary::version_string() const {
  return str_cat(version / 10000, ".", (version / 100) % 100, ".", version % 100);
}

std::vector<std::string> cublaslt_library_candidates() {
  const char* env = std::getenv("MAX_C_CUBLASLT_LIBRARY");
  if (env && *env) return {env};
  return {"libcublasLt.so.12", "libcublasLt.so.13", "libcublasLt.so"};
}

std::unique_ptr<CublasLtLibrary> load_cublaslt(const std::vector<std::string>& candidates) {
  return open_first<CublasLtLibrary>(candidates, try_open,
                                     "cuBLASLt not found (set MAX_C_CUBLASLT_LIBRARY to libcublasLt.so's path): ");
}

std::unique_ptr<CublasLtLibrary> init_cublaslt(const SymbolLookup& lookup, const std::string& origin) {
  auto lib = std::make_unique<CublasLtLibrary>();
  const std::string missing = bind_cublaslt_api(lookup, lib->api);
  std::string why;
  if (!missing.empty()) {
    lib->api = CublasLtApi{};
    lib->unavailable_reason = str_cat(origin, " lacks ", missing, " (not cuBLASLt, or one too old)");
  } else if (!describe(*lib, origin, &why)) {
    lib->unavailable_reason = why;
  } else {
    lib->path = origin;
    lib->available = true;
  }
  return lib;
}

std::shared_ptr<const CublasLtLibrary> cublaslt() {
  std::lock_guard lock(process_mu);
  if (installed_library()) return installed_library();
  if (!loaded_library()) loaded_library() = load_for_process();
  return loaded_library();
}

void set_process_cublaslt(std::shared_ptr<const CublasLtLibrary> library) {
  std::lock_guard lock(process_mu);
  installed_library() = std::move(library);
}

std::string cublas_status_name(cublasStatus_t s) {
  const char* name = known_status_name(s);
  return name ? std::string(name) : str_cat("cuBLAS status ", s);
}

Code cublas_status_code(cublasStatus_t s) {
  switch (s) {
    case cublas_status::kAllocFailed: return Code::kResourceExhausted;
    case cublas_status::kNotSupported:
    case cublas_status::kArchMismatch: return Code::kUnimplemented;
    case cublas_status::kNotInitialized:
    case cublas_status::kLicenseError: return Code::kUnavailable;
    default: return Code::kInternal;
  }
}

void check_cublas(cublasStatus_t s, const std::string& what) {
  if (s != cublas_status::kSuccess) fail(cublas_status_code(s), what, " failed: ", cublas_status_name(s));
}

}  // namespace maxc::cuda

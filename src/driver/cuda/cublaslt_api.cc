#include "driver/cuda/cublaslt_api.h"

#include <array>
#include <cstdlib>
#include <mutex>

#include "base/log.h"
#include "base/str_cat.h"
#include "driver/cuda/cuda_driver.h"
#include "driver/hip/hipblaslt_api.h"

namespace maxc::cuda {
namespace {

// A bound table's version; a library that cannot say it is not one we can use.
bool describe(CublasLtLibrary& lib, const std::string& origin, std::string* why_not) {
  lib.version = lib.api.cublasLtGetVersion();
  if (lib.version != 0) return true;
  if (lib.backend == GpuBackend::kHip)
    *why_not = str_cat(origin, ": no hipBLASLt version of 0.7 or newer (it made no handle on the current device, ",
                       "or it predates 0.7, before which hipBLASLt numbered its types differently)");
  else
    *why_not = str_cat(origin, ": cublasLtGetVersion returned 0");
  return false;
}

// Binds `lookup`'s symbols as `lib`'s backend's library; "" or the reason it is not one.
std::string bind_table(CublasLtLibrary& lib, const SymbolLookup& lookup, const std::string& origin) {
  const std::string missing = lib.backend == GpuBackend::kHip ? hip::bind_hipblaslt_as_cublaslt_api(lookup, lib.api)
                                                              : bind_cublaslt_api(lookup, lib.api);
  if (missing.empty()) return "";
  lib.api = CublasLtApi{};
  return str_cat(origin, " lacks ", missing, " (not ", lib.name(), ", or one too old)");
}

std::unique_ptr<CublasLtLibrary> try_open(const std::string& name, GpuBackend backend, std::string* why_not) {
  auto lib = std::make_unique<CublasLtLibrary>();
  lib->backend = backend;
  lib->library = DynamicLibrary::open(name, why_not);
  if (!lib->library) return nullptr;
  const DynamicLibrary* dl = lib->library.get();
  *why_not = bind_table(*lib, [dl](const char* s) { return dl->symbol(s); }, name);
  if (!why_not->empty()) return nullptr;
  if (!describe(*lib, name, why_not)) return nullptr;
  lib->path = name;
  lib->available = true;
  return lib;
}

std::shared_ptr<const CublasLtLibrary> unavailable(GpuBackend backend, std::string reason) {
  auto none = std::make_shared<CublasLtLibrary>();
  none->backend = backend;
  none->unavailable_reason = std::move(reason);
  return none;
}

// The search of the process's library for `backend`, logged once.
std::shared_ptr<const CublasLtLibrary> load_for_process(GpuBackend backend) {
  const bool hip = backend == GpuBackend::kHip;
  const char* name = hip ? "hipBLASLt" : "cuBLASLt";
  const CudaDriver& driver = hip ? hip_driver() : cuda_driver();
  if (!driver.available)
    return unavailable(backend, str_cat(name, " not loaded: no ", backend_name(backend), " driver (",
                                        driver.unavailable_reason, ")"));
  if (!driver.library)
    return unavailable(backend, str_cat(name, " not loaded: the process's ", backend_name(backend),
                                        " driver is a table bound in-process (a test's), and a real ", name,
                                        " would call its runtime itself"));
  std::shared_ptr<const CublasLtLibrary> lib =
      load_cublaslt(hip ? hip::hipblaslt_library_candidates() : cublaslt_library_candidates(), backend);
  if (lib->available)
    MAXC_LOG(kInfo, name, " ", lib->version_string(), " from ", lib->path);
  else
    MAXC_LOG(kInfo, lib->unavailable_reason);
  return lib;
}

std::mutex process_mu;
// One slot per backend. Never destroyed: plans outlive statics.
using Slots = std::array<std::shared_ptr<const CublasLtLibrary>, 2>;
std::shared_ptr<const CublasLtLibrary>& installed_library(GpuBackend backend) {
  static auto* slots = new Slots{};
  return (*slots)[static_cast<int>(backend)];
}
std::shared_ptr<const CublasLtLibrary>& loaded_library(GpuBackend backend) {
  static auto* slots = new Slots{};
  return (*slots)[static_cast<int>(backend)];
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

const char* CublasLtLibrary::name() const { return backend == GpuBackend::kHip ? "hipBLASLt" : "cuBLASLt"; }

std::vector<std::string> cublaslt_library_candidates() {
  const char* env = std::getenv("MAX_C_CUBLASLT_LIBRARY");
  if (env && *env) return {env};
  return {"libcublasLt.so.12", "libcublasLt.so.13", "libcublasLt.so"};
}

std::unique_ptr<CublasLtLibrary> load_cublaslt(const std::vector<std::string>& candidates, GpuBackend backend) {
  const bool hip = backend == GpuBackend::kHip;
  auto lib = open_first<CublasLtLibrary>(
      candidates, [backend](const std::string& name, std::string* why) { return try_open(name, backend, why); },
      hip ? "hipBLASLt not found (set MAX_C_HIPBLASLT_LIBRARY to libhipblaslt.so's path): "
          : "cuBLASLt not found (set MAX_C_CUBLASLT_LIBRARY to libcublasLt.so's path): ");
  lib->backend = backend;
  return lib;
}

std::unique_ptr<CublasLtLibrary> init_cublaslt(const SymbolLookup& lookup, const std::string& origin,
                                               GpuBackend backend) {
  auto lib = std::make_unique<CublasLtLibrary>();
  lib->backend = backend;
  std::string why = bind_table(*lib, lookup, origin);
  if (why.empty() && describe(*lib, origin, &why)) {
    lib->path = origin;
    lib->available = true;
  } else {
    lib->unavailable_reason = why;
  }
  return lib;
}

std::shared_ptr<const CublasLtLibrary> cublaslt(GpuBackend backend) {
  std::lock_guard lock(process_mu);
  if (installed_library(backend)) return installed_library(backend);
  if (!loaded_library(backend)) loaded_library(backend) = load_for_process(backend);
  return loaded_library(backend);
}

void set_process_cublaslt(std::shared_ptr<const CublasLtLibrary> library, GpuBackend backend) {
  std::lock_guard lock(process_mu);
  installed_library(backend) = std::move(library);
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

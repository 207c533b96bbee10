#include "driver/cuda/cuda_driver.h"

#include <cstdlib>
#include <mutex>

#include "base/log.h"
#include "base/str_cat.h"
#include "driver/cuda/cuda_error.h"

namespace maxc::cuda {
namespace {

// cuInit and the device count, recording why the driver cannot serve when it cannot.
void initialize(CudaDriver& d, const std::string& origin) {
  CUresult r = d.api.cuInit(0);
  if (r != result::kSuccess) {
    d.unavailable_reason = str_cat("cuInit of ", origin, " failed: ", cuda_error_text(&d.api, r));
    return;
  }
  if (d.api.cuDriverGetVersion(&d.version) != result::kSuccess) d.version = 0;
  int count = 0;
  r = d.api.cuDeviceGetCount(&count);
  if (r != result::kSuccess) {
    d.unavailable_reason = str_cat("cuDeviceGetCount failed: ", cuda_error_text(&d.api, r));
    return;
  }
  if (count <= 0) {
    d.unavailable_reason = str_cat("the CUDA driver of ", origin, " sees no device");
    return;
  }
  d.device_count = count;
  d.available = true;
}

std::unique_ptr<CudaDriver> bind_and_initialize(std::unique_ptr<CudaDriver> d, const SymbolLookup& lookup,
                                                const std::string& origin) {
  const std::string missing = bind_cuda_api(lookup, d->api);
  if (!missing.empty()) {
    d->api = CudaApi{};
    d->unavailable_reason = str_cat(origin, " lacks ", missing, " (not a CUDA driver, or one too old)");
    return d;
  }
  initialize(*d, origin);
  return d;
}

}  // namespace

std::unique_ptr<CudaDriver> load_cuda_driver(const std::string& library) {
  auto d = std::make_unique<CudaDriver>();
  std::string why;
  d->library = DynamicLibrary::open(library, &why);
  if (!d->library) {
    d->unavailable_reason = str_cat("no CUDA driver: ", why);
    return d;
  }
  const DynamicLibrary* lib = d->library.get();
  return bind_and_initialize(std::move(d), [lib](const char* name) { return lib->symbol(name); }, library);
}

std::unique_ptr<CudaDriver> init_cuda_driver(const SymbolLookup& lookup, std::string origin) {
  return bind_and_initialize(std::make_unique<CudaDriver>(), lookup, origin);
}

std::string default_cuda_library() {
  const char* env = std::getenv("MAX_C_CUDA_LIBRARY");
  return env && *env ? std::string(env) : std::string("libcuda.so.1");
}

namespace {

// Never destroyed: device objects and their memory outlive static destruction.
const CudaDriver* process_driver = nullptr;
std::mutex process_driver_mu;

}  // namespace

const CudaDriver& cuda_driver() {
  std::lock_guard lock(process_driver_mu);
  if (!process_driver) {
    const CudaDriver* d = load_cuda_driver(default_cuda_library()).release();
    if (d->available)
      MAXC_LOG(kInfo, "CUDA driver ", cuda_version_string(d->version), " with ", d->device_count, " device(s)");
    else
      MAXC_LOG(kInfo, "CUDA unavailable: ", d->unavailable_reason);
    process_driver = d;
  }
  return *process_driver;
}

void set_process_cuda_driver(std::unique_ptr<CudaDriver> driver) {
  std::lock_guard lock(process_driver_mu);
  if (process_driver)
    fail(Code::kFailedPrecondition, "the process's CUDA driver is already in use; set it before anything asks for it");
  process_driver = driver.release();
}

std::string cuda_version_string(int version) {
  return str_cat(version / 1000, ".", (version % 1000) / 10);
}

}  // namespace maxc::cuda

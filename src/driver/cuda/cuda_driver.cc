#include "driver/cuda/cuda_driver.h"

#include <cstdlib>
#include <mutex>

#include "base/log.h"
#include "base/str_cat.h"
#include "driver/cuda/cuda_error.h"
#include "driver/hip/hip_runtime.h"

namespace maxc::cuda {
namespace {

// The runtime's own names for the two calls initialization makes, for its messages.
const char* init_call(const CudaApi& api) { return api.backend == GpuBackend::kHip ? "hipInit" : "cuInit"; }
const char* count_call(const CudaApi& api) {
  return api.backend == GpuBackend::kHip ? "hipGetDeviceCount" : "cuDeviceGetCount";
}

// Initialization and the device count, recording why the driver cannot serve when it cannot.
void initialize(CudaDriver& d, const std::string& origin) {
  CUresult r = d.api.cuInit(0);
  if (r != result::kSuccess) {
    d.unavailable_reason = str_cat(init_call(d.api), " of ", origin, " failed: ", cuda_error_text(&d.api, r));
    return;
  }
  if (d.api.cuDriverGetVersion(&d.version) != result::kSuccess) d.version = 0;
  int count = 0;
  r = d.api.cuDeviceGetCount(&count);
  if (r != result::kSuccess) {
    d.unavailable_reason = str_cat(count_call(d.api), " failed: ", cuda_error_text(&d.api, r));
    return;
  }
  if (count <= 0) {
    d.unavailable_reason = str_cat("the ", backend_name(d.api.backend), " driver of ", origin, " sees no device");
    return;
  }
  d.device_count = count;
  d.available = true;
}

std::unique_ptr<CudaDriver> bind_and_initialize(std::unique_ptr<CudaDriver> d, const SymbolLookup& lookup,
                                                const std::string& origin, ApiBinder bind) {
  const std::string missing = bind(lookup, d->api);
  if (!missing.empty()) {
    const GpuBackend backend = d->api.backend;
    d->api = CudaApi{};
    d->api.backend = backend;
    d->unavailable_reason =
        str_cat(origin, " lacks ", missing, " (not a ", backend_name(backend), " runtime, or one too old)");
    return d;
  }
  initialize(*d, origin);
  return d;
}

std::string bind_hip(const SymbolLookup& lookup, CudaApi& api) {
  api.backend = GpuBackend::kHip;  // named in the message, should a symbol be missing
  return hip::bind_hip_as_cuda_api(lookup, api);
}

// `library` opened, bound with `bind` and initialized. Null, with the reason in *why_not, when
// it does not open or is not the runtime (lacks its symbols): a search goes on to the next.
std::unique_ptr<CudaDriver> load_driver(const std::string& library, ApiBinder bind, std::string* why_not) {
  auto d = std::make_unique<CudaDriver>();
  d->library = DynamicLibrary::open(library, why_not);
  if (!d->library) return nullptr;
  const DynamicLibrary* lib = d->library.get();
  d = bind_and_initialize(std::move(d), [lib](const char* name) { return lib->symbol(name); }, library, bind);
  if (!d->api.cuInit) {
    *why_not = d->unavailable_reason;
    return nullptr;
  }
  return d;
}

}  // namespace

std::unique_ptr<CudaDriver> load_cuda_driver(const std::string& library) {
  std::string why;
  if (auto d = load_driver(library, bind_cuda_api, &why)) return d;
  auto none = std::make_unique<CudaDriver>();
  none->unavailable_reason = str_cat("no CUDA driver: ", why);
  return none;
}

std::unique_ptr<CudaDriver> load_hip_driver(const std::vector<std::string>& candidates) {
  std::unique_ptr<CudaDriver> d;
  if (candidates.empty()) {
    d = std::make_unique<CudaDriver>();
    d->unavailable_reason = "no HIP runtime: MAX_C_HIP_LIBRARY is empty";
  } else {
    d = open_first<CudaDriver>(
        candidates, [](const std::string& name, std::string* why) { return load_driver(name, bind_hip, why); },
        "no HIP runtime: ");
  }
  d->api.backend = GpuBackend::kHip;
  return d;
}

std::unique_ptr<CudaDriver> init_cuda_driver(const SymbolLookup& lookup, std::string origin) {
  return bind_and_initialize(std::make_unique<CudaDriver>(), lookup, origin, bind_cuda_api);
}

std::unique_ptr<CudaDriver> init_hip_driver(const SymbolLookup& lookup, std::string origin) {
  return bind_and_initialize(std::make_unique<CudaDriver>(), lookup, origin, bind_hip);
}

std::string default_cuda_library() {
  const char* env = std::getenv("MAX_C_CUDA_LIBRARY");
  return env && *env ? std::string(env) : std::string("libcuda.so.1");
}

namespace {

// One runtime's driver for the process. Never destroyed: device objects and their memory
// outlive static destruction.
class ProcessDriver {
 public:
  using Loader = std::unique_ptr<CudaDriver> (*)();
  ProcessDriver(Loader load, const char* what) : load_(load), what_(what) {}

  const CudaDriver& get() {
    std::lock_guard lock(mu_);
    if (!driver_) {
      const CudaDriver* d = load_().release();
      if (d->available)
        MAXC_LOG(kInfo, what_, " driver ", driver_version_string(d->api.backend, d->version), " with ", d->device_count, " device(s)");
      else
        MAXC_LOG(kInfo, what_, " unavailable: ", d->unavailable_reason);
      driver_ = d;
    }
    return *driver_;
  }

  void set(std::unique_ptr<CudaDriver> driver) {
    std::lock_guard lock(mu_);
    if (driver_)
      fail(Code::kFailedPrecondition, "the process's ", what_,
           " driver is already in use; set it before anything asks for it");
    driver_ = driver.release();
  }

 private:
  Loader load_;
  const char* what_;
  std::mutex mu_;
  const CudaDriver* driver_ = nullptr;
};

ProcessDriver& process_cuda() {
  static auto* slot = new ProcessDriver([] { return load_cuda_driver(default_cuda_library()); }, "CUDA");
  return *slot;
}

ProcessDriver& process_hip() {
  static auto* slot = new ProcessDriver([] { return load_hip_driver(hip::hip_runtime_candidates()); }, "HIP");
  return *slot;
}

}  // namespace

const CudaDriver& cuda_driver() { return process_cuda().get(); }
const CudaDriver& hip_driver() { return process_hip().get(); }
void set_process_cuda_driver(std::unique_ptr<CudaDriver> driver) { process_cuda().set(std::move(driver)); }
void set_process_hip_driver(std::unique_ptr<CudaDriver> driver) { process_hip().set(std::move(driver)); }

std::string driver_version_string(GpuBackend backend, int version) {
  if (backend == GpuBackend::kHip) return str_cat(version / 10000000, ".", version / 100000 % 100);
  return str_cat(version / 1000, ".", (version % 1000) / 10);
}

}  // namespace maxc::cuda

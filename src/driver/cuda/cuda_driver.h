// The GPU drivers of this process: libcuda (and HIP's runtime, libamdhip64, bound into the
// same table: driver/hip/hip_runtime.h) opened with dlopen, the function table bound and the
// runtime initialized, once, on first use. Where there is no driver (no library, a stub
// library, no device, initialization failing) the driver is simply unavailable, with the
// reason in words; nothing aborts and the CPU paths never notice.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "driver/cuda/cuda_api.h"
#include "driver/cuda/dynamic_library.h"

namespace maxc::cuda {

struct CudaDriver {
  CudaApi api;
  bool available = false;
  std::string unavailable_reason;  // set when !available
  int version = 0;  // cuDriverGetVersion: 12040 for CUDA 12.4; 50221153 for HIP 5.2
  int device_count = 0;
  std::unique_ptr<DynamicLibrary> library;  // null for a table bound by someone else (tests)
};

// How a runtime's symbols fill the table: bind_cuda_api, or hip::bind_hip_as_cuda_api.
// Returns the first missing symbol's name, or "".
using ApiBinder = std::string (*)(const SymbolLookup& lookup, CudaApi& api);

// libcuda at `library` (a soname or a path), bound and initialized. Never throws.
std::unique_ptr<CudaDriver> load_cuda_driver(const std::string& library);
// HIP's runtime: the first of `candidates` that opens, bound and initialized. Never throws.
std::unique_ptr<CudaDriver> load_hip_driver(const std::vector<std::string>& candidates);

// A table bound through `lookup` (tests bind fakes), initialized as a loaded one would be.
std::unique_ptr<CudaDriver> init_cuda_driver(const SymbolLookup& lookup, std::string origin);
std::unique_ptr<CudaDriver> init_hip_driver(const SymbolLookup& lookup, std::string origin);

// The library the process driver comes from: $MAX_C_CUDA_LIBRARY when set, else
// libcuda.so.1, the name the driver package installs.
std::string default_cuda_library();

// The process's drivers, loaded on the first call and kept to the end of the process. HIP's
// comes from hip::hip_runtime_candidates().
const CudaDriver& cuda_driver();
const CudaDriver& hip_driver();

// Makes `driver` the process's, so that tests run the whole engine on a fake one
// (tests/gpu/fake_cuda.h, fake_hip.h). FAILED_PRECONDITION once anything has asked for it.
void set_process_cuda_driver(std::unique_ptr<CudaDriver> driver);
void set_process_hip_driver(std::unique_ptr<CudaDriver> driver);

// "12.4" from CUDA's 12040; "5.2" from HIP's 50221153.
std::string driver_version_string(GpuBackend backend, int version);

}  // namespace maxc::cuda

// The CUDA driver of this process: libcuda opened with dlopen, its function table bound and
// cuInit called, once, on first use. Where there is no driver (no libcuda.so.1, a stub
// library, no device, cuInit failing) the driver is simply unavailable, with the reason in
// words; nothing aborts and the CPU paths never notice.
#pragma once

#include <memory>
#include <string>

#include "driver/cuda/cuda_api.h"
#include "driver/cuda/dynamic_library.h"

namespace maxc::cuda {

struct CudaDriver {
  CudaApi api;
  bool available = false;
  std::string unavailable_reason;  // set when !available
  int version = 0;                 // cuDriverGetVersion: 12040 for 12.4
  int device_count = 0;
  std::unique_ptr<DynamicLibrary> library;  // null for a table bound by someone else (tests)
};

// libcuda at `library` (a soname or a path), bound and initialized. Never throws.
std::unique_ptr<CudaDriver> load_cuda_driver(const std::string& library);

// A table bound elsewhere (tests bind fakes), initialized as a loaded one would be.
std::unique_ptr<CudaDriver> init_cuda_driver(const SymbolLookup& lookup, std::string origin);

// The library the process driver comes from: $MAX_C_CUDA_LIBRARY when set, else
// libcuda.so.1, the name the driver package installs.
std::string default_cuda_library();

// The process's driver, loaded on the first call and kept to the end of the process.
const CudaDriver& cuda_driver();

// Makes `driver` the process's driver, so that tests run the whole engine on a fake one
// (tests/gpu/fake_cuda.h). FAILED_PRECONDITION once anything has asked for the driver.
void set_process_cuda_driver(std::unique_ptr<CudaDriver> driver);

// "12.4" from 12040.
std::string cuda_version_string(int version);

}  // namespace maxc::cuda

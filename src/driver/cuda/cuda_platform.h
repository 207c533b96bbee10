// The GPUs of a driver (CUDA's, or HIP's in its place): how many there are, why there are
// none, and one CudaDevice per ordinal, created on first use (retaining a context costs a few
// hundred milliseconds and device memory, so a process that never touches a GPU never pays
// for it).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_driver.h"

namespace maxc::cuda {

class CudaPlatform {
 public:
  explicit CudaPlatform(const CudaDriver& driver);
  // The process's devices, over cuda_driver() and hip_driver(); never destroyed.
  static CudaPlatform& process();
  static CudaPlatform& process_hip();

  int device_count() const { return driver_.available ? driver_.device_count : 0; }
  // Empty when devices exist; else why not, in words.
  const std::string& unavailable_reason() const { return driver_.unavailable_reason; }

  // Device `ordinal` in [0, device_count()); NOT_FOUND (with the reason when there are no
  // devices at all) otherwise; the driver's error when the device cannot be opened.
  CudaDevice& device(int ordinal);

 private:
  const CudaDriver& driver_;
  std::mutex mu_;
  std::vector<std::unique_ptr<CudaDevice>> devices_;
};

}  // namespace maxc::cuda

// Compiled kernels loaded into a device: a module from a cubin or PTX image (what the kernel
// cache returns), its functions by (lowered) name, and launches on a stream.
#pragma once

#include <string>

#include "driver/cuda/cuda_api.h"

namespace maxc::cuda {

class CudaDevice;
class CudaStream;

struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;  // dynamic shared memory
};

class CudaModule {
 public:
  // `image` is a cubin, or PTX text (the driver JIT-compiles it for the device).
  CudaModule(const CudaDevice& device, const std::string& image, std::string label);
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  // NOT_FOUND naming the module when it has no such function.
  CUfunction function(const std::string& name) const;

  // Queues f on `stream` (null: the legacy default stream); args[i] points at parameter i.
  void launch(CUfunction f, const LaunchShape& shape, const CudaStream* stream, void** args) const;

 private:
  const CudaDevice& device_;
  CUmodule module_ = nullptr;
  std::string label_;
};

}  // namespace maxc::cuda

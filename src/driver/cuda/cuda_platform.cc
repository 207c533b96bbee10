#include "driver/cuda/cuda_platform.h"

#include "base/error.h"

namespace maxc::cuda {

CudaPlatform::CudaPlatform(const CudaDriver& driver) : driver_(driver) {
  devices_.resize(static_cast<size_t>(device_count()));
}

CudaPlatform& CudaPlatform::process() {
  static CudaPlatform* platform = new CudaPlatform(cuda_driver());
  return *platform;
}

CudaPlatform& CudaPlatform::process_hip() {
  static CudaPlatform* platform = new CudaPlatform(hip_driver());
  return *platform;
}

CudaDevice& CudaPlatform::device(int ordinal) {
  if (ordinal < 0 || ordinal >= device_count()) {
    const char* kind = backend_name(driver_.api.backend);
    if (device_count() == 0) fail(Code::kNotFound, "no ", kind, " device ", ordinal, ": ", unavailable_reason());
    fail(Code::kNotFound, "no ", kind, " device ", ordinal, ": the driver sees ", device_count());
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = devices_[static_cast<size_t>(ordinal)];
  if (!slot) slot = std::make_unique<CudaDevice>(driver_.api, ordinal);
  return *slot;
}

}  // namespace maxc::cuda

// A CUDA stream of one device: an ordered queue of copies and kernels. The engine gives each
// concurrent execution its own stream; events (cuda_event.h) order work across streams.
#pragma once

#include "driver/cuda/cuda_api.h"

namespace maxc::cuda {

class CudaDevice;
class CudaEvent;

class CudaStream {
 public:
  // non_blocking: the stream does not wait for work on the legacy default stream (nor it for
  // this one). The default keeps stream-less copies ordered with the stream's work, which is
  // what callers mixing the two expect.
  explicit CudaStream(const CudaDevice& device, bool non_blocking = false);
  // Waits for the stream's work first: memory freed on it may be handed to a stream created
  // later at the same address (the allocators key their caches by stream).
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  CUstream handle() const { return stream_; }
  const CudaDevice& device() const { return device_; }

  void synchronize() const;
  // Work queued here after this call waits for `event` (recorded on any stream).
  void wait(const CudaEvent& event) const;

 private:
  const CudaDevice& device_;
  CUstream stream_ = nullptr;
};

}  // namespace maxc::cuda

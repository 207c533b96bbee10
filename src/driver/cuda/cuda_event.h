// A CUDA event: a marker recorded into a stream, to wait for from the host or from another
// stream, and (when created with timing) to time the work between two of them.
#pragma once

#include "driver/cuda/cuda_api.h"

namespace maxc::cuda {

class CudaDevice;
class CudaStream;

class CudaEvent {
 public:
  // timing: elapsed_ms works; without it recording and waiting are cheaper.
  explicit CudaEvent(const CudaDevice& device, bool timing = false);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  CUevent handle() const { return event_; }

  // Marks the point after all work queued so far on `stream` (null: the legacy default one).
  void record(const CudaStream* stream);
  void synchronize() const;
  // Whether the work before the marker has finished (false until recorded work completes).
  bool done() const;
  // Milliseconds between two recorded, completed timing events.
  static float elapsed_ms(const CudaEvent& start, const CudaEvent& end);

 private:
  const CudaDevice& device_;
  CUevent event_ = nullptr;
};

}  // namespace maxc::cuda

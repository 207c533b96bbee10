#include "driver/cuda/cuda_event.h"

#include "base/str_cat.h"
#include "driver/cuda/cuda_context.h"
#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_error.h"
#include "driver/cuda/cuda_stream.h"

namespace maxc::cuda {

CudaEvent::CudaEvent(const CudaDevice& device, bool timing) : device_(device) {
  ContextScope scope(device.api(), device.context());
  check_cuda(device.api(), device.api().cuEventCreate(&event_, timing ? 0u : kEventDisableTiming),
             str_cat("cuEventCreate on ", device.describe()));
}

CudaEvent::~CudaEvent() {
  const CudaApi& api = device_.api();
  try {
    ContextScope scope(api, device_.context());
    warn_cuda(api, api.cuEventDestroy_v2(event_), "cuEventDestroy_v2");
  } catch (const std::exception&) {
  }
}

void CudaEvent::record(const CudaStream* stream) {
  if (stream && &stream->device() != &device_)
    fail(Code::kInvalidArgument, "an event of ", device_.describe(), " cannot be recorded on a stream of ",
         stream->device().describe());
  ContextScope scope(device_.api(), device_.context());
  check_cuda(device_.api(), device_.api().cuEventRecord(event_, stream ? stream->handle() : nullptr),
             str_cat("cuEventRecord on ", device_.describe()));
}

void CudaEvent::synchronize() const {
  ContextScope scope(device_.api(), device_.context());
  check_cuda(device_.api(), device_.api().cuEventSynchronize(event_),
             str_cat("waiting for an event of ", device_.describe()));
}

bool CudaEvent::done() const {
  ContextScope scope(device_.api(), device_.context());
  const CUresult r = device_.api().cuEventQuery(event_);
  if (r == result::kNotReady) return false;
  check_cuda(device_.api(), r, str_cat("cuEventQuery on ", device_.describe()));
  return true;
}

float CudaEvent::elapsed_ms(const CudaEvent& start, const CudaEvent& end) {
  const CudaDevice& device = start.device_;
  ContextScope scope(device.api(), device.context());
  float ms = 0;
  check_cuda(device.api(), device.api().cuEventElapsedTime(&ms, start.event_, end.event_),
             str_cat("cuEventElapsedTime on ", device.describe()));
  return ms;
}

}  // namespace maxc::cuda

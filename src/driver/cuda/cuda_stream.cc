#include "driver/cuda/cuda_stream.h"

#include "base/str_cat.h"
#include "driver/cuda/cuda_context.h"
#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_error.h"
#include "driver/cuda/cuda_event.h"

namespace maxc::cuda {

CudaStream::CudaStream(const CudaDevice& device, bool non_blocking) : device_(device) {
  ContextScope scope(device.api(), device.context());
  check_cuda(device.api(), device.api().cuStreamCreate(&stream_, non_blocking ? kStreamNonBlocking : 0u),
             str_cat("cuStreamCreate on ", device.describe()));
}

CudaStream::~CudaStream() {
  const CudaApi& api = device_.api();
  try {
    ContextScope scope(api, device_.context());
    warn_cuda(api, api.cuStreamSynchronize(stream_), "cuStreamSynchronize before cuStreamDestroy_v2");
    warn_cuda(api, api.cuStreamDestroy_v2(stream_), "cuStreamDestroy_v2");
  } catch (const std::exception&) {
    // No context to destroy it in: the process is going down, and the stream with it.
  }
}

void CudaStream::synchronize() const {
  ContextScope scope(device_.api(), device_.context());
  check_cuda(device_.api(), device_.api().cuStreamSynchronize(stream_),
             str_cat("synchronizing a stream of ", device_.describe()));
}

void CudaStream::wait(const CudaEvent& event) const {
  ContextScope scope(device_.api(), device_.context());
  check_cuda(device_.api(), device_.api().cuStreamWaitEvent(stream_, event.handle(), 0),
             str_cat("cuStreamWaitEvent on ", device_.describe()));
}

}  // namespace maxc::cuda

// Makes a device's primary context current on the calling thread for the length of a scope,
// and restores whatever was current before. Driver calls act on the thread's current
// context; pushing and popping (rather than setting) leaves a host program's own CUDA
// context exactly as it was.
#pragma once

#include "driver/cuda/cuda_api.h"
#include "driver/cuda/cuda_error.h"

namespace maxc::cuda {

class ContextScope {
 public:
  ContextScope(const CudaApi& api, CUcontext context) : api_(api) {
    check_cuda(api_, api_.cuCtxPushCurrent_v2(context), "cuCtxPushCurrent_v2");
  }
  ~ContextScope() {
    CUcontext popped = nullptr;
    warn_cuda(api_, api_.cuCtxPopCurrent_v2(&popped), "cuCtxPopCurrent_v2");
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const CudaApi& api_;
};

}  // namespace maxc::cuda

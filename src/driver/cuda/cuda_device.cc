#include "driver/cuda/cuda_device.h"

#include "base/str_cat.h"
#include "driver/cuda/cuda_context.h"
#include "driver/cuda/cuda_error.h"
#include "driver/cuda/cuda_stream.h"

namespace maxc::cuda {
namespace {

CUdevice device_of(const CudaApi& api, int ordinal) {
  CUdevice device = 0;
  check_cuda(api, api.cuDeviceGet(&device, ordinal),
             str_cat("cuDeviceGet of ", backend_name(api.backend), " device ", ordinal));
  return device;
}

CUcontext retain_primary_context(const CudaApi& api, CUdevice device, int ordinal) {
  CUcontext context = nullptr;
  check_cuda(api, api.cuDevicePrimaryCtxRetain(&context, device),
             str_cat("cuDevicePrimaryCtxRetain of ", backend_name(api.backend), " device ", ordinal));
  return context;
}

std::string description(const CudaDeviceProperties& p) {
  return str_cat(backend_prefix(p.backend), ":", p.ordinal, " (", p.name, ", ", p.architecture(), ")");
}

}  // namespace

CudaDevice::CudaDevice(const CudaApi& api, int ordinal)
    : api_(api),
      device_(device_of(api, ordinal)),
      properties_(query_device_properties(api, device_, ordinal)),
      context_(retain_primary_context(api, device_, ordinal)),
      device_memory_(api, context_, description(properties_)),
      pinned_memory_(api, context_, str_cat("pinned host memory of ", description(properties_))),
      device_allocator_(device_memory_),
      pinned_allocator_(pinned_memory_) {}

CudaDevice::~CudaDevice() {
  // The caches go back while the context they live in is still retained.
  device_allocator_.release_cached();
  pinned_allocator_.release_cached();
  warn_cuda(api_, api_.cuDevicePrimaryCtxRelease_v2(device_), "cuDevicePrimaryCtxRelease_v2");
}

std::string CudaDevice::describe() const { return description(properties_); }

CUstream CudaDevice::stream_handle(const CudaStream* stream) const {
  if (!stream) return nullptr;
  if (&stream->device() != this)
    fail(Code::kInvalidArgument, "a stream of ", stream->device().describe(), " was given to ", describe());
  return stream->handle();
}

void* CudaDevice::allocate(size_t bytes, bool zero, const CudaStream* stream) {
  void* p = device_allocator_.allocate(bytes, stream);
  if (zero && bytes > 0) {
    try {
      fill_zero(p, bytes, stream);
    } catch (...) {
      device_allocator_.deallocate(p);
      throw;
    }
  }
  return p;
}

void CudaDevice::copy_to_device(void* dst, const void* src, size_t bytes, const CudaStream* stream) const {
  if (bytes == 0) return;
  const CUstream s = stream_handle(stream);
  ContextScope scope(api_, context_);
  const CUresult r = stream ? api_.cuMemcpyHtoDAsync_v2(device_address(dst), src, bytes, s)
                            : api_.cuMemcpyHtoD_v2(device_address(dst), src, bytes);
  check_cuda(api_, r, str_cat("copying ", bytes, " bytes from the host to ", describe()));
}

void CudaDevice::copy_to_host(void* dst, const void* src, size_t bytes, const CudaStream* stream) const {
  if (bytes == 0) return;
  const CUstream s = stream_handle(stream);
  ContextScope scope(api_, context_);
  const CUresult r = stream ? api_.cuMemcpyDtoHAsync_v2(dst, device_address(src), bytes, s)
                            : api_.cuMemcpyDtoH_v2(dst, device_address(src), bytes);
  check_cuda(api_, r, str_cat("copying ", bytes, " bytes from ", describe(), " to the host"));
}

void CudaDevice::copy_within(void* dst, const void* src, size_t bytes, const CudaStream* stream) const {
  if (bytes == 0) return;
  const CUstream s = stream_handle(stream);
  ContextScope scope(api_, context_);
  const CUresult r = stream ? api_.cuMemcpyDtoDAsync_v2(device_address(dst), device_address(src), bytes, s)
                            : api_.cuMemcpyDtoD_v2(device_address(dst), device_address(src), bytes);
  check_cuda(api_, r, str_cat("copying ", bytes, " bytes within ", describe()));
}

void CudaDevice::copy_from_peer(void* dst, const CudaDevice& from, const void* src, size_t bytes,
                                const CudaStream* stream) const {
  if (&from == this) return copy_within(dst, src, bytes, stream);
  if (bytes == 0) return;
  const CUstream s = stream_handle(stream);
  ContextScope scope(api_, context_);
  check_cuda(api_,
             api_.cuMemcpyPeerAsync(device_address(dst), context_, device_address(src), from.context(), bytes, s),
             str_cat("copying ", bytes, " bytes from ", from.describe(), " to ", describe()));
  // Without a stream the copy is synchronous, like the other stream-less copies.
  if (!stream) check_cuda(api_, api_.cuStreamSynchronize(nullptr), str_cat("waiting for a copy to ", describe()));
}

void CudaDevice::fill_zero(void* dst, size_t bytes, const CudaStream* stream) const {
  if (bytes == 0) return;
  const CUstream s = stream_handle(stream);
  ContextScope scope(api_, context_);
  const CUresult r = stream ? api_.cuMemsetD8Async(device_address(dst), 0, bytes, s)
                            : api_.cuMemsetD8_v2(device_address(dst), 0, bytes);
  check_cuda(api_, r, str_cat("zeroing ", bytes, " bytes on ", describe()));
  // cuMemsetD8 may return before the fill is done (it is asynchronous for device memory);
  // memory handed out zeroed must read as zeros to whatever comes next, on any stream.
  if (!stream) check_cuda(api_, api_.cuStreamSynchronize(nullptr), str_cat("waiting for a fill on ", describe()));
}

void CudaDevice::memory_info(size_t* free_bytes, size_t* total_bytes) const {
  ContextScope scope(api_, context_);
  check_cuda(api_, api_.cuMemGetInfo_v2(free_bytes, total_bytes), str_cat("cuMemGetInfo_v2 on ", describe()));
}

void CudaDevice::synchronize() const {
  ContextScope scope(api_, context_);
  check_cuda(api_, api_.cuCtxSynchronize(), str_cat("synchronizing ", describe()));
}

}  // namespace maxc::cuda

#include "driver/cuda/cuda_device_properties.h"

#include "base/str_cat.h"
#include "driver/cuda/cuda_error.h"

namespace maxc::cuda {
namespace {

int attribute_of(const CudaApi& api, CUdevice device, int ordinal, CUdevice_attribute attribute, const char* what) {
  int value = 0;
  check_cuda(api, api.cuDeviceGetAttribute(&value, attribute, device),
             str_cat("cuDeviceGetAttribute(", what, ") of CUDA device ", ordinal));
  return value;
}

}  // namespace

std::string CudaDeviceProperties::architecture() const { return str_cat("sm_", compute_major, compute_minor); }

CudaDeviceProperties query_device_properties(const CudaApi& api, CUdevice device, int ordinal) {
  CudaDeviceProperties p;
  p.ordinal = ordinal;
  char name[256] = {};
  check_cuda(api, api.cuDeviceGetName(name, static_cast<int>(sizeof name) - 1, device),
             str_cat("cuDeviceGetName of CUDA device ", ordinal));
  p.name = name;
  size_t total = 0;
  check_cuda(api, api.cuDeviceTotalMem_v2(&total, device), str_cat("cuDeviceTotalMem_v2 of CUDA device ", ordinal));
  p.total_memory = total;
  using namespace attribute;
  p.compute_major = attribute_of(api, device, ordinal, kComputeCapabilityMajor, "compute capability major");
  p.compute_minor = attribute_of(api, device, ordinal, kComputeCapabilityMinor, "compute capability minor");
  p.multiprocessors = attribute_of(api, device, ordinal, kMultiprocessorCount, "multiprocessor count");
  p.max_threads_per_block = attribute_of(api, device, ordinal, kMaxThreadsPerBlock, "max threads per block");
  p.warp_size = attribute_of(api, device, ordinal, kWarpSize, "warp size");
  p.max_shared_memory_per_block =
      attribute_of(api, device, ordinal, kMaxSharedMemoryPerBlock, "max shared memory per block");
  p.unified_addressing = attribute_of(api, device, ordinal, kUnifiedAddressing, "unified addressing") != 0;
  p.integrated = attribute_of(api, device, ordinal, kIntegrated, "integrated") != 0;
  return p;
}

}  // namespace maxc::cuda

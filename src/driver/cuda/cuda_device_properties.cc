#include "driver/cuda/cuda_device_properties.h"

#include "base/str_cat.h"
#include "driver/cuda/cuda_error.h"

namespace maxc::cuda {
namespace {

int attribute_of(const CudaApi& api, CUdevice device, const std::string& label, CUdevice_attribute attribute,
                 const char* what) {
  int value = 0;
  check_cuda(api, api.cuDeviceGetAttribute(&value, attribute, device),
             str_cat("cuDeviceGetAttribute(", what, ") of ", label));
  return value;
}

std::string arch_name_of(const CudaApi& api, CUdevice device, const std::string& label) {
  if (!api.device_arch_name) return "";
  char name[256] = {};
  check_cuda(api, api.device_arch_name(name, static_cast<int>(sizeof name) - 1, device),
             str_cat("the architecture of ", label));
  return name;
}

}  // namespace

std::string CudaDeviceProperties::architecture() const {
  return arch_name.empty() ? str_cat("sm_", compute_major, compute_minor) : arch_name;
}

std::string CudaDeviceProperties::label() const { return str_cat(backend_name(backend), " device ", ordinal); }

CudaDeviceProperties query_device_properties(const CudaApi& api, CUdevice device, int ordinal) {
  CudaDeviceProperties p;
  p.ordinal = ordinal;
  p.backend = api.backend;
  const std::string label = p.label();
  char name[256] = {};
  check_cuda(api, api.cuDeviceGetName(name, static_cast<int>(sizeof name) - 1, device),
             str_cat("cuDeviceGetName of ", label));
  p.name = name;
  size_t total = 0;
  check_cuda(api, api.cuDeviceTotalMem_v2(&total, device), str_cat("cuDeviceTotalMem_v2 of ", label));
  p.total_memory = total;
  p.arch_name = arch_name_of(api, device, label);
  using namespace attribute;
  p.compute_major = attribute_of(api, device, label, kComputeCapabilityMajor, "compute capability major");
  p.compute_minor = attribute_of(api, device, label, kComputeCapabilityMinor, "compute capability minor");
  p.multiprocessors = attribute_of(api, device, label, kMultiprocessorCount, "multiprocessor count");
  p.max_threads_per_block = attribute_of(api, device, label, kMaxThreadsPerBlock, "max threads per block");
  p.warp_size = attribute_of(api, device, label, kWarpSize, "warp size");
  p.max_shared_memory_per_block =
      attribute_of(api, device, label, kMaxSharedMemoryPerBlock, "max shared memory per block");
  p.unified_addressing = attribute_of(api, device, label, kUnifiedAddressing, "unified addressing") != 0;
  p.integrated = attribute_of(api, device, label, kIntegrated, "integrated") != 0;
  return p;
}

}  // namespace maxc::cuda

// A fake HIP runtime over the fake CUDA driver (gpu/fake_cuda.h): HIP's symbols by HIP name,
// so that the HIP binding (driver/hip/hip_runtime.h) and everything above it run here. The
// calls HIP shares with the driver are the CUDA fake's own; the five the binding adapts
// answer as HIP does (its error names, its attribute numbering, its device properties
// struct, hipMemcpyAsync), so a test sees whether the translation is right.
#pragma once

#include <cstring>
#include <map>
#include <set>
#include <string>

#include "driver/hip/hip_runtime.h"
#include "gpu/fake_cuda.h"

namespace maxc::testing {

struct FakeHip {
  std::string gcn_arch_name = "gfx90a:sramecc+:xnack-";
  int memcpy_async_calls = 0;
  int last_memcpy_kind = -1;
};

inline FakeHip& fake_hip() {
  static FakeHip f;
  return f;
}
inline void reset_fake_hip() {
  reset_fake();
  fake_hip() = FakeHip{};
}

namespace fake_hip_impl {

inline const char* hipGetErrorName(CUresult e) {
  switch (e) {
    case result::kOutOfMemory: return "hipErrorOutOfMemory";
    case result::kNoDevice: return "hipErrorNoDevice";
    case result::kInvalidValue: return "hipErrorInvalidValue";
    case result::kNotSupported: return "hipErrorNotSupported";
    default: return "hipErrorUnknown";
  }
}
// As ROCm 5.2's: for most errors the text is the name again.
inline const char* hipGetErrorString(CUresult e) { return e == result::kOutOfMemory ? "out of memory" : hipGetErrorName(e); }
inline CUresult hipDriverGetVersion(int* v) {
  *v = 50221153;  // HIP 5.2.21153
  return result::kSuccess;
}
inline CUresult hipDeviceGetAttribute(int* v, int a, int) {
  namespace at = hip::attribute;
  switch (a) {
    case at::kComputeCapabilityMajor: *v = 9; break;
    case at::kComputeCapabilityMinor: *v = 0; break;
    case at::kMultiprocessorCount: *v = 104; break;
    case at::kMaxThreadsPerBlock: *v = 1024; break;
    case at::kWarpSize: *v = 64; break;
    case at::kMaxSharedMemoryPerBlock: *v = 65536; break;
    case at::kUnifiedAddressing: *v = 1; break;
    case at::kIntegrated: *v = 0; break;
    default: return result::kInvalidValue;
  }
  return result::kSuccess;
}
inline CUresult hipMemcpyAsync(void* dst, const void* src, size_t bytes, int kind, CUstream stream) {
  ++fake_hip().memcpy_async_calls;
  fake_hip().last_memcpy_kind = kind;
  return fake_impl::async_copy(dst, src, bytes, stream);
}
// hipDeviceProp_t's name, memory size and gfx target, where ROCm puts them.
inline CUresult hipGetDeviceProperties(void* properties, int device) {
  auto* p = static_cast<char*>(properties);
  std::snprintf(p, 256, "Fake AMD GPU %d", device);
  std::memcpy(p + 256, &fake().total_memory, sizeof(size_t));
  std::snprintf(p + hip::kGcnArchNameOffset, hip::kGcnArchNameSize, "%s", fake_hip().gcn_arch_name.c_str());
  return result::kSuccess;
}

}  // namespace fake_hip_impl

// The fake's symbols by HIP name; `hidden` is reported missing.
inline void* fake_hip_symbol(const char* name, const std::set<std::string>& hidden = {}) {
  static const std::map<std::string, void*> table = [] {
    std::map<std::string, void*> t = {
#define MAXC_FAKE_SAME(cu, hip) {#hip, reinterpret_cast<void*>(&fake_impl::cu)},
        MAXC_HIP_SAME_AS_CUDA(MAXC_FAKE_SAME)
#undef MAXC_FAKE_SAME
#define MAXC_FAKE_ADAPTED(name, ret, params) {#name, reinterpret_cast<void*>(&fake_hip_impl::name)},
        MAXC_HIP_ADAPTED(MAXC_FAKE_ADAPTED)
#undef MAXC_FAKE_ADAPTED
    };
    t["hipDriverGetVersion"] = reinterpret_cast<void*>(&fake_hip_impl::hipDriverGetVersion);
    return t;
  }();
  if (hidden.count(name)) return nullptr;
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

// Makes the fake the process's HIP runtime (what Device::get(kHip) uses), once per process.
inline void use_fake_as_process_hip_driver() {
  static const bool installed = [] {
    cuda::set_process_hip_driver(cuda::init_hip_driver([](const char* name) { return fake_hip_symbol(name); }, "fake HIP"));
    return true;
  }();
  (void)installed;
}

}  // namespace maxc::testing

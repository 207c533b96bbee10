// A fake CUDA driver in host memory, bound through the same SymbolLookup as the real one:
// the driver-facing code (devices, allocators, copies, streams, events, modules) runs here
// end to end on a machine without a GPU. Device memory is malloc'ed host memory (a device
// pointer is its address), copies are memcpy, streams and events are tokens. The fake counts
// calls and can be told to fail, and it checks what a driver would reject: frees of unknown
// pointers, unbalanced context pushes, and calls a stream capture forbids. A stream being
// captured records its copies, memsets and launches into a graph instead of running them;
// launching the instantiated graph runs them. A launch runs nothing: it is recorded by name.
// This is the driver API's fake, for the binding and the driver layer's own tests (failures to
// inject, calls to count); the engine runs its kernels on the emulated GPU (tests/emulated_gpu).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "driver/cuda/cuda_api.h"
#include "driver/cuda/cuda_driver.h"

namespace maxc::testing {

using namespace maxc::cuda;

struct FakeCuda {
  // What the fake reports.
  CUresult init_result = result::kSuccess;
  int device_count = 2;
  int compute_major = 9, compute_minor = 0;
  size_t total_memory = size_t{80} << 30;
  size_t capacity = SIZE_MAX;  // cuMemAlloc past this many live bytes: out of memory
  // Failures to inject, by function.
  CUresult memcpy_result = result::kSuccess;
  CUresult event_query_result = result::kSuccess;
  // What happened.
  std::map<uintptr_t, size_t> device_blocks;  // live cuMemAlloc blocks
  std::map<void*, size_t> pinned_blocks;
  size_t device_bytes = 0;
  int mem_allocs = 0, mem_frees = 0, pinned_allocs = 0, pinned_frees = 0;
  int bad_frees = 0;
  int context_depth = 0, contexts_retained = 0;
  int memsets = 0, synchronizes = 0, stream_syncs = 0;
  int streams_live = 0, events_live = 0, modules_live = 0;
  std::vector<std::string> launches;  // function name of each cuLaunchKernel
  int graphs_live = 0, graph_execs_live = 0, graph_launches = 0, captures_invalidated = 0;
  std::vector<int> stream_flags, event_flags;
};

inline FakeCuda& fake() {
  static FakeCuda f;
  return f;
}

// A fresh fake; memory the previous test leaked stays leaked (tests check counts instead).
inline void reset_fake() { fake() = FakeCuda{}; }

namespace fake_impl {

inline CUcontext fake_context(CUdevice d) { return reinterpret_cast<CUcontext>(uintptr_t{0x1000} + d); }
// What a capture recorded: each node's name ("memcpy", "memset" or the kernel's) and work.
struct FakeGraph {
  std::vector<std::string> names;
  std::vector<std::function<void()>> work;
  bool invalidated = false;
};
struct Token {
  int kind;
  unsigned flags;
  FakeGraph* capture = nullptr;  // a stream being captured
};
inline FakeGraph*& active_capture() {  // the capture this (only) thread runs, if any
  static FakeGraph* g = nullptr;
  return g;
}
// A call that capture forbids (it would wait for, or allocate under, work not yet run).
inline bool refused_by_capture() {
  if (!active_capture()) return false;
  active_capture()->invalidated = true;
  return true;
}
inline FakeGraph* capturing(CUstream s) { return s ? reinterpret_cast<Token*>(s)->capture : nullptr; }
// Runs `work` now, or records it when `s` is being captured.
inline CUresult on_stream(CUstream s, const std::string& name, std::function<CUresult()> work) {
  if (FakeGraph* g = capturing(s)) {
    g->names.push_back(name);
    g->work.push_back([work] { work(); });
    return result::kSuccess;
  }
  return work();
}
struct FakeModule {
  std::string image;
  std::deque<std::string> functions;  // the handles cuModuleGetFunction gave out (stable addresses)
};

inline CUresult cuGetErrorName(CUresult e, const char** name) {
  switch (e) {
    case result::kOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return result::kSuccess;
    case result::kIllegalAddress: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; return result::kSuccess;
    case result::kNoDevice: *name = "CUDA_ERROR_NO_DEVICE"; return result::kSuccess;
    default: return result::kInvalidValue;  // the driver does not know it: callers fall back
  }
}
inline CUresult cuGetErrorString(CUresult e, const char** text) {
  if (e == result::kIllegalAddress) {
    *text = "an illegal memory access was encountered";
    return result::kSuccess;
  }
  return result::kInvalidValue;
}
inline CUresult cuInit(unsigned) { return fake().init_result; }
inline CUresult cuDriverGetVersion(int* v) {
  *v = 12040;
  return result::kSuccess;
}
inline CUresult cuDeviceGetCount(int* n) {
  *n = fake().device_count;
  return result::kSuccess;
}
inline CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal < 0 || ordinal >= fake().device_count) return result::kInvalidDevice;
  *d = ordinal;
  return result::kSuccess;
}
inline CUresult cuDeviceGetName(char* name, int length, CUdevice d) {
  std::string s = "Fake GPU " + std::to_string(d);
  std::strncpy(name, s.c_str(), static_cast<size_t>(length));
  return result::kSuccess;
}
inline CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case attribute::kComputeCapabilityMajor: *v = fake().compute_major; break;
    case attribute::kComputeCapabilityMinor: *v = fake().compute_minor; break;
    case attribute::kMultiprocessorCount: *v = 132; break;
    case attribute::kMaxThreadsPerBlock: *v = 1024; break;
    case attribute::kWarpSize: *v = 32; break;
    case attribute::kMaxSharedMemoryPerBlock: *v = 49152; break;
    case attribute::kUnifiedAddressing: *v = 1; break;
    case attribute::kIntegrated: *v = 0; break;
    default: return result::kInvalidValue;
  }
  return result::kSuccess;
}
inline CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice) {
  *bytes = fake().total_memory;
  return result::kSuccess;
}
inline CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  *c = fake_context(d);
  ++fake().contexts_retained;
  return result::kSuccess;
}
inline CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) {
  --fake().contexts_retained;
  return result::kSuccess;
}
inline CUresult cuCtxPushCurrent_v2(CUcontext) {
  ++fake().context_depth;
  return result::kSuccess;
}
inline CUresult cuCtxPopCurrent_v2(CUcontext* c) {
  if (fake().context_depth == 0) return result::kInvalidContext;
  --fake().context_depth;
  if (c) *c = nullptr;
  return result::kSuccess;
}
inline CUresult cuCtxSynchronize() {
  if (refused_by_capture()) return result::kStreamCaptureUnsupported;
  ++fake().synchronizes;
  return result::kSuccess;
}
inline CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  *total = fake().total_memory;
  *free_bytes = fake().total_memory - fake().device_bytes;
  return result::kSuccess;
}
inline CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  FakeCuda& f = fake();
  if (refused_by_capture()) return result::kStreamCaptureUnsupported;
  if (f.context_depth == 0) return result::kInvalidContext;
  if (bytes > f.capacity - f.device_bytes) return result::kOutOfMemory;
  void* m = std::malloc(bytes);
  *p = reinterpret_cast<uintptr_t>(m);
  f.device_blocks[*p] = bytes;
  f.device_bytes += bytes;
  ++f.mem_allocs;
  return result::kSuccess;
}
inline CUresult cuMemFree_v2(CUdeviceptr p) {
  FakeCuda& f = fake();
  auto it = f.device_blocks.find(p);
  if (it == f.device_blocks.end()) {
    ++f.bad_frees;
    return result::kInvalidValue;
  }
  f.device_bytes -= it->second;
  f.device_blocks.erase(it);
  std::free(reinterpret_cast<void*>(p));
  ++f.mem_frees;
  return result::kSuccess;
}
inline CUresult cuMemHostAlloc(void** p, size_t bytes, unsigned) {
  *p = std::malloc(bytes);
  fake().pinned_blocks[*p] = bytes;
  ++fake().pinned_allocs;
  return result::kSuccess;
}
inline CUresult cuMemFreeHost(void* p) {
  if (!fake().pinned_blocks.erase(p)) {
    ++fake().bad_frees;
    return result::kInvalidValue;
  }
  std::free(p);
  ++fake().pinned_frees;
  return result::kSuccess;
}
inline CUresult copy(void* dst, const void* src, size_t bytes) {
  if (fake().memcpy_result != result::kSuccess) return fake().memcpy_result;
  std::memcpy(dst, src, bytes);
  return result::kSuccess;
}
inline void* at(CUdeviceptr p) { return reinterpret_cast<void*>(p); }
inline CUresult sync_copy(void* dst, const void* src, size_t bytes) {
  return refused_by_capture() ? result::kStreamCaptureUnsupported : copy(dst, src, bytes);
}
inline CUresult async_copy(void* dst, const void* src, size_t bytes, CUstream s) {
  return on_stream(s, "memcpy", [=] { return copy(dst, src, bytes); });
}
inline CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) { return sync_copy(at(d), s, n); }
inline CUresult cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t n) { return sync_copy(d, at(s), n); }
inline CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return sync_copy(at(d), at(s), n); }
inline CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, CUstream st) {
  return async_copy(at(d), s, n, st);
}
inline CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, CUstream st) { return async_copy(d, at(s), n, st); }
inline CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  return async_copy(at(d), at(s), n, st);
}
inline CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext, CUdeviceptr s, CUcontext, size_t n, CUstream st) {
  return async_copy(at(d), at(s), n, st);
}
inline CUresult memset_now(CUdeviceptr d, unsigned char v, size_t n) {
  std::memset(at(d), v, n);
  ++fake().memsets;
  return result::kSuccess;
}
inline CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
  return refused_by_capture() ? result::kStreamCaptureUnsupported : memset_now(d, v, n);
}
inline CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  return on_stream(s, "memset", [=] { return memset_now(d, v, n); });
}
inline CUresult cuStreamCreate(CUstream* s, unsigned flags) {
  *s = reinterpret_cast<CUstream>(new Token{1, flags});
  ++fake().streams_live;
  fake().stream_flags.push_back(static_cast<int>(flags));
  return result::kSuccess;
}
inline CUresult cuStreamDestroy_v2(CUstream s) {
  delete reinterpret_cast<Token*>(s);
  --fake().streams_live;
  return result::kSuccess;
}
inline CUresult cuStreamSynchronize(CUstream) {
  if (refused_by_capture()) return result::kStreamCaptureUnsupported;
  ++fake().stream_syncs;
  return result::kSuccess;
}
inline CUresult cuStreamWaitEvent(CUstream, CUevent e, unsigned) { return e ? result::kSuccess : result::kInvalidHandle; }
inline CUresult cuEventCreate(CUevent* e, unsigned flags) {
  *e = reinterpret_cast<CUevent>(new Token{2, flags});
  ++fake().events_live;
  fake().event_flags.push_back(static_cast<int>(flags));
  return result::kSuccess;
}
inline CUresult cuEventDestroy_v2(CUevent e) {
  delete reinterpret_cast<Token*>(e);
  --fake().events_live;
  return result::kSuccess;
}
inline CUresult cuEventRecord(CUevent, CUstream) { return result::kSuccess; }
inline CUresult cuEventSynchronize(CUevent) { return result::kSuccess; }
inline CUresult cuEventQuery(CUevent) { return fake().event_query_result; }
inline CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  const bool timing = !(reinterpret_cast<Token*>(start)->flags & kEventDisableTiming) &&
                      !(reinterpret_cast<Token*>(end)->flags & kEventDisableTiming);
  if (!timing) return result::kInvalidHandle;
  *ms = 1.5f;
  return result::kSuccess;
}
// The bytes of an image: a cubin is an ELF file (it ends with its section headers), PTX is text.
inline std::string image_bytes(const void* image) {
  const auto* p = static_cast<const char*>(image);
  if (std::memcmp(p, "\x7f" "ELF", 4) != 0 || p[4] != 2) return std::string(p);
  uint64_t section_offset = 0;
  uint16_t entry_size = 0, entries = 0;
  std::memcpy(&section_offset, p + 0x28, 8);
  std::memcpy(&entry_size, p + 0x3A, 2);
  std::memcpy(&entries, p + 0x3C, 2);
  return std::string(p, section_offset + uint64_t{entry_size} * entries);
}
inline CUresult cuModuleLoadData(CUmodule* m, const void* image) {
  *m = reinterpret_cast<CUmodule>(new FakeModule{image_bytes(image)});
  ++fake().modules_live;
  return result::kSuccess;
}
inline CUresult cuModuleUnload(CUmodule m) {
  delete reinterpret_cast<FakeModule*>(m);
  --fake().modules_live;
  return result::kSuccess;
}
// A module "has" a function when its image text mentions the name.
inline CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  const std::string& image = reinterpret_cast<FakeModule*>(m)->image;
  if (image.find(name) == std::string::npos) return result::kNotFound;
  // A function lives as long as its module, as the driver's do.
  *f = reinterpret_cast<CUfunction>(&reinterpret_cast<FakeModule*>(m)->functions.emplace_back(name));
  return result::kSuccess;
}
inline CUresult cuLaunchKernel(CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream s, void**, void**) {
  const std::string name = *reinterpret_cast<std::string*>(f);
  return on_stream(s, name, [name] {
    fake().launches.push_back(name);
    return result::kSuccess;
  });
}
inline CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode) {
  if (!s || capturing(s) || active_capture()) return result::kInvalidValue;
  reinterpret_cast<Token*>(s)->capture = active_capture() = new FakeGraph;
  return result::kSuccess;
}
inline CUresult cuStreamEndCapture(CUstream s, CUgraph* graph) {
  FakeGraph* g = capturing(s);
  if (!g) return result::kInvalidValue;
  reinterpret_cast<Token*>(s)->capture = active_capture() = nullptr;
  if (g->invalidated) {  // the driver hands back no graph then
    ++fake().captures_invalidated;
    delete g;
    *graph = nullptr;
    return result::kStreamCaptureInvalidated;
  }
  ++fake().graphs_live;
  *graph = reinterpret_cast<CUgraph>(g);
  return result::kSuccess;
}
inline CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long) {
  ++fake().graph_execs_live;
  *exec = reinterpret_cast<CUgraphExec>(new FakeGraph(*reinterpret_cast<FakeGraph*>(graph)));
  return result::kSuccess;
}
inline CUresult cuGraphLaunch(CUgraphExec exec, CUstream s) {
  auto* g = reinterpret_cast<FakeGraph*>(exec);
  ++fake().graph_launches;
  return on_stream(s, "graph", [g] {
    for (const auto& work : g->work) work();
    return result::kSuccess;
  });
}
inline CUresult cuGraphExecDestroy(CUgraphExec exec) {
  delete reinterpret_cast<FakeGraph*>(exec);
  --fake().graph_execs_live;
  return result::kSuccess;
}
inline CUresult cuGraphDestroy(CUgraph graph) {
  delete reinterpret_cast<FakeGraph*>(graph);
  --fake().graphs_live;
  return result::kSuccess;
}

}  // namespace fake_impl

// The fake's symbols by name; `hidden` is reported missing (to test incomplete drivers).
inline void* fake_cuda_symbol(const char* name, const std::set<std::string>& hidden = {}) {
  static const std::map<std::string, void*> table = {
#define MAXC_FAKE_ENTRY(fn, params) {#fn, reinterpret_cast<void*>(&fake_impl::fn)},
      MAXC_CUDA_DRIVER_FUNCTIONS(MAXC_FAKE_ENTRY)
#undef MAXC_FAKE_ENTRY
  };
  if (hidden.count(name)) return nullptr;
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

// Makes the fake the process's CUDA driver (what Device::get(kCuda) uses), once per process:
// every suite of a test binary that runs the engine on the fake calls it.
inline void use_fake_as_process_driver() {
  static const bool installed = [] {
    cuda::set_process_cuda_driver(cuda::init_cuda_driver([](const char* name) { return fake_cuda_symbol(name); }, "fake"));
    return true;
  }();
  (void)installed;
}

}  // namespace maxc::testing

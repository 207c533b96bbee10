// libmax_c_emulated_cuda.so: the CUDA driver API over host memory, with kernels run on the
// host emulator (tests/gpu_emu/cuda_emulator.h) from the modules the emulated NVRTC compiles.
// One device, "max_c emulated GPU", compute capability 9.0. See README.md beside this file.
//
// Work is done when it is queued: every stream is in order with the host, so synchronizing is
// a no-op and an event is complete when recorded. A stream being captured keeps its copies,
// memsets and launches (with their parameters copied, as a kernel node does) in the graph it
// makes, and a graph launch runs them in order. As the driver in thread-local capture mode,
// a call that would wait for or allocate under work not yet run (a synchronous copy or
// memset, a synchronize, cuMemAlloc) fails on the capturing thread and invalidates its capture.
// What ran is kept in a log (emulated_cuda_log.h) that tests of the engine read. Device memory
// is host memory, so a pointer the engine wrongly reads on the host goes unnoticed here: that
// is what a real GPU checks.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "driver/cuda/cuda_api.h"
#include "emulated_gpu/emulated_cuda_log.h"
#include "emulated_gpu/emulated_launch.h"

namespace {

using namespace maxc::cuda;
using maxc::emulated_gpu::BindLaunch;
using maxc::emulated_gpu::BoundLaunch;

constexpr size_t kDeviceBytes = size_t{8} << 30;  // what the device says it has
constexpr size_t kAlignment = 256;                // cuMemAlloc's

using Op = std::function<CUresult()>;

struct Stream {
  bool capturing = false;
  bool invalidated = false;  // a call the capture forbids was made
  std::vector<Op> captured;
};

struct Graph {
  std::vector<Op> ops;
};

struct Module {
  void* handle = nullptr;
};

struct Function {
  BindLaunch bind = nullptr;
  std::string name;
};

// The driver's state, behind one lock: the engine calls it from several threads, and the
// emulator runs one launch at a time.
struct Driver {
  std::recursive_mutex mu;
  bool initialized = false;
  size_t allocated = 0;
  std::map<void*, size_t> allocations;
  Stream default_stream;
  maxc::emulated_gpu::DriverLog log;
};

Driver& driver() {
  static auto* d = new Driver;  // never destroyed: modules and memory outlive statics
  return *d;
}

thread_local std::vector<CUcontext> context_stack;
thread_local Stream* capturing_here = nullptr;  // the stream this thread captures, if any

// Whether the calling thread is capturing, which forbids a call that waits or allocates:
// the capture is then invalidated, as the driver's is.
bool refused_by_capture() {
  if (!capturing_here) return false;
  capturing_here->invalidated = true;
  return true;
}
CUctx_st* const kContext = reinterpret_cast<CUctx_st*>(uintptr_t{0xC0DE});

Stream& stream_of(CUstream s) { return s ? *reinterpret_cast<Stream*>(s) : driver().default_stream; }

// Runs `op` now, or keeps it in the graph `s` is capturing.
CUresult on_stream(CUstream s, Op op) {
  std::lock_guard lock(driver().mu);
  Stream& stream = stream_of(s);
  if (stream.capturing) {
    stream.captured.push_back(std::move(op));
    return result::kSuccess;
  }
  return op();
}

void* at(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

CUresult copy(void* dst, const void* src, size_t bytes) {
  if (bytes && (!dst || !src)) return result::kInvalidValue;
  if (bytes) std::memmove(dst, src, bytes);
  return result::kSuccess;
}

CUresult run_launch(const std::shared_ptr<BoundLaunch>& launch, const std::string& name, const unsigned grid[3],
                    const unsigned block[3]) {
  try {
    launch->run(grid, block);
    std::lock_guard lock(driver().mu);
    driver().log.launches.push_back(name);
    return result::kSuccess;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "max_c emulated GPU: kernel %s: %s\n", name.c_str(), e.what());
    return result::kLaunchFailed;
  }
}

// A module image's shared object, written where dlopen can read it.
CUresult load_module(const void* image, Module* m) {
  const auto* bytes = static_cast<const char*>(image);
  if (!image || std::memcmp(bytes, maxc::emulated_gpu::kImageMagic, sizeof maxc::emulated_gpu::kImageMagic) != 0)
    return result::kInvalidImage;
  uint64_t size = 0;
  std::memcpy(&size, bytes + sizeof maxc::emulated_gpu::kImageMagic, sizeof size);
  char path[] = "/tmp/max_c-emulated-module-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return result::kUnknown;
  const char* object = bytes + sizeof maxc::emulated_gpu::kImageMagic + sizeof size;
  const bool written = ::write(fd, object, size) == static_cast<ssize_t>(size);
  ::close(fd);
  m->handle = written ? ::dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  ::unlink(path);
  if (!m->handle) {
    std::fprintf(stderr, "max_c emulated GPU: cannot load a module: %s\n", written ? ::dlerror() : "write failed");
    return result::kInvalidImage;
  }
  return result::kSuccess;
}

const char* error_name(CUresult e) {
  switch (e) {
    case result::kSuccess: return "CUDA_SUCCESS";
    case result::kInvalidValue: return "CUDA_ERROR_INVALID_VALUE";
    case result::kOutOfMemory: return "CUDA_ERROR_OUT_OF_MEMORY";
    case result::kNotInitialized: return "CUDA_ERROR_NOT_INITIALIZED";
    case result::kInvalidDevice: return "CUDA_ERROR_INVALID_DEVICE";
    case result::kInvalidImage: return "CUDA_ERROR_INVALID_IMAGE";
    case result::kInvalidContext: return "CUDA_ERROR_INVALID_CONTEXT";
    case result::kInvalidHandle: return "CUDA_ERROR_INVALID_HANDLE";
    case result::kNotFound: return "CUDA_ERROR_NOT_FOUND";
    case result::kLaunchFailed: return "CUDA_ERROR_LAUNCH_FAILED";
    case result::kNotSupported: return "CUDA_ERROR_NOT_SUPPORTED";
    case result::kStreamCaptureUnsupported: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case result::kStreamCaptureInvalidated: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    default: return nullptr;
  }
}

}  // namespace

#define MAXC_EXPORT extern "C" __attribute__((visibility("default")))

MAXC_EXPORT CUresult cuGetErrorName(CUresult e, const char** name) {
  *name = error_name(e);
  return *name ? result::kSuccess : result::kInvalidValue;
}

MAXC_EXPORT CUresult cuGetErrorString(CUresult e, const char** text) {
  *text = e == result::kLaunchFailed ? "the emulated kernel failed (its error is on stderr)" : error_name(e);
  return *text ? result::kSuccess : result::kInvalidValue;
}

MAXC_EXPORT CUresult cuInit(unsigned flags) {
  if (flags != 0) return result::kInvalidValue;
  std::lock_guard lock(driver().mu);
  driver().initialized = true;
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuDriverGetVersion(int* version) {
  *version = 12080;
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuDeviceGetCount(int* count) {
  *count = 1;
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal != 0) return result::kInvalidDevice;
  *device = 0;
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  if (device != 0 || length <= 0) return result::kInvalidValue;
  std::snprintf(name, static_cast<size_t>(length), "%s", "max_c emulated GPU");
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute a, CUdevice device) {
  if (device != 0) return result::kInvalidDevice;
  switch (a) {
    case attribute::kMaxThreadsPerBlock: *value = 1024; break;
    case attribute::kMaxSharedMemoryPerBlock: *value = 48 * 1024; break;
    case attribute::kWarpSize: *value = 32; break;
    case attribute::kMultiprocessorCount: *value = 4; break;
    case attribute::kIntegrated: *value = 0; break;
    case attribute::kCanMapHostMemory: *value = 1; break;
    case attribute::kUnifiedAddressing: *value = 1; break;
    case attribute::kComputeCapabilityMajor: *value = 9; break;
    case attribute::kComputeCapabilityMinor: *value = 0; break;
    default: return result::kInvalidValue;
  }
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice) {
  *bytes = kDeviceBytes;
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  if (device != 0) return result::kInvalidDevice;
  *context = kContext;
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return result::kSuccess; }

MAXC_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext context) {
  if (context != kContext) return result::kInvalidContext;
  context_stack.push_back(context);
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* context) {
  if (context_stack.empty()) return result::kInvalidContext;
  if (context) *context = context_stack.back();
  context_stack.pop_back();
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuCtxSynchronize() {
  return refused_by_capture() ? result::kStreamCaptureUnsupported : result::kSuccess;
}

MAXC_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  std::lock_guard lock(driver().mu);
  *total_bytes = kDeviceBytes;
  *free_bytes = kDeviceBytes - driver().allocated;
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* ptr, size_t bytes) {
  std::lock_guard lock(driver().mu);
  if (refused_by_capture()) return result::kStreamCaptureUnsupported;
  if (bytes == 0) return result::kInvalidValue;
  if (bytes > kDeviceBytes - driver().allocated) return result::kOutOfMemory;
  void* p = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (!p) return result::kOutOfMemory;
  driver().allocations[p] = bytes;
  driver().allocated += bytes;
  *ptr = reinterpret_cast<CUdeviceptr>(p);
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr) {
  std::lock_guard lock(driver().mu);
  auto it = driver().allocations.find(at(ptr));
  if (it == driver().allocations.end()) return result::kInvalidValue;
  driver().allocated -= it->second;
  driver().allocations.erase(it);
  std::free(at(ptr));
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuMemHostAlloc(void** ptr, size_t bytes, unsigned) {
  *ptr = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  return *ptr ? result::kSuccess : result::kOutOfMemory;
}

MAXC_EXPORT CUresult cuMemFreeHost(void* ptr) {
  std::free(ptr);
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) {
  if (refused_by_capture()) return result::kStreamCaptureUnsupported;
  return on_stream(nullptr, [=] { return copy(at(dst), src, bytes); });
}

MAXC_EXPORT CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) {
  if (refused_by_capture()) return result::kStreamCaptureUnsupported;
  return on_stream(nullptr, [=] { return copy(dst, at(src), bytes); });
}

MAXC_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  if (refused_by_capture()) return result::kStreamCaptureUnsupported;
  return on_stream(nullptr, [=] { return copy(at(dst), at(src), bytes); });
}

MAXC_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream s) {
  return on_stream(s, [=] { return copy(at(dst), src, bytes); });
}

MAXC_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream s) {
  return on_stream(s, [=] { return copy(dst, at(src), bytes); });
}

MAXC_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  return on_stream(s, [=] { return copy(at(dst), at(src), bytes); });
}

MAXC_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext, CUdeviceptr src, CUcontext, size_t bytes,
                                       CUstream s) {
  return on_stream(s, [=] { return copy(at(dst), at(src), bytes); });
}

MAXC_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count) {
  if (refused_by_capture()) return result::kStreamCaptureUnsupported;
  return on_stream(nullptr, [=] {
    std::memset(at(dst), value, count);
    return result::kSuccess;
  });
}

MAXC_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream s) {
  return on_stream(s, [=] {
    std::memset(at(dst), value, count);
    return result::kSuccess;
  });
}

MAXC_EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned) {
  *stream = reinterpret_cast<CUstream>(new Stream);
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
  delete reinterpret_cast<Stream*>(stream);
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuStreamSynchronize(CUstream) {
  return refused_by_capture() ? result::kStreamCaptureUnsupported : result::kSuccess;
}
MAXC_EXPORT CUresult cuStreamWaitEvent(CUstream, CUevent e, unsigned) {
  return e ? result::kSuccess : result::kInvalidHandle;
}

MAXC_EXPORT CUresult cuEventCreate(CUevent* event, unsigned) {
  *event = reinterpret_cast<CUevent>(new char);
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuEventDestroy_v2(CUevent event) {
  delete reinterpret_cast<char*>(event);
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuEventRecord(CUevent e, CUstream) { return e ? result::kSuccess : result::kInvalidHandle; }
MAXC_EXPORT CUresult cuEventSynchronize(CUevent) { return result::kSuccess; }
MAXC_EXPORT CUresult cuEventQuery(CUevent) { return result::kSuccess; }

MAXC_EXPORT CUresult cuEventElapsedTime(float* milliseconds, CUevent, CUevent) {
  *milliseconds = 0.0f;  // work is done when queued: no time passes between two events
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  auto m = std::make_unique<Module>();
  if (const CUresult r = load_module(image, m.get()); r != result::kSuccess) return r;
  *module = reinterpret_cast<CUmodule>(m.release());
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuModuleUnload(CUmodule module) {
  // The shared object stays loaded: a graph captured from it may still hold its launches.
  delete reinterpret_cast<Module*>(module);
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  auto* m = reinterpret_cast<Module*>(module);
  const std::string symbol = std::string(maxc::emulated_gpu::kEntryPrefix) + name;
  void* entry = m ? ::dlsym(m->handle, symbol.c_str()) : nullptr;
  if (!entry) return result::kNotFound;
  *function = reinterpret_cast<CUfunction>(new Function{reinterpret_cast<BindLaunch>(entry), name});
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned shared_bytes, CUstream s, void** params, void** extra) {
  if (!f || extra || shared_bytes) return result::kInvalidValue;
  const auto* function = reinterpret_cast<const Function*>(f);
  std::shared_ptr<BoundLaunch> launch(function->bind(params));
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return on_stream(s, [launch, name = function->name, g = std::vector<unsigned>(grid, grid + 3),
                       b = std::vector<unsigned>(block, block + 3)] { return run_launch(launch, name, g.data(), b.data()); });
}

MAXC_EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode) {
  std::lock_guard lock(driver().mu);
  Stream& stream = stream_of(s);
  if (!s || stream.capturing || capturing_here) return result::kInvalidValue;
  stream.capturing = true;
  stream.invalidated = false;
  stream.captured.clear();
  capturing_here = &stream;
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph* graph) {
  std::lock_guard lock(driver().mu);
  Stream& stream = stream_of(s);
  if (!stream.capturing) return result::kInvalidValue;
  stream.capturing = false;
  if (capturing_here == &stream) capturing_here = nullptr;
  std::vector<Op> ops = std::move(stream.captured);
  stream.captured.clear();
  if (stream.invalidated) {  // the driver hands back no graph then
    ++driver().log.captures_invalidated;
    *graph = nullptr;
    return result::kStreamCaptureInvalidated;
  }
  ++driver().log.graphs_live;
  *graph = reinterpret_cast<CUgraph>(new Graph{std::move(ops)});
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long) {
  *exec = reinterpret_cast<CUgraphExec>(new Graph(*reinterpret_cast<Graph*>(graph)));
  std::lock_guard lock(driver().mu);
  ++driver().log.graph_execs_live;
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream s) {
  const auto* graph = reinterpret_cast<const Graph*>(exec);
  {
    std::lock_guard lock(driver().mu);
    ++driver().log.graph_launches;
  }
  return on_stream(s, [graph] {
    for (const Op& op : graph->ops)
      if (const CUresult r = op(); r != result::kSuccess) return r;
    return result::kSuccess;
  });
}

MAXC_EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  delete reinterpret_cast<Graph*>(exec);
  std::lock_guard lock(driver().mu);
  --driver().log.graph_execs_live;
  return result::kSuccess;
}

MAXC_EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  delete reinterpret_cast<Graph*>(graph);
  std::lock_guard lock(driver().mu);
  --driver().log.graphs_live;
  return result::kSuccess;
}

MAXC_EXPORT maxc::emulated_gpu::DriverLog* maxc_emulated_cuda_log() { return &driver().log; }

MAXC_EXPORT bool maxc_emulated_cuda_owns(const void* p) {
  std::lock_guard lock(driver().mu);
  auto it = driver().allocations.upper_bound(const_cast<void*>(p));
  if (it == driver().allocations.begin()) return false;
  --it;
  const auto* base = static_cast<const char*>(it->first);
  return p >= base && static_cast<const char*>(p) < base + it->second;
}

// What the emulated driver did, for the tests that check how the engine uses a GPU
// (tests/gpu_engine): the kernels it ran and the graphs it holds. It is the driver's own
// record, not a second driver: a test reads it through the functions below, looked up by name
// in the driver library the process loaded (MAX_C_CUDA_LIBRARY).
#pragma once

#include <string>
#include <vector>

namespace maxc::emulated_gpu {

struct DriverLog {
  // The function name of each launch that ran, in order (a graph's, each time it runs). The
  // emulated NVRTC's lowered names spell the name expression (emulated_nvrtc.cc), so a
  // catalog kernel's template and a generated kernel's name both show here.
  std::vector<std::string> launches;
  int graphs_live = 0, graph_execs_live = 0, graph_launches = 0;
  int captures_invalidated = 0;  // captures ended by a call capture forbids
};

// DriverLog* (): the log, which the driver never frees.
constexpr char kLogSymbol[] = "maxc_emulated_cuda_log";
using LogFn = DriverLog* (*)();
// bool (const void* p): whether p points into a live cuMemAlloc block.
constexpr char kOwnsSymbol[] = "maxc_emulated_cuda_owns";
using OwnsFn = bool (*)(const void*);

}  // namespace maxc::emulated_gpu

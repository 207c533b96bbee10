// What a module of the emulated GPU hands the emulated driver (tests/emulated_gpu/README.md):
// for each kernel it was asked to compile, an extern "C" function that takes a launch's
// parameter array (params[i] points at parameter i, as cuLaunchKernel receives it), copies the
// values, and returns them bound to the kernel. The driver runs a bound launch at once, or
// keeps it in a graph being captured and runs it at each replay, as CUDA does with a kernel
// node's copied parameters.
#pragma once

namespace maxc::emulated_gpu {

// A kernel's entry in a module: this prefix, then the name the driver is asked for (a lowered
// name, or an extern "C" kernel's own).
constexpr char kEntryPrefix[] = "maxc_emulated_entry_";

// A module image: these 8 bytes, the shared object's size as a uint64_t, then the object.
constexpr char kImageMagic[8] = {'m', 'a', 'x', 'c', 'e', 'm', 'u', '1'};

class BoundLaunch {
 public:
  virtual ~BoundLaunch() = default;
  // Runs the kernel over the grid on the host emulator; throws what the emulator throws
  // (a deadlock, a launch CUDA would refuse) with the block and threads it concerns.
  virtual void run(const unsigned grid[3], const unsigned block[3]) const = 0;
};

// The signature of every kernel entry of a module.
using BindLaunch = BoundLaunch* (*)(void** params);

}  // namespace maxc::emulated_gpu

// What every module the emulated NVRTC compiles begins with: the CUDA emulator and the launch
// binding. The build precompiles it (tests/CMakeLists.txt), which halves a module's compile.
#pragma once

#include "gpu_emu/cuda_emulator.h"
#include "emulated_gpu/emulated_module.h"

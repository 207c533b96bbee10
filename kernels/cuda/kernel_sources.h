// The kernel sources of this folder as the library carries them: their text is embedded at
// build time (cmake/embed_cuda_kernels.cmake), so a GPU compile needs no file next to the
// library. A source comes out ready for a KernelCompiler, with every header of common/
// under both names it is included by ("common/cast.cuh" from a .cu file, "cast.cuh" from a
// sibling header).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "driver/cuda/kernel_compiler.h"

namespace maxc::gpu {

struct EmbeddedSource {
  const char* path;  // relative to kernels/cuda: "softmax.cu", "common/cast.cuh"
  const char* text;
};

// Defined in the generated file.
extern const EmbeddedSource kEmbeddedSources[];
extern const size_t kEmbeddedSourceCount;

std::span<const EmbeddedSource> embedded_sources();

// The paths of the compilable sources (*.cu), sorted.
std::vector<std::string> kernel_source_paths();

// Source `path` with all headers; NOT_FOUND naming the known sources when there is none.
cuda::KernelSource kernel_source(std::string_view path);

// Any source text (a generated kernel) with all headers, under `name`.
cuda::KernelSource kernel_source_from_text(std::string name, std::string text);

}  // namespace maxc::gpu

// Compiling kernel sources for a GPU architecture, as an interface: NVRTC implements it
// (nvrtc_compiler.h), so does hipRTC (driver/hip/hiprtc_compiler.h), and the kernel cache is
// tested against a fake one.
//
// Kernels are templates; a request names the instances it needs as C++ name expressions
// ("maxc::gpu::softmax_rows<float, false>"), the compiler instantiates exactly those and
// reports each one's lowered (mangled) name, which is what the driver looks functions up by.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace maxc::cuda {

struct KernelSource {
  std::string name;  // "softmax.cu": for messages and the compiler's diagnostics
  std::string text;
  // Every header the source may include, by the exact name it is included as.
  std::vector<std::pair<std::string, std::string>> headers;
};

struct CompileRequest {
  KernelSource source;
  std::string architecture;                   // "sm_90"
  std::vector<std::string> options;           // extra compiler options ("-DMAXC_TILE=64")
  std::vector<std::string> name_expressions;  // the template instances to compile
};

struct CompiledKernels {
  // kCodeObject: an AMD GPU code object (ELF), from hipRTC.
  enum class Format : uint8_t { kCubin = 1, kPtx = 2, kCodeObject = 3 };
  Format format = Format::kCubin;
  std::string image;  // what cuModuleLoadData (hipModuleLoadData) takes
  std::vector<std::pair<std::string, std::string>> lowered_names;  // name expression -> symbol
  std::string log;    // the compiler's warnings, if any

  // The symbol of a requested name expression; NOT_FOUND when it was not requested.
  const std::string& lowered(const std::string& name_expression) const;
};

class KernelCompiler {
 public:
  virtual ~KernelCompiler() = default;
  // The compiler and its version, e.g. "nvrtc 12.9": part of every cache key, so a new
  // compiler never reuses an old one's output.
  virtual std::string identity() const = 0;
  // Throws INTERNAL with the compiler's log when the source does not compile.
  virtual CompiledKernels compile(const CompileRequest& request) const = 0;
};

}  // namespace maxc::cuda

#include "driver/cuda/nvrtc_compiler.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "base/str_cat.h"

namespace maxc::cuda {
namespace {

std::string program_image(const NvrtcApi& api, rtcProgram program, CompiledKernels::Format format,
                          const std::string& source) {
  const bool cubin = format == CompiledKernels::Format::kCubin;
  size_t size = 0;
  check_rtc(api.rtc, cubin ? api.nvrtcGetCUBINSize(program, &size) : api.nvrtcGetPTXSize(program, &size),
            str_cat("reading the size of the compiled ", source));
  std::string image(size, '\0');
  check_rtc(api.rtc, cubin ? api.nvrtcGetCUBIN(program, image.data()) : api.nvrtcGetPTX(program, image.data()),
            str_cat("reading the compiled ", source));
  // PTX comes with its terminating NUL counted; std::string keeps one of its own.
  if (!cubin && !image.empty() && image.back() == '\0') image.pop_back();
  return image;
}

}  // namespace

NvrtcTarget choose_nvrtc_target(const std::string& architecture, const std::vector<int>& supported,
                                const std::string& nvrtc_version) {
  size_t digits = 3;
  while (digits < architecture.size() && std::isdigit(static_cast<unsigned char>(architecture[digits]))) ++digits;
  if (architecture.rfind("sm_", 0) != 0 || digits == 3 || digits + 1 < architecture.size())
    fail(Code::kInvalidArgument, "GPU architecture '", architecture, "' is not of the form sm_XY");
  const int sm = std::stoi(architecture.substr(3, digits - 3));
  if (std::find(supported.begin(), supported.end(), sm) != supported.end())
    return {str_cat("--gpu-architecture=", architecture), CompiledKernels::Format::kCubin};
  int below = 0;
  for (int s : supported)
    if (s < sm) below = std::max(below, s);
  if (below == 0)
    fail(Code::kUnimplemented, "NVRTC ", nvrtc_version, " cannot compile for ", architecture,
         ": its oldest architecture is sm_", supported.empty() ? 0 : *std::min_element(supported.begin(), supported.end()));
  return {str_cat("--gpu-architecture=compute_", below), CompiledKernels::Format::kPtx};
}

std::vector<std::string> NvrtcCompiler::base_options() {
  return {"-std=c++17", "--fmad=true", "--ftz=false", "--prec-div=true", "--prec-sqrt=true"};
}

std::string NvrtcCompiler::identity() const {
  std::string id = lib_.available ? str_cat("nvrtc ", lib_.version()) : std::string("nvrtc (unavailable)");
  for (const std::string& o : base_options()) id += " " + o;
  return id;
}

KernelCache& nvrtc_kernel_cache() {
  static NvrtcCompiler* compiler = new NvrtcCompiler(nvrtc());
  static KernelCache* cache = new KernelCache(*compiler, KernelCache::default_directory());
  return *cache;
}

CompiledKernels NvrtcCompiler::compile(const CompileRequest& request) const {
  if (!lib_.available) fail(Code::kUnavailable, "cannot compile ", request.source.name, ": ", lib_.unavailable_reason);
  const NvrtcTarget target = choose_nvrtc_target(request.architecture, lib_.architectures, lib_.version());
  std::vector<std::string> options = base_options();
  options.push_back(target.option);
  options.insert(options.end(), request.options.begin(), request.options.end());
  RtcProgram program(lib_.api.rtc, request.source);
  CompiledKernels out;
  program.compile(request, options, str_cat("NVRTC ", lib_.version()), &out);
  out.format = target.format;
  out.image = program_image(lib_.api, program.get(), target.format, request.source.name);
  return out;
}

}  // namespace maxc::cuda

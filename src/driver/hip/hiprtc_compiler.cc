#include "driver/hip/hiprtc_compiler.h"

#include <cctype>

#include "base/error.h"
#include "base/str_cat.h"

namespace maxc::hip {
namespace {

using cuda::CompiledKernels;
using cuda::CompileRequest;

bool is_target_feature(const std::string& f) {
  if (f.size() < 2 || (f.back() != '+' && f.back() != '-')) return false;
  for (size_t i = 0; i + 1 < f.size(); ++i)
    if (!std::islower(static_cast<unsigned char>(f[i]))) return false;
  return true;
}

}  // namespace

std::string hiprtc_target_option(const std::string& architecture) {
  const size_t colon = architecture.find(':');
  const std::string processor = architecture.substr(0, colon);
  bool ok = processor.size() > 3 && processor.rfind("gfx", 0) == 0;
  for (size_t i = 3; ok && i < processor.size(); ++i) ok = std::isxdigit(static_cast<unsigned char>(processor[i]));
  for (size_t at = colon; ok && at != std::string::npos;) {
    const size_t next = architecture.find(':', at + 1);
    ok = is_target_feature(architecture.substr(at + 1, next == std::string::npos ? next : next - at - 1));
    at = next;
  }
  if (!ok)
    fail(Code::kInvalidArgument, "GPU architecture '", architecture,
         "' is not an AMD GPU target of the form gfxNNN[:feature+|-]...");
  return "--offload-arch=" + architecture;
}

std::vector<std::string> HiprtcCompiler::base_options() {
  return {"-std=c++17", "-O3", "-fno-gpu-flush-denormals-to-zero"};
}

std::string HiprtcCompiler::identity() const {
  std::string id = lib_.available ? str_cat("hiprtc ", lib_.version()) : std::string("hiprtc (unavailable)");
  for (const std::string& o : base_options()) id += " " + o;
  return id;
}

CompiledKernels HiprtcCompiler::compile(const CompileRequest& request) const {
  if (!lib_.available) fail(Code::kUnavailable, "cannot compile ", request.source.name, ": ", lib_.unavailable_reason);
  std::vector<std::string> options = base_options();
  options.push_back(hiprtc_target_option(request.architecture));
  options.insert(options.end(), request.options.begin(), request.options.end());
  cuda::RtcProgram program(lib_.api.rtc, request.source);
  CompiledKernels out;
  program.compile(request, options, str_cat("hipRTC ", lib_.version()), &out);
  size_t size = 0;
  cuda::check_rtc(lib_.api.rtc, lib_.api.hiprtcGetCodeSize(program.get(), &size),
                  str_cat("reading the size of the compiled ", request.source.name));
  out.image.assign(size, '\0');
  cuda::check_rtc(lib_.api.rtc, lib_.api.hiprtcGetCode(program.get(), out.image.data()),
                  str_cat("reading the compiled ", request.source.name));
  out.format = CompiledKernels::Format::kCodeObject;
  return out;
}

cuda::KernelCache& hiprtc_kernel_cache() {
  static auto* compiler = new HiprtcCompiler(hiprtc());
  static auto* cache = new cuda::KernelCache(*compiler, cuda::KernelCache::default_directory());
  return *cache;
}

}  // namespace maxc::hip

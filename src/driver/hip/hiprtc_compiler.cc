#include "driver/hip/hiprtc_compiler.h"

#include <cctype>

#include "base/error.h"
#include "base/str_cat.h"

namespace maxc::hip {
namespace {

using cuda::CompiledKernels;
using cuda::CompileRequest;
using cuda::KernelSource;

// Destroys the program however the compile ends.
class Program {
 public:
  Program(const HiprtcApi& api, const KernelSource& source) : api_(api) {
    std::vector<const char*> texts, names;
    for (const auto& [name, text] : source.headers) {
      names.push_back(name.c_str());
      texts.push_back(text.c_str());
    }
    check_hiprtc(api_,
                 api_.hiprtcCreateProgram(&program_, source.text.c_str(), source.name.c_str(),
                                          static_cast<int>(texts.size()), texts.data(), names.data()),
                 str_cat("hiprtcCreateProgram of ", source.name));
  }
  ~Program() {
    if (program_) api_.hiprtcDestroyProgram(&program_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  hiprtcProgram get() const { return program_; }

 private:
  const HiprtcApi& api_;
  hiprtcProgram program_ = nullptr;
};

std::string program_log(const HiprtcApi& api, hiprtcProgram program) {
  size_t size = 0;
  if (api.hiprtcGetProgramLogSize(program, &size) != hiprtc_result::kSuccess || size <= 1) return "";
  std::string log(size, '\0');
  if (api.hiprtcGetProgramLog(program, log.data()) != hiprtc_result::kSuccess) return "";
  log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
  while (!log.empty() && std::isspace(static_cast<unsigned char>(log.back()))) log.pop_back();
  return log;
}

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
  const HiprtcApi& api = lib_.api;
  std::vector<std::string> options = base_options();
  options.push_back(hiprtc_target_option(request.architecture));
  options.insert(options.end(), request.options.begin(), request.options.end());
  Program program(api, request.source);
  for (const std::string& e : request.name_expressions)
    check_hiprtc(api, api.hiprtcAddNameExpression(program.get(), e.c_str()),
                 str_cat("hiprtcAddNameExpression '", e, "' in ", request.source.name));
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const hiprtcResult r = api.hiprtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  CompiledKernels out;
  out.log = program_log(api, program.get());
  if (r == hiprtc_result::kCompilation)
    fail(Code::kInternal, "hipRTC ", lib_.version(), " could not compile ", request.source.name, " for ",
         request.architecture, ":\n", out.log);
  check_hiprtc(api, r, str_cat("compiling ", request.source.name, " for ", request.architecture));
  for (const std::string& e : request.name_expressions) {
    const char* lowered = nullptr;
    check_hiprtc(api, api.hiprtcGetLoweredName(program.get(), e.c_str(), &lowered),
                 str_cat("hiprtcGetLoweredName '", e, "' in ", request.source.name));
    out.lowered_names.emplace_back(e, lowered);
  }
  size_t size = 0;
  check_hiprtc(api, api.hiprtcGetCodeSize(program.get(), &size), str_cat("reading the size of the compiled ", request.source.name));
  out.image.assign(size, '\0');
  check_hiprtc(api, api.hiprtcGetCode(program.get(), out.image.data()), str_cat("reading the compiled ", request.source.name));
  out.format = CompiledKernels::Format::kCodeObject;
  return out;
}

}  // namespace maxc::hip

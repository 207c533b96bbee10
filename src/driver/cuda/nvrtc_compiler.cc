#include "driver/cuda/nvrtc_compiler.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "base/str_cat.h"

namespace maxc::cuda {
namespace {

// Destroys the program however the compile ends.
class Program {
 public:
  Program(const NvrtcApi& api, const KernelSource& source) : api_(api) {
    std::vector<const char*> texts, names;
    for (const auto& [name, text] : source.headers) {
      names.push_back(name.c_str());
      texts.push_back(text.c_str());
    }
    check_nvrtc(api_,
                api_.nvrtcCreateProgram(&program_, source.text.c_str(), source.name.c_str(),
                                        static_cast<int>(texts.size()), texts.data(), names.data()),
                str_cat("nvrtcCreateProgram of ", source.name));
  }
  ~Program() {
    if (program_) api_.nvrtcDestroyProgram(&program_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return program_; }

 private:
  const NvrtcApi& api_;
  nvrtcProgram program_ = nullptr;
};

std::string program_log(const NvrtcApi& api, nvrtcProgram program) {
  size_t size = 0;
  if (api.nvrtcGetProgramLogSize(program, &size) != nvrtc_result::kSuccess || size <= 1) return "";
  std::string log(size, '\0');
  if (api.nvrtcGetProgramLog(program, log.data()) != nvrtc_result::kSuccess) return "";
  log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
  while (!log.empty() && std::isspace(static_cast<unsigned char>(log.back()))) log.pop_back();
  return log;
}

std::string program_image(const NvrtcApi& api, nvrtcProgram program, CompiledKernels::Format format,
                          const std::string& source) {
  const bool cubin = format == CompiledKernels::Format::kCubin;
  size_t size = 0;
  check_nvrtc(api, cubin ? api.nvrtcGetCUBINSize(program, &size) : api.nvrtcGetPTXSize(program, &size),
              str_cat("reading the size of the compiled ", source));
  std::string image(size, '\0');
  check_nvrtc(api, cubin ? api.nvrtcGetCUBIN(program, image.data()) : api.nvrtcGetPTX(program, image.data()),
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
  const NvrtcApi& api = lib_.api;
  const NvrtcTarget target = choose_nvrtc_target(request.architecture, lib_.architectures, lib_.version());
  Program program(api, request.source);
  for (const std::string& e : request.name_expressions)
    check_nvrtc(api, api.nvrtcAddNameExpression(program.get(), e.c_str()),
                str_cat("nvrtcAddNameExpression '", e, "' in ", request.source.name));
  std::vector<std::string> options = base_options();
  options.push_back(target.option);
  options.insert(options.end(), request.options.begin(), request.options.end());
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const nvrtcResult r = api.nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  CompiledKernels out;
  out.log = program_log(api, program.get());
  if (r == nvrtc_result::kCompilation)
    fail(Code::kInternal, "NVRTC ", lib_.version(), " could not compile ", request.source.name, " for ",
         request.architecture, ":\n", out.log);
  check_nvrtc(api, r, str_cat("compiling ", request.source.name, " for ", request.architecture));
  for (const std::string& e : request.name_expressions) {
    const char* lowered = nullptr;
    check_nvrtc(api, api.nvrtcGetLoweredName(program.get(), e.c_str(), &lowered),
                str_cat("nvrtcGetLoweredName '", e, "' in ", request.source.name));
    out.lowered_names.emplace_back(e, lowered);
  }
  out.format = target.format;
  out.image = program_image(api, program.get(), target.format, request.source.name);
  return out;
}

}  // namespace maxc::cuda

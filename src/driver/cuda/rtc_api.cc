#include "driver/cuda/rtc_api.h"

#include <cctype>

#include "base/error.h"
#include "base/str_cat.h"

namespace maxc::cuda {

std::string bind_rtc_api(const SymbolLookup& lookup, const std::string& prefix, RtcApi& api) {
  api.prefix = prefix;
#define MAXC_RTC_BIND(ret, name, params)                                                 \
  api.name = reinterpret_cast<decltype(api.name)>(lookup((prefix + #name).c_str()));    \
  if (!api.name) return prefix + #name;
  MAXC_RTC_FUNCTIONS(MAXC_RTC_BIND)
#undef MAXC_RTC_BIND
  return "";
}

void check_rtc(const RtcApi& api, rtcResult r, const std::string& what) {
  if (r == rtc_result::kSuccess) return;
  const char* text = api.GetErrorString ? api.GetErrorString(r) : nullptr;
  const Code code = r == rtc_result::kOutOfMemory ? Code::kResourceExhausted : Code::kInternal;
  fail(code, what, " failed: ", text ? std::string(text) : str_cat(api.prefix, " error ", r));
}

RtcProgram::RtcProgram(const RtcApi& api, const KernelSource& source) : api_(api) {
  std::vector<const char*> texts, names;
  for (const auto& [name, text] : source.headers) {
    names.push_back(name.c_str());
    texts.push_back(text.c_str());
  }
  check_rtc(api_,
            api_.CreateProgram(&program_, source.text.c_str(), source.name.c_str(), static_cast<int>(texts.size()),
                               texts.data(), names.data()),
            str_cat(api_.prefix, "CreateProgram of ", source.name));
}

RtcProgram::~RtcProgram() {
  if (program_) api_.DestroyProgram(&program_);
}

std::string RtcProgram::log() const {
  size_t size = 0;
  if (api_.GetProgramLogSize(program_, &size) != rtc_result::kSuccess || size <= 1) return "";
  std::string log(size, '\0');
  if (api_.GetProgramLog(program_, log.data()) != rtc_result::kSuccess) return "";
  log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
  while (!log.empty() && std::isspace(static_cast<unsigned char>(log.back()))) log.pop_back();
  return log;
}

void RtcProgram::compile(const CompileRequest& request, const std::vector<std::string>& options,
                         const std::string& compiler, CompiledKernels* out) {
  const std::string& source = request.source.name;
  for (const std::string& e : request.name_expressions)
    check_rtc(api_, api_.AddNameExpression(program_, e.c_str()),
              str_cat(api_.prefix, "AddNameExpression '", e, "' in ", source));
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const rtcResult r = api_.CompileProgram(program_, static_cast<int>(argv.size()), argv.data());
  out->log = log();
  if (r == rtc_result::kCompilation)
    fail(Code::kInternal, compiler, " could not compile ", source, " for ", request.architecture, ":\n", out->log);
  check_rtc(api_, r, str_cat("compiling ", source, " for ", request.architecture));
  for (const std::string& e : request.name_expressions) {
    const char* lowered = nullptr;
    check_rtc(api_, api_.GetLoweredName(program_, e.c_str(), &lowered),
              str_cat(api_.prefix, "GetLoweredName '", e, "' in ", source));
    out->lowered_names.emplace_back(e, lowered);
  }
}

}  // namespace maxc::cuda

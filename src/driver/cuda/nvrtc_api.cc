#include "driver/cuda/nvrtc_api.h"

#include <cstdlib>

#include "base/log.h"
#include "base/str_cat.h"

namespace maxc::cuda {
namespace {

// Version and target list; a library that cannot say them is not one we can use.
bool describe(NvrtcLibrary& lib, std::string* why_not) {
  if (lib.api.rtc.Version(&lib.major, &lib.minor) != rtc_result::kSuccess) {
    *why_not = "nvrtcVersion failed";
    return false;
  }
  int count = 0;
  if (lib.api.nvrtcGetNumSupportedArchs(&count) != rtc_result::kSuccess || count <= 0) {
    *why_not = "nvrtcGetNumSupportedArchs failed";
    return false;
  }
  lib.architectures.resize(static_cast<size_t>(count));
  if (lib.api.nvrtcGetSupportedArchs(lib.architectures.data()) != rtc_result::kSuccess) {
    *why_not = "nvrtcGetSupportedArchs failed";
    return false;
  }
  return true;
}

// NVRTC opens its builtins library (libnvrtc-builtins.so.M.m) by name on its first compile
// and counts on its own RUNPATH ($ORIGIN) to find it next to itself. That fails when dlopen
// is intercepted (AddressSanitizer's interceptor makes the lookup its own) or when libnvrtc
// came by path from a directory the loader does not search. Opened first, from libnvrtc's
// own directory, the builtins are found by NVRTC's dlopen as an already-loaded soname.
void preload_builtins(NvrtcLibrary& lib) {
  const std::string file = DynamicLibrary::file_of(reinterpret_cast<const void*>(lib.api.rtc.Version));
  const size_t slash = file.rfind('/');
  if (slash == std::string::npos) return;
  const std::string builtins = str_cat(file.substr(0, slash + 1), "libnvrtc-builtins.so.", lib.version());
  std::string why;
  lib.builtins = DynamicLibrary::open(builtins, &why);
  if (!lib.builtins) MAXC_LOG(kDebug, "NVRTC builtins not preloaded: ", why);
}

std::unique_ptr<NvrtcLibrary> try_open(const std::string& name, std::string* why_not) {
  auto lib = std::make_unique<NvrtcLibrary>();
  lib->library = DynamicLibrary::open(name, why_not);
  if (!lib->library) return nullptr;
  const DynamicLibrary* dl = lib->library.get();
  const std::string missing = bind_nvrtc_api([dl](const char* s) { return dl->symbol(s); }, lib->api);
  if (!missing.empty()) {
    *why_not = str_cat(name, " lacks ", missing);
    return nullptr;
  }
  if (!describe(*lib, why_not)) return nullptr;
  preload_builtins(*lib);
  lib->path = name;
  lib->available = true;
  return lib;
}

}  // namespace

std::string bind_nvrtc_api(const SymbolLookup& lookup, NvrtcApi& api) {
  if (std::string missing = bind_rtc_api(lookup, "nvrtc", api.rtc); !missing.empty()) return missing;
#define MAXC_NVRTC_BIND(name, params)                             \
  api.name = reinterpret_cast<decltype(api.name)>(lookup(#name)); \
  if (!api.name) return #name;
  MAXC_NVRTC_FUNCTIONS(MAXC_NVRTC_BIND)
#undef MAXC_NVRTC_BIND
  return "";
}

std::string NvrtcLibrary::version() const { return str_cat(major, ".", minor); }

std::vector<std::string> nvrtc_library_candidates() {
  const char* env = std::getenv("MAX_C_NVRTC_LIBRARY");
  if (env && *env) return {env};
  return {"libnvrtc.so.12", "libnvrtc.so.13", "libnvrtc.so"};
}

std::unique_ptr<NvrtcLibrary> load_nvrtc(const std::vector<std::string>& candidates) {
  return open_first<NvrtcLibrary>(candidates, try_open,
                                  "NVRTC not found (set MAX_C_NVRTC_LIBRARY to libnvrtc.so's path): ");
}

const NvrtcLibrary& nvrtc() {
  static const NvrtcLibrary* lib = [] {
    NvrtcLibrary* l = load_nvrtc(nvrtc_library_candidates()).release();
    if (l->available)
      MAXC_LOG(kInfo, "NVRTC ", l->version(), " from ", l->path);
    else
      MAXC_LOG(kInfo, l->unavailable_reason);
    return l;
  }();
  return *lib;
}

}  // namespace maxc::cuda

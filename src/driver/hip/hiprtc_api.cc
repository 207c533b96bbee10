#include "driver/hip/hiprtc_api.h"

#include <cstdlib>

#include "base/log.h"
#include "base/str_cat.h"

namespace maxc::hip {
namespace {

std::unique_ptr<HiprtcLibrary> try_open(const std::string& name, std::string* why_not) {
  auto lib = std::make_unique<HiprtcLibrary>();
  lib->library = cuda::DynamicLibrary::open(name, why_not);
  if (!lib->library) return nullptr;
  const cuda::DynamicLibrary* dl = lib->library.get();
  const std::string missing = bind_hiprtc_api([dl](const char* s) { return dl->symbol(s); }, lib->api);
  if (!missing.empty()) {
    *why_not = str_cat(name, " lacks ", missing);
    return nullptr;
  }
  if (lib->api.rtc.Version(&lib->major, &lib->minor) != cuda::rtc_result::kSuccess) {
    *why_not = str_cat(name, ": hiprtcVersion failed");
    return nullptr;
  }
  lib->path = name;
  lib->available = true;
  return lib;
}

}  // namespace

std::string bind_hiprtc_api(const cuda::SymbolLookup& lookup, HiprtcApi& api) {
  if (std::string missing = cuda::bind_rtc_api(lookup, "hiprtc", api.rtc); !missing.empty()) return missing;
#define MAXC_HIPRTC_BIND(name, params)                            \
  api.name = reinterpret_cast<decltype(api.name)>(lookup(#name)); \
  if (!api.name) return #name;
  MAXC_HIPRTC_FUNCTIONS(MAXC_HIPRTC_BIND)
#undef MAXC_HIPRTC_BIND
  return "";
}

std::string HiprtcLibrary::version() const { return str_cat(major, ".", minor); }

std::vector<std::string> hiprtc_library_candidates() {
  const char* env = std::getenv("MAX_C_HIPRTC_LIBRARY");
  if (env && *env) return {env};
  return {"libhiprtc.so.6", "libhiprtc.so.5", "libamdhip64.so.5", "libhiprtc.so"};
}

std::unique_ptr<HiprtcLibrary> load_hiprtc(const std::vector<std::string>& candidates) {
  return cuda::open_first<HiprtcLibrary>(candidates, try_open,
                                         "hipRTC not found (set MAX_C_HIPRTC_LIBRARY to libhiprtc.so's path): ");
}

const HiprtcLibrary& hiprtc() {
  static const HiprtcLibrary* lib = [] {
    HiprtcLibrary* l = load_hiprtc(hiprtc_library_candidates()).release();
    if (l->available)
      MAXC_LOG(kInfo, "hipRTC ", l->version(), " from ", l->path);
    else
      MAXC_LOG(kInfo, l->unavailable_reason);
    return l;
  }();
  return *lib;
}

}  // namespace maxc::hip

#include "driver/cuda/dynamic_library.h"

#include <dlfcn.h>

namespace maxc::cuda {

std::unique_ptr<DynamicLibrary> DynamicLibrary::open(const std::string& name_or_path, std::string* why_not) {
  // RTLD_LOCAL: the library's symbols stay out of the global namespace, so a host program's
  // own copy of the CUDA runtime (PyTorch's, say) never binds to ours or ours to it.
  void* handle = dlopen(name_or_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    if (why_not) *why_not = err ? err : name_or_path + ": dlopen failed";
    return nullptr;
  }
  return std::unique_ptr<DynamicLibrary>(new DynamicLibrary(handle, name_or_path));
}

void* DynamicLibrary::symbol(const char* name) const {
  dlerror();  // clears a stale error, so a null answer is this lookup's
  return dlsym(handle_, name);
}

std::string DynamicLibrary::file_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || !info.dli_fname) return "";
  return info.dli_fname;
}

}  // namespace maxc::cuda

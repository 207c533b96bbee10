// A shared library opened at run time (dlopen), for the GPU stacks that must not be link-time
// dependencies: one libmax_c builds with no GPU toolkit and uses the driver, NVRTC (and later
// HIP) when the machine has them (DESIGN §8). Opening never aborts and never throws: a
// missing library is an ordinary answer with the loader's reason.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace maxc::cuda {

class DynamicLibrary {
 public:
  // The library at `name_or_path` (a bare soname searches the loader's path), or null with
  // the loader's message in *why_not.
  static std::unique_ptr<DynamicLibrary> open(const std::string& name_or_path, std::string* why_not);

  // Libraries stay loaded for the life of the process: function tables taken from them are
  // kept in process-wide singletons, and some drivers do not survive dlclose.
  ~DynamicLibrary() = default;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  void* symbol(const char* name) const;  // nullptr when the library lacks it
  const std::string& name() const { return name_; }

  // The file the code at `address` was loaded from ("" when the loader cannot tell): where
  // a library opened by soname actually lives.
  static std::string file_of(const void* address);

 private:
  DynamicLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}
  void* handle_;
  std::string name_;
};

// The first library of `candidates` that open(name, &why_not) returns; else a Lib (with an
// unavailable_reason member) whose reason is `not_found` followed by every candidate's. The
// search every runtime-loaded library (NVRTC, hipRTC, cuBLASLt) makes.
template <class Lib, class Open>
std::unique_ptr<Lib> open_first(const std::vector<std::string>& candidates, Open open, const std::string& not_found) {
  std::string reasons;
  for (const std::string& name : candidates) {
    std::string why;
    if (std::unique_ptr<Lib> lib = open(name, &why)) return lib;
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  auto none = std::make_unique<Lib>();
  none->unavailable_reason = not_found + reasons;
  return none;
}

}  // namespace maxc::cuda

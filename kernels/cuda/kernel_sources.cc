#include "kernels/cuda/kernel_sources.h"

#include "base/error.h"
#include "base/str_cat.h"

namespace maxc::gpu {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<std::pair<std::string, std::string>> all_headers() {
  std::vector<std::pair<std::string, std::string>> headers;
  for (const EmbeddedSource& s : embedded_sources()) {
    const std::string_view path = s.path;
    if (!ends_with(path, ".cuh")) continue;
    headers.emplace_back(std::string(path), s.text);
    const size_t slash = path.rfind('/');
    if (slash != std::string_view::npos) headers.emplace_back(std::string(path.substr(slash + 1)), s.text);
  }
  return headers;
}

}  // namespace

std::span<const EmbeddedSource> embedded_sources() { return {kEmbeddedSources, kEmbeddedSourceCount}; }

std::vector<std::string> kernel_source_paths() {
  std::vector<std::string> paths;
  for (const EmbeddedSource& s : embedded_sources())
    if (ends_with(s.path, ".cu")) paths.emplace_back(s.path);
  return paths;  // the generator sorted them
}

cuda::KernelSource kernel_source(std::string_view path) {
  for (const EmbeddedSource& s : embedded_sources())
    if (path == s.path && ends_with(path, ".cu")) return cuda::KernelSource{std::string(path), s.text, all_headers()};
  std::string known;
  for (const std::string& p : kernel_source_paths()) known += (known.empty() ? "" : ", ") + p;
  fail(Code::kNotFound, "no CUDA kernel source '", path, "' (the library has ", known, ")");
}

cuda::KernelSource kernel_source_from_text(std::string name, std::string text) {
  return cuda::KernelSource{std::move(name), std::move(text), all_headers()};
}

}  // namespace maxc::gpu

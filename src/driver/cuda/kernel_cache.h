// Compiled kernels kept in memory and on disk, keyed by the SHA-256 of everything that
// decides the compiler's output: the compiler's identity (name, version, fixed options), the
// source and every header given with it, the architecture, the options and the requested
// instances. A model compiled twice, or by two processes, compiles each kernel once.
//
// On disk: one file per key under the cache directory, written to a temporary name and
// renamed into place (readers never see half a file; concurrent writers of one key both
// write the same bytes), with a checksum that makes a damaged file a miss, never a wrong
// kernel. A directory that cannot be written costs speed, not correctness: the cache logs a
// warning once and keeps working from memory.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "driver/cuda/kernel_compiler.h"

namespace maxc::cuda {

class KernelCache {
 public:
  // `directory` empty: memory only. `compiler` must outlive the cache.
  KernelCache(const KernelCompiler& compiler, std::string directory);

  // The kernels of `request`: from memory, else from disk, else compiled and stored.
  // Throws what the compiler throws.
  std::shared_ptr<const CompiledKernels> get(const CompileRequest& request);

  std::string key(const CompileRequest& request) const;  // 64 hex digits
  const std::string& directory() const { return directory_; }
  std::string path_of(const std::string& key) const;  // the file of a key

  struct Stats {
    uint64_t memory_hits = 0;
    uint64_t disk_hits = 0;
    uint64_t compiles = 0;
    uint64_t disk_write_failures = 0;
  };
  Stats stats() const;

  // $MAX_C_KERNEL_CACHE_DIR ("off": none), else $XDG_CACHE_HOME/max_c/kernels, else
  // $HOME/.cache/max_c/kernels; "" when none of them is set.
  static std::string default_directory();

  // The file format, exposed for tests: encode and the decode that checks it.
  static std::string encode(const std::string& key, const CompiledKernels& kernels);
  // False (and *out untouched) for anything but an intact file of `key`.
  static bool decode(const std::string& bytes, const std::string& key, CompiledKernels* out);

 private:
  std::shared_ptr<const CompiledKernels> load_from_disk(const std::string& key);
  void store_to_disk(const std::string& key, const CompiledKernels& kernels);

  const KernelCompiler& compiler_;
  const std::string directory_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const CompiledKernels>> memory_;
  Stats stats_;
  bool warned_ = false;
};

}  // namespace maxc::cuda

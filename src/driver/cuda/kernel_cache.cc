#include "driver/cuda/kernel_cache.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "base/log.h"
#include "base/str_cat.h"
#include "driver/cuda/sha256.h"

namespace maxc::cuda {
namespace {

constexpr char kMagic[8] = {'M', 'A', 'X', 'C', 'K', 'R', 'N', '1'};
constexpr size_t kDigestBytes = 32;

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>(static_cast<uint8_t>(v >> (8 * i)));
}

void put_field(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

// Reads the fields of an encoded file front to back; any overrun marks it bad.
class Reader {
 public:
  Reader(const std::string& bytes, size_t end) : bytes_(bytes), end_(end) {}
  bool u64(uint64_t* v) {
    if (end_ - pos_ < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= uint64_t{static_cast<uint8_t>(bytes_[pos_ + i])} << (8 * i);
    pos_ += 8;
    return true;
  }
  bool field(std::string* s) {
    uint64_t n = 0;
    if (!u64(&n) || n > end_ - pos_) return false;
    s->assign(bytes_, pos_, n);
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == end_; }

 private:
  const std::string& bytes_;
  size_t end_;
  size_t pos_ = sizeof kMagic;
};

std::string digest_of(const std::string& bytes, size_t n) {
  Sha256 h;
  h.update(bytes.data(), n);
  const auto d = h.digest();
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return false;
  *out = std::move(s).str();
  return true;
}

// A name no other writer uses: the pid and a counter of this process.
std::string temporary_name(const std::string& final_path) {
  static std::atomic<uint64_t> counter{0};
  return str_cat(final_path, ".tmp.", static_cast<long>(getpid()), ".", counter.fetch_add(1));
}

}  // namespace

KernelCache::KernelCache(const KernelCompiler& compiler, std::string directory)
    : compiler_(compiler), directory_(std::move(directory)) {}

std::string KernelCache::key(const CompileRequest& r) const {
  Sha256 h;
  h.update_field("max_c kernel cache 1");
  h.update_field(compiler_.identity());
  h.update_field(r.source.name);
  h.update_field(r.source.text);
  h.update_field(std::to_string(r.source.headers.size()));
  for (const auto& [name, text] : r.source.headers) {
    h.update_field(name);
    h.update_field(text);
  }
  h.update_field(r.architecture);
  h.update_field(std::to_string(r.options.size()));
  for (const std::string& o : r.options) h.update_field(o);
  h.update_field(std::to_string(r.name_expressions.size()));
  for (const std::string& e : r.name_expressions) h.update_field(e);
  return h.hex_digest();
}

std::string KernelCache::path_of(const std::string& key) const {
  return (std::filesystem::path(directory_) / (key + ".kernel")).string();
}

std::shared_ptr<const CompiledKernels> KernelCache::get(const CompileRequest& request) {
  const std::string k = key(request);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = memory_.find(k);
    if (it != memory_.end()) {
      ++stats_.memory_hits;
      return it->second;
    }
  }
  std::shared_ptr<const CompiledKernels> kernels = load_from_disk(k);
  if (!kernels) {
    // Compiled outside the lock: compiles take seconds, and other kernels may be wanted
    // meanwhile. Two threads asking for one new key both compile it, to the same result.
    kernels = std::make_shared<const CompiledKernels>(compiler_.compile(request));
    store_to_disk(k, *kernels);
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.compiles;
  }
  std::lock_guard<std::mutex> lock(mu_);
  return memory_.emplace(k, kernels).first->second;
}

std::shared_ptr<const CompiledKernels> KernelCache::load_from_disk(const std::string& k) {
  if (directory_.empty()) return nullptr;
  std::string bytes;
  if (!read_file(path_of(k), &bytes)) return nullptr;
  CompiledKernels kernels;
  if (!decode(bytes, k, &kernels)) {
    MAXC_LOG(kInfo, "kernel cache: ", path_of(k), " is damaged or of another version; compiling again");
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.disk_hits;
  return std::make_shared<const CompiledKernels>(std::move(kernels));
}

void KernelCache::store_to_disk(const std::string& k, const CompiledKernels& kernels) {
  if (directory_.empty()) return;
  const std::string final_path = path_of(k);
  const std::string tmp = temporary_name(final_path);
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  bool ok = !ec;
  if (ok) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    const std::string bytes = encode(k, kernels);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    ok = !out.fail();
  }
  // rename() replaces the target atomically: a reader sees the old file or the new one.
  if (ok) ok = std::rename(tmp.c_str(), final_path.c_str()) == 0;
  if (ok) return;
  const int err = errno;
  std::filesystem::remove(tmp, ec);
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.disk_write_failures;
  if (!warned_) {
    warned_ = true;
    MAXC_LOG(kWarning, "kernel cache: cannot write ", final_path, " (", std::strerror(err),
             "); compiled kernels are kept in memory only");
  }
}

std::string KernelCache::encode(const std::string& k, const CompiledKernels& kernels) {
  std::string out(kMagic, sizeof kMagic);
  put_field(out, k);
  put_u64(out, static_cast<uint64_t>(kernels.format));
  put_u64(out, kernels.lowered_names.size());
  for (const auto& [expression, symbol] : kernels.lowered_names) {
    put_field(out, expression);
    put_field(out, symbol);
  }
  put_field(out, kernels.image);
  put_field(out, kernels.log);
  out += digest_of(out, out.size());
  return out;
}

bool KernelCache::decode(const std::string& bytes, const std::string& k, CompiledKernels* out) {
  if (bytes.size() < sizeof kMagic + kDigestBytes || bytes.compare(0, sizeof kMagic, kMagic, sizeof kMagic) != 0)
    return false;
  const size_t body = bytes.size() - kDigestBytes;
  if (bytes.compare(body, kDigestBytes, digest_of(bytes, body)) != 0) return false;
  Reader r(bytes, body);
  std::string stored_key;
  uint64_t format = 0, count = 0;
  if (!r.field(&stored_key) || stored_key != k || !r.u64(&format) || !r.u64(&count)) return false;
  if (format < static_cast<uint64_t>(CompiledKernels::Format::kCubin) ||
      format > static_cast<uint64_t>(CompiledKernels::Format::kCodeObject))
    return false;
  CompiledKernels kernels;
  kernels.format = static_cast<CompiledKernels::Format>(format);
  for (uint64_t i = 0; i < count; ++i) {
    std::string expression, symbol;
    if (!r.field(&expression) || !r.field(&symbol)) return false;
    kernels.lowered_names.emplace_back(std::move(expression), std::move(symbol));
  }
  if (!r.field(&kernels.image) || !r.field(&kernels.log) || !r.at_end()) return false;
  *out = std::move(kernels);
  return true;
}

KernelCache::Stats KernelCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::string KernelCache::default_directory() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string();
  };
  const std::string explicit_dir = env("MAX_C_KERNEL_CACHE_DIR");
  if (explicit_dir == "off") return "";
  if (!explicit_dir.empty()) return explicit_dir;
  const std::string xdg = env("XDG_CACHE_HOME");
  if (!xdg.empty()) return (std::filesystem::path(xdg) / "max_c" / "kernels").string();
  const std::string home = env("HOME");
  if (!home.empty()) return (std::filesystem::path(home) / ".cache" / "max_c" / "kernels").string();
  return "";
}

}  // namespace maxc::cuda

// The kernel cache with a fake compiler: what goes into the key, memory and disk hits across
// cache objects (as across processes), damaged files, directories that cannot be written,
// and where the cache lives by default.
#include "driver/cuda/kernel_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "driver/test_util.h"

namespace maxc::testing {
namespace {

namespace fs = std::filesystem;
using cuda::CompiledKernels;
using cuda::CompileRequest;
using cuda::KernelCache;

class FakeCompiler : public cuda::KernelCompiler {
 public:
  std::string identity() const override { return identity_; }
  CompiledKernels compile(const CompileRequest& r) const override {
    ++compiles;
    if (r.source.text.find("#error") != std::string::npos)
      fail(Code::kInternal, "fake compiler: ", r.source.name, " does not compile");
    CompiledKernels k;
    k.format = CompiledKernels::Format::kCubin;
    k.image = "image of " + r.source.name + " for " + r.architecture + std::string(1, '\0') + "binary tail";
    for (const std::string& e : r.name_expressions) k.lowered_names.emplace_back(e, "_Z" + std::to_string(e.size()));
    k.log = "warning: none";
    return k;
  }
  std::string identity_ = "fake 1.0";
  mutable int compiles = 0;
};

CompileRequest request() {
  CompileRequest r;
  r.source = {"softmax.cu", "#include \"common/cast.cuh\"\n__global__ void k() {}\n", {{"common/cast.cuh", "// cast"}}};
  r.architecture = "sm_90";
  r.options = {"-DTILE=32"};
  r.name_expressions = {"maxc::gpu::softmax_rows<float, false>"};
  return r;
}

// A fresh directory per test, removed afterwards.
class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("max_c_kernel_cache_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  FakeCompiler compiler_;
};

TEST_F(KernelCacheTest, KeyCoversEverythingThatShapesTheOutput) {
  KernelCache cache(compiler_, "");
  const CompileRequest base = request();
  const std::string k = cache.key(base);
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(cache.key(request()), k);
  auto differs = [&](auto change) {
    CompileRequest r = request();
    change(r);
    return cache.key(r) != k;
  };
  EXPECT_TRUE(differs([](CompileRequest& r) { r.source.text += " "; }));
  EXPECT_TRUE(differs([](CompileRequest& r) { r.source.name = "other.cu"; }));
  EXPECT_TRUE(differs([](CompileRequest& r) { r.source.headers[0].second += "x"; }));
  EXPECT_TRUE(differs([](CompileRequest& r) { r.source.headers[0].first = "cast.cuh"; }));
  EXPECT_TRUE(differs([](CompileRequest& r) { r.architecture = "sm_80"; }));
  EXPECT_TRUE(differs([](CompileRequest& r) { r.options.push_back("-G"); }));
  EXPECT_TRUE(differs([](CompileRequest& r) { r.options.clear(); }));
  EXPECT_TRUE(differs([](CompileRequest& r) { r.name_expressions.push_back("x"); }));
  // Moving a piece between neighbouring fields must not collide.
  EXPECT_TRUE(differs([](CompileRequest& r) { r.options = {"-DTILE=3", "2"}; }));
  FakeCompiler newer;
  newer.identity_ = "fake 1.1";
  EXPECT_NE(KernelCache(newer, "").key(base), k);
}

TEST_F(KernelCacheTest, MemoryOnlyCompilesOnce) {
  KernelCache cache(compiler_, "");
  auto a = cache.get(request());
  auto b = cache.get(request());
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(compiler_.compiles, 1);
  EXPECT_EQ(a->lowered("maxc::gpu::softmax_rows<float, false>"), "_Z37");
  EXPECT_MAXC_ERROR(a->lowered("other"), Code::kNotFound, "no compiled kernel for 'other'");
  EXPECT_EQ(cache.stats().memory_hits, 1u);
  EXPECT_EQ(cache.stats().compiles, 1u);
}

TEST_F(KernelCacheTest, DiskServesAnotherCacheObject) {
  {
    KernelCache first(compiler_, dir_.string());
    first.get(request());
  }
  const std::string file = KernelCache(compiler_, dir_.string()).path_of(KernelCache(compiler_, "").key(request()));
  ASSERT_TRUE(fs::exists(file));
  KernelCache second(compiler_, dir_.string());
  auto k = second.get(request());
  EXPECT_EQ(compiler_.compiles, 1);
  EXPECT_EQ(second.stats().disk_hits, 1u);
  EXPECT_EQ(k->image, std::string("image of softmax.cu for sm_90") + '\0' + "binary tail");
  EXPECT_EQ(k->lowered_names.size(), 1u);
  EXPECT_EQ(k->log, "warning: none");
  // Nothing but the finished file is left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".kernel") << e.path();
  }
  EXPECT_EQ(files, 1);
}

TEST_F(KernelCacheTest, DamagedFileIsRecompiledAndReplaced) {
  KernelCache cache(compiler_, dir_.string());
  cache.get(request());
  const std::string file = cache.path_of(cache.key(request()));
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  KernelCache again(compiler_, dir_.string());
  again.get(request());
  EXPECT_EQ(compiler_.compiles, 2);
  EXPECT_EQ(again.stats().disk_hits, 0u);
  KernelCache third(compiler_, dir_.string());
  third.get(request());
  EXPECT_EQ(compiler_.compiles, 2);  // the rewritten file is good again
}

TEST_F(KernelCacheTest, DecodeRefusesAnythingButAnIntactFileOfItsKey) {
  CompiledKernels k;
  k.format = CompiledKernels::Format::kPtx;
  k.image = ".version 8.0";
  k.lowered_names = {{"a<int>", "_Z1aIiEvv"}};
  const std::string bytes = KernelCache::encode("key1", k);
  CompiledKernels out;
  ASSERT_TRUE(KernelCache::decode(bytes, "key1", &out));
  EXPECT_EQ(out.format, CompiledKernels::Format::kPtx);
  EXPECT_EQ(out.image, ".version 8.0");
  EXPECT_EQ(out.lowered_names, k.lowered_names);
  EXPECT_FALSE(KernelCache::decode(bytes, "key2", &out));
  EXPECT_FALSE(KernelCache::decode(bytes.substr(0, bytes.size() - 1), "key1", &out));
  EXPECT_FALSE(KernelCache::decode("", "key1", &out));
  EXPECT_FALSE(KernelCache::decode(std::string(100, 'M'), "key1", &out));
  for (size_t i = 0; i < bytes.size(); i += 5) {
    std::string flipped = bytes;
    flipped[i] ^= 0x20;
    EXPECT_FALSE(KernelCache::decode(flipped, "key1", &out)) << "byte " << i;
  }
}

TEST_F(KernelCacheTest, UnwritableDirectoryFallsBackToMemory) {
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  if (access(dir_.c_str(), W_OK) == 0) GTEST_SKIP() << "running as a user who writes anywhere (root)";
  KernelCache cache(compiler_, dir_.string());
  auto k = cache.get(request());
  EXPECT_FALSE(k->image.empty());
  EXPECT_EQ(cache.stats().disk_write_failures, 1u);
  cache.get(request());
  EXPECT_EQ(compiler_.compiles, 1);
}

TEST_F(KernelCacheTest, CompileErrorsPassThroughAndAreNotCached) {
  KernelCache cache(compiler_, dir_.string());
  CompileRequest r = request();
  r.source.text = "#error broken";
  EXPECT_MAXC_ERROR(cache.get(r), Code::kInternal, "softmax.cu does not compile");
  EXPECT_MAXC_ERROR(cache.get(r), Code::kInternal, "does not compile");
  EXPECT_EQ(compiler_.compiles, 2);
  EXPECT_FALSE(fs::exists(dir_) && !fs::is_empty(dir_));
}

// Sets or clears an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_;
  std::string old_;
};

TEST(KernelCacheDirectory, FollowsTheEnvironment) {
  {
    ScopedEnv a("MAX_C_KERNEL_CACHE_DIR", "/tmp/explicit");
    ScopedEnv b("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(KernelCache::default_directory(), "/tmp/explicit");
  }
  {
    ScopedEnv a("MAX_C_KERNEL_CACHE_DIR", "off");
    EXPECT_EQ(KernelCache::default_directory(), "");
  }
  {
    ScopedEnv a("MAX_C_KERNEL_CACHE_DIR", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(KernelCache::default_directory(), "/tmp/xdg/max_c/kernels");
  }
  {
    ScopedEnv a("MAX_C_KERNEL_CACHE_DIR", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", nullptr);
    ScopedEnv c("HOME", "/home/someone");
    EXPECT_EQ(KernelCache::default_directory(), "/home/someone/.cache/max_c/kernels");
  }
  {
    ScopedEnv a("MAX_C_KERNEL_CACHE_DIR", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", nullptr);
    ScopedEnv c("HOME", nullptr);
    EXPECT_EQ(KernelCache::default_directory(), "");
  }
}

}  // namespace
}  // namespace maxc::testing

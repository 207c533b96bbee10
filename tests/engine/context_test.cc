// The context's thread pool: sized by num_threads, or by MAX_C_NUM_THREADS when the program
// leaves num_threads 0, and a clear error for a malformed MAX_C_NUM_THREADS.
#include "engine/context.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "base/error.h"
#include "kernels/cpu/thread_pool.h"

namespace maxc {
namespace {

// Sets MAX_C_NUM_THREADS for the scope, restoring what was there.
class ThreadsEnv {
 public:
  explicit ThreadsEnv(const char* value) {
    if (const char* old = std::getenv("MAX_C_NUM_THREADS")) saved_ = old, had_ = true;
    if (value) setenv("MAX_C_NUM_THREADS", value, 1);
    else unsetenv("MAX_C_NUM_THREADS");
  }
  ~ThreadsEnv() {
    if (had_) setenv("MAX_C_NUM_THREADS", saved_.c_str(), 1);
    else unsetenv("MAX_C_NUM_THREADS");
  }

 private:
  std::string saved_;
  bool had_ = false;
};

TEST(Context, PoolHasNumThreads) {
  ThreadsEnv env("5");  // an explicit count wins over the environment
  const Ref<Context> ctx = Context::create({{}, 3});
  EXPECT_EQ(ctx->num_threads(), 3);
  EXPECT_EQ(ctx->pool()->threads(), 3);
}

TEST(Context, EnvironmentSetsTheDefault) {
  ThreadsEnv env("5");
  const Ref<Context> ctx = Context::create({});
  EXPECT_EQ(ctx->num_threads(), 5);
  EXPECT_EQ(ctx->pool()->threads(), 5);
}

TEST(Context, MalformedEnvironmentIsAnError) {
  for (const char* bad : {"0", "-2", "two", "3x", "99999"}) {
    ThreadsEnv env(bad);
    try {
      Context::create({});
      ADD_FAILURE() << "MAX_C_NUM_THREADS=" << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("MAX_C_NUM_THREADS"), std::string::npos) << e.what();
    }
  }
}

TEST(Context, UnsetEnvironmentMeansOnePerCore) {
  ThreadsEnv env(nullptr);
  EXPECT_GE(Context::create({})->num_threads(), 1);
}

}  // namespace
}  // namespace maxc

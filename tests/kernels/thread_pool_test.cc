// The CPU thread pool (kernels/cpu/thread_pool.h) and parallel_for on it: every chunk runs
// once whatever the pool's size and however many callers share it, exceptions reach their
// caller and leave the pool usable, and a loop inside a chunk runs inline.
#include "kernels/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

// Runs `body` as a pool job of `chunks` chunks on the calling thread.
template <typename Body>
void run_job(ThreadPool& pool, int64_t chunks, Body& body) {
  pool.run(chunks, [](void* context, int64_t c) { (*static_cast<Body*>(context))(c); }, &body);
}

// Each chunk of a job runs exactly once.
void expect_each_chunk_once(ThreadPool& pool, int64_t chunks) {
  std::vector<std::atomic<int>> runs(chunks);
  auto body = [&](int64_t c) { runs[c].fetch_add(1); };
  run_job(pool, chunks, body);
  for (int64_t c = 0; c < chunks; ++c) ASSERT_EQ(runs[c].load(), 1) << "chunk " << c << " of " << chunks;
}

TEST(ThreadPool, RunsEachChunkOnceAtEverySize) {
  for (int32_t threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int64_t chunks : {0, 1, 2, 7, 64, 1000}) expect_each_chunk_once(pool, chunks);
  }
}

TEST(ThreadPool, WorkersTakeChunks) {
  // A caller that sleeps in its chunk leaves the others to the workers: more than one thread
  // ran the job.
  ThreadPool pool(4);
  std::mutex mutex;
  std::set<std::thread::id> ran_on;
  auto body = [&](int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> lock(mutex);
    ran_on.insert(std::this_thread::get_id());
  };
  run_job(pool, 32, body);
  EXPECT_GT(ran_on.size(), 1u);
}

TEST(ThreadPool, ManyCallersShareOnePool) {
  ThreadPool pool(3);
  constexpr int kCallers = 8, kJobs = 300;
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < kCallers; ++t) {
    callers.emplace_back([&, t] {
      for (int j = 0; j < kJobs; ++j) {
        const int64_t chunks = 1 + (t * 7 + j) % 37;
        std::vector<std::atomic<int>> runs(chunks);
        auto body = [&](int64_t c) { runs[c].fetch_add(1); };
        run_job(pool, chunks, body);
        for (int64_t c = 0; c < chunks; ++c)
          if (runs[c].load() != 1) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& c : callers) c.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPool, AChunksExceptionReachesTheCallerAndThePoolStaysUsable) {
  ThreadPool pool(4);
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> ran{0};
    auto body = [&](int64_t c) {
      ran.fetch_add(1);
      if (c == 5) throw std::runtime_error("chunk 5 failed");
    };
    try {
      run_job(pool, 64, body);
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "chunk 5 failed");
    }
    EXPECT_GE(ran.load(), 1);
    expect_each_chunk_once(pool, 64);
  }
  EXPECT_FALSE(ThreadPool::in_chunk());
}

TEST(ThreadPool, ALoopInsideAChunkRunsInline) {
  ThreadPool pool(4);
  PoolScope scope(&pool);
  std::atomic<int> inner_total{0}, inline_loops{0};
  parallel_for(16, kMinWorkPerThread, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      EXPECT_TRUE(ThreadPool::in_chunk());
      const std::thread::id outer = std::this_thread::get_id();
      bool same_thread = true;
      int calls = 0;
      parallel_for(1000, kMinWorkPerThread, [&](int64_t b, int64_t e) {
        same_thread = same_thread && std::this_thread::get_id() == outer;
        ++calls;
        inner_total.fetch_add(static_cast<int>(e - b));
      });
      if (same_thread && calls == 1) inline_loops.fetch_add(1);
    }
  });
  EXPECT_EQ(inner_total.load(), 16 * 1000);
  EXPECT_EQ(inline_loops.load(), 16);
  EXPECT_FALSE(ThreadPool::in_chunk());
}

TEST(ParallelFor, CoversTheRangeOnceAtEveryPoolSize) {
  for (int32_t threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    PoolScope scope(&pool);
    EXPECT_EQ(pool_threads(), threads);
    for (int64_t n : {1, 2, 3, 100, 4097}) {
      std::vector<std::atomic<int>> hits(n);
      parallel_for(n, kMinWorkPerThread, [&](int64_t begin, int64_t end) {
        ASSERT_LT(begin, end);
        for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n;
    }
  }
  EXPECT_EQ(pool_threads(), 1);  // the scope ended
}

TEST(ParallelFor, WithoutAPoolRunsOnTheCaller) {
  int calls = 0;
  parallel_for(1 << 20, kMinWorkPerThread, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 1 << 20);
    ++calls;
  });
  EXPECT_EQ(calls, 1);
}

TEST(ParallelFor, SplitsAcrossThePool) {
  ThreadPool pool(2);
  PoolScope scope(&pool);
  std::atomic<int> calls{0};
  parallel_for(1 << 16, kMinWorkPerThread, [&](int64_t, int64_t) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 2 * kChunksPerThread);
}

}  // namespace
}  // namespace maxc::cpu

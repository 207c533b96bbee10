// How every CPU kernel splits its work (DESIGN §5): parallel_for over the calling thread's
// current pool (thread_pool.h), which the executor sets from the context for the duration of
// a plan. Kernels never start threads of their own; oneDNN runs one thread per call (see
// dnnl_engine.h) and the kernels that call it shard the work over the pool themselves.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/thread_pool.h"

namespace maxc::cpu {

// Below this many scalar operations per thread a parallel loop costs more than it saves.
constexpr int64_t kMinWorkPerThread = 32 * 1024;
// A chunk is at least this much work, and a loop has at most kChunksPerThread chunks per
// thread: a few, so that a thread the OS runs late leaves its share to the others.
constexpr int64_t kMinWorkPerChunk = 8 * 1024;
constexpr int64_t kChunksPerThread = 4;

// Calls fn(begin, end) over disjoint chunks covering [0, n), on the calling thread and the
// current pool's idle workers. `cost` is the work of one index in scalar operations; small
// loops, loops inside a chunk and loops without a pool run on the calling thread. Chunk
// boundaries depend on the thread count, so fn's results must not.
template <typename Fn>
void parallel_for(int64_t n, int64_t cost, Fn&& fn) {
  if (n <= 0) return;
  ThreadPool* pool = current_pool();
  const int64_t threads = pool && !ThreadPool::in_chunk() ? pool->threads() : 1;
  const int64_t work = n * std::max<int64_t>(cost, 1);
  if (threads <= 1 || work < 2 * kMinWorkPerThread) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t chunks = std::min({n, threads * kChunksPerThread, std::max<int64_t>(2, work / kMinWorkPerChunk)});
  const int64_t base = n / chunks, extra = n % chunks;  // the first `extra` chunks get one more
  auto chunk = [&](int64_t c) {
    const int64_t begin = c * base + std::min(c, extra);
    fn(begin, begin + base + (c < extra ? 1 : 0));
  };
  pool->run(
      chunks, [](void* context, int64_t c) { (*static_cast<decltype(chunk)*>(context))(c); }, &chunk);
}

}  // namespace maxc::cpu

// The one thread team (DESIGN §5): OpenMP's, which oneDNN shares. The engine sizes it per
// calling thread with omp_set_num_threads(context.num_threads) before a plan runs, so every
// kernel splits its work with parallel_for and never starts threads of its own.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace maxc::cpu {

// Sizes the calling thread's team (an OpenMP per-thread setting), for our kernels and
// oneDNN's alike; cheap when it already has that size.
inline void size_team(int32_t threads) {
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

// Below this many scalar operations a parallel region costs more than it saves.
constexpr int64_t kMinWorkPerThread = 32 * 1024;

// Calls fn(begin, end) over disjoint chunks covering [0, n). `cost` is the work of one index
// in scalar operations; small jobs run on the calling thread.
template <typename Fn>
void parallel_for(int64_t n, int64_t cost, Fn&& fn) {
  if (n <= 0) return;
  const int64_t max_threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int64_t by_work = std::max<int64_t>(1, n * std::max<int64_t>(cost, 1) / kMinWorkPerThread);
  const int64_t threads = std::min({max_threads, by_work, n});
  if (threads <= 1) {
    fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t begin = n * t / nt, end = n * (t + 1) / nt;
    if (begin < end) fn(begin, end);
  }
}

}  // namespace maxc::cpu

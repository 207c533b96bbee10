// Timing for the benchmarks. Other engineers may share the machine: every figure is the best
// of several rounds.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>

namespace bench {

// Seconds per call of fn: the best mean over `rounds` rounds of at least `min_seconds` each.
inline double best_seconds_per_call(const std::function<void()>& fn, int rounds, double min_seconds) {
  using clock = std::chrono::steady_clock;
  fn();  // warm-up: plans, primitives and page faults
  long calls = 1;
  for (;;) {
    const auto t0 = clock::now();
    for (long i = 0; i < calls; ++i) fn();
    if (std::chrono::duration<double>(clock::now() - t0).count() >= min_seconds / 4) break;
    calls *= 2;
  }
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    long n = 0;
    const auto t0 = clock::now();
    double elapsed = 0;
    while (elapsed < min_seconds) {
      for (long i = 0; i < calls; ++i) fn();
      n += calls;
      elapsed = std::chrono::duration<double>(clock::now() - t0).count();
    }
    best = std::min(best, elapsed / static_cast<double>(n));
  }
  return best;
}

}  // namespace bench

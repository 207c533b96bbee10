#include "mem_bandwidth.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace bench {
namespace {

// Two streams (the halves of the range) with two loads each per step keep the prefetchers and
// the line-fill buffers busy; the XOR only keeps the loads from being optimized away.
__attribute__((target("avx2"))) uint64_t read_all(const __m256i* p, size_t n) {
  const __m256i* q = p + n / 2;
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (size_t i = 0; i + 2 <= n / 2; i += 2) {
    a = _mm256_xor_si256(a, _mm256_load_si256(p + i));
    b = _mm256_xor_si256(b, _mm256_load_si256(p + i + 1));
    c = _mm256_xor_si256(c, _mm256_load_si256(q + i));
    d = _mm256_xor_si256(d, _mm256_load_si256(q + i + 1));
  }
  const __m256i all = _mm256_xor_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(c, d));
  return static_cast<uint64_t>(_mm256_extract_epi64(all, 0) ^ _mm256_extract_epi64(all, 3));
}

}  // namespace

double measured_read_gbps(int threads, size_t bytes, int passes) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || threads < 1) return 0;
  const size_t vectors = bytes / 32 / threads / 4 * 4 * threads;
  auto* data = static_cast<__m256i*>(std::aligned_alloc(64, vectors * 32));
  if (!data) return 0;
  std::memset(data, 1, vectors * 32);  // touch every page before timing
  std::atomic<uint64_t> sink{0};
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    std::vector<std::thread> team;
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
      team.emplace_back([&, t] { sink ^= read_all(data + vectors / threads * t, vectors / threads); });
    for (auto& th : team) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(vectors) * 32 / s / 1e9);
  }
  std::free(data);
  return best;
}

}  // namespace bench

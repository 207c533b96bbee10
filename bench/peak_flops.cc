#include "peak_flops.h"

#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace bench {
namespace {

// Twelve independent chains, named so that they stay in registers, hide the FMA latency
// (4-5 cycles) on two FMA ports.
constexpr int kChains = 12;
constexpr int kUnroll = 8;

__attribute__((target("avx2,fma"))) float fma_chains(long rounds) {
  __m256 a0 = _mm256_set1_ps(1.00f), a1 = _mm256_set1_ps(1.01f), a2 = _mm256_set1_ps(1.02f),
         a3 = _mm256_set1_ps(1.03f), a4 = _mm256_set1_ps(1.04f), a5 = _mm256_set1_ps(1.05f),
         a6 = _mm256_set1_ps(1.06f), a7 = _mm256_set1_ps(1.07f), a8 = _mm256_set1_ps(1.08f),
         a9 = _mm256_set1_ps(1.09f), a10 = _mm256_set1_ps(1.10f), a11 = _mm256_set1_ps(1.11f);
  const __m256 mul = _mm256_set1_ps(0.9999999f), add = _mm256_set1_ps(1e-7f);
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 8
    for (int u = 0; u < kUnroll; ++u) {
      a0 = _mm256_fmadd_ps(a0, mul, add), a1 = _mm256_fmadd_ps(a1, mul, add), a2 = _mm256_fmadd_ps(a2, mul, add);
      a3 = _mm256_fmadd_ps(a3, mul, add), a4 = _mm256_fmadd_ps(a4, mul, add), a5 = _mm256_fmadd_ps(a5, mul, add);
      a6 = _mm256_fmadd_ps(a6, mul, add), a7 = _mm256_fmadd_ps(a7, mul, add), a8 = _mm256_fmadd_ps(a8, mul, add);
      a9 = _mm256_fmadd_ps(a9, mul, add), a10 = _mm256_fmadd_ps(a10, mul, add), a11 = _mm256_fmadd_ps(a11, mul, add);
    }
  }
  const __m256 sum = _mm256_add_ps(
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                    _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7))),
      _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  return lanes[0];
}

double flops_per_round() { return 2.0 * 8 * kChains * kUnroll; }

}  // namespace

double measured_peak_gflops(int threads, double seconds) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
  // Calibrate the rounds on one thread, then run all threads together for `seconds`.
  long rounds = 1000;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile float sink = fma_chains(rounds);
    (void)sink;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0.05) {
      rounds = static_cast<long>(rounds * seconds / s);
      break;
    }
    rounds *= 4;
  }
  std::vector<std::thread> team;
  std::atomic<float> sink{0};
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) team.emplace_back([&] { sink = sink + fma_chains(rounds); });
  for (auto& th : team) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return flops_per_round() * static_cast<double>(rounds) * threads / s / 1e9;
}

}  // namespace bench

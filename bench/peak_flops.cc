#include "peak_flops.h"

#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace bench {
namespace {

// Twelve independent chains (GCC keeps the unrolled array in registers) hide the FMA latency
// (4-5 cycles) on two FMA ports.
constexpr int kChains = 12;
constexpr int kUnroll = 8;

__attribute__((target("avx2,fma"))) float chains_avx2(long rounds) {
  __m256 a[kChains];
  for (int c = 0; c < kChains; ++c) a[c] = _mm256_set1_ps(1.0f + 0.01f * static_cast<float>(c));
  const __m256 mul = _mm256_set1_ps(0.9999999f), add = _mm256_set1_ps(1e-7f);
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 96
    for (int u = 0; u < kUnroll * kChains; ++u) a[u % kChains] = _mm256_fmadd_ps(a[u % kChains], mul, add);
  }
  __m256 sum = a[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, a[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  return lanes[0];
}

__attribute__((target("avx512f"))) float chains_avx512(long rounds) {
  __m512 a[kChains];
  for (int c = 0; c < kChains; ++c) a[c] = _mm512_set1_ps(1.0f + 0.01f * static_cast<float>(c));
  const __m512 mul = _mm512_set1_ps(0.9999999f), add = _mm512_set1_ps(1e-7f);
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 96
    for (int u = 0; u < kUnroll * kChains; ++u) a[u % kChains] = _mm512_fmadd_ps(a[u % kChains], mul, add);
  }
  __m512 sum = a[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, a[c]);
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  return lanes[0];
}

// AVX-512 where the CPU has it: the GEMMs measured against this peak (oneDNN's) use it, and
// on cores with 512-bit FMA units (Zen 5, Intel's server cores) it doubles AVX2's peak.
bool wide() { return __builtin_cpu_supports("avx512f"); }
float fma_chains(long rounds) { return wide() ? chains_avx512(rounds) : chains_avx2(rounds); }

double flops_per_round() { return 2.0 * (wide() ? 16 : 8) * kChains * kUnroll; }

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

// What the kernel tests share: seeded random inputs, and scratch aligned as the engine's
// arena aligns it.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

namespace maxc::kernel_test {

// n floats uniform in [-scale, scale), the same for the same seed.
inline std::vector<float> random_floats(int64_t n, uint32_t seed, float scale = 2.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(gen);
  return v;
}

// A per-call scratch, 64-byte aligned like the engine's arena.
struct AlignedScratch {
  explicit AlignedScratch(uint64_t bytes)
      : raw(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64))) {}
  ~AlignedScratch() { std::free(raw); }
  AlignedScratch(const AlignedScratch&) = delete;
  AlignedScratch& operator=(const AlignedScratch&) = delete;
  void* get() { return raw; }
  char* raw;
};

}  // namespace maxc::kernel_test

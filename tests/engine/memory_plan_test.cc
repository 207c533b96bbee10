#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "base/error.h"
#include "engine/memory_plan.h"

namespace maxc {
namespace {

bool overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) { return a < b + bn && b < a + an; }

TEST(MemoryPlan, BuffersThatNeverMeetShareBytes) {
  // A chain: each buffer dies when the next is written, so two slots suffice.
  std::vector<BufferLife> chain = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaLayout l = plan_arena(chain);
  EXPECT_EQ(l.total_bytes, 4 * 1024u);
  EXPECT_EQ(l.arena_bytes, 2 * 1024u);
}

TEST(MemoryPlan, LiveBuffersNeverOverlapAndAreAligned) {
  std::vector<BufferLife> b = {{100, 0, 5}, {3000, 1, 2}, {64, 2, 3}, {5000, 3, 6}, {1, 4, 4}, {0, 0, 9}, {777, 0, 9}};
  ArenaLayout l = plan_arena(b);
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(l.offsets[i] % kArenaAlignment, 0u);
    EXPECT_LE(l.offsets[i] + b[i].bytes, l.arena_bytes);
    for (size_t j = i + 1; j < b.size(); ++j) {
      const bool meet = b[i].first <= b[j].last && b[j].first <= b[i].last;
      if (meet && b[i].bytes && b[j].bytes)
        EXPECT_FALSE(overlap(l.offsets[i], b[i].bytes, l.offsets[j], b[j].bytes)) << i << " and " << j;
    }
  }
}

// Twenty live buffers of 2^60 bytes each fit the element limit one by one; together they
// once wrapped the arena's size to a small number that kernels then wrote past.
TEST(MemoryPlan, ArenaSizesThatWrapAreResourceExhausted) {
  const std::vector<BufferLife> huge(20, BufferLife{uint64_t{1} << 60, 0, 1});
  try {
    plan_arena(huge);
    ADD_FAILURE() << "plan_arena accepted 20 x 2^60 live bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kResourceExhausted) << e.what();
  }
}

// The plan's rule, by brute force: largest first (stable), each at the lowest aligned offset
// clear of every placed buffer whose lifetime meets its own.
std::vector<uint64_t> reference_offsets(const std::vector<BufferLife>& b) {
  auto al = [](uint64_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; };
  std::vector<size_t> order(b.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return b[x].bytes > b[y].bytes; });
  std::vector<uint64_t> off(b.size(), 0);
  std::vector<size_t> placed;
  for (size_t i : order) {
    if (al(b[i].bytes) == 0) continue;
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t j : placed)
      if (b[i].first <= b[j].last && b[j].first <= b[i].last) taken.emplace_back(off[j], off[j] + al(b[j].bytes));
    std::sort(taken.begin(), taken.end());
    uint64_t o = 0;
    for (const auto& [begin, end] : taken) {
      if (o + al(b[i].bytes) <= begin) break;
      o = std::max(o, end);
    }
    off[i] = o;
    placed.push_back(i);
  }
  return off;
}

// The index of placed buffers by lifetime finds exactly the buffers a scan of all would: short
// and long lifetimes, shared first steps, buffers alive at one step only.
TEST(MemoryPlan, LifetimeIndexPlacesAsTheScanOfEveryBuffer) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    const int64_t steps = 1 + static_cast<int64_t>(rng() % 300);
    std::vector<BufferLife> b(rng() % 400);
    for (BufferLife& x : b) {
      x.first = static_cast<int64_t>(rng() % static_cast<uint64_t>(steps));
      const int64_t span = rng() % 4 == 0 ? steps : 1 + static_cast<int64_t>(rng() % 8);
      x.last = std::min(steps - 1, x.first + static_cast<int64_t>(rng() % static_cast<uint64_t>(span)));
      x.bytes = rng() % 5 == 0 ? 0 : 1 + rng() % 5000;
    }
    EXPECT_EQ(plan_arena(b).offsets, reference_offsets(b)) << "round " << round;
  }
}

TEST(MemoryPlan, Empty) {
  ArenaLayout l = plan_arena({});
  EXPECT_EQ(l.arena_bytes, 0u);
}

}  // namespace
}  // namespace maxc

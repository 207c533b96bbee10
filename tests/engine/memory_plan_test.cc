#include <gtest/gtest.h>

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

TEST(MemoryPlan, Empty) {
  ArenaLayout l = plan_arena({});
  EXPECT_EQ(l.arena_bytes, 0u);
}

}  // namespace
}  // namespace maxc

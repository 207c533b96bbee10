// Liveness-based placement of a plan's buffers in one arena (DESIGN §4): every buffer lives
// from the step that writes it to the last step that reads it; buffers whose lifetimes
// overlap get disjoint byte ranges, buffers that never meet may share. Greedy by size,
// lowest offset first, 64-byte aligned.
#pragma once

#include <cstdint>
#include <vector>

namespace maxc {

struct BufferLife {
  uint64_t bytes = 0;
  int64_t first = 0;  // the step that writes it
  int64_t last = 0;   // the last step that reads it (>= first)
};

struct ArenaLayout {
  std::vector<uint64_t> offsets;  // per buffer
  uint64_t arena_bytes = 0;       // the arena's size
  uint64_t total_bytes = 0;       // what the buffers would take without sharing
};

constexpr uint64_t kArenaAlignment = 64;

ArenaLayout plan_arena(const std::vector<BufferLife>& buffers);

}  // namespace maxc

#include "engine/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace maxc {

namespace {

uint64_t aligned(uint64_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool lifetimes_meet(const BufferLife& a, const BufferLife& b) { return a.first <= b.last && b.first <= a.last; }

// The lowest aligned offset where `size` bytes fit between the ranges already taken.
uint64_t first_fit(std::vector<std::pair<uint64_t, uint64_t>>& taken, uint64_t size) {
  std::sort(taken.begin(), taken.end());
  uint64_t offset = 0;
  for (const auto& [begin, end] : taken) {
    if (offset + size <= begin) break;
    offset = std::max(offset, end);
  }
  return offset;
}

}  // namespace

ArenaLayout plan_arena(const std::vector<BufferLife>& buffers) {
  ArenaLayout layout;
  layout.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first: big buffers claim the low offsets, small ones fill the gaps.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const uint64_t size = aligned(buffers[i].bytes);
    layout.total_bytes += size;
    if (size == 0) continue;
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t j : placed)
      if (lifetimes_meet(buffers[i], buffers[j]))
        taken.emplace_back(layout.offsets[j], layout.offsets[j] + aligned(buffers[j].bytes));
    layout.offsets[i] = first_fit(taken, size);
    layout.arena_bytes = std::max(layout.arena_bytes, layout.offsets[i] + size);
    placed.push_back(i);
  }
  return layout;
}

}  // namespace maxc

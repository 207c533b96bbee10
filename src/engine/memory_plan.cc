#include "engine/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "base/checked_math.h"
#include "base/error.h"

namespace maxc {

namespace {

// Each buffer fits the element limit, but a plan's buffers together may not fit 64 bits:
// every sum of sizes and offsets is checked, so the arena is never sized by one that wrapped.
uint64_t add_bytes(uint64_t a, uint64_t b) {
  const std::optional<uint64_t> sum = checked_add(a, b);
  if (!sum) fail(Code::kResourceExhausted, "the plan's buffers need more than 2^64 bytes");
  return *sum;
}

uint64_t aligned(uint64_t bytes) { return add_bytes(bytes, kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool lifetimes_meet(const BufferLife& a, const BufferLife& b) { return a.first <= b.last && b.first <= a.last; }

// The lowest aligned offset where `size` bytes fit between the ranges already taken.
uint64_t first_fit(std::vector<std::pair<uint64_t, uint64_t>>& taken, uint64_t size) {
  std::sort(taken.begin(), taken.end());
  uint64_t offset = 0;
  for (const auto& [begin, end] : taken) {
    if (add_bytes(offset, size) <= begin) break;
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
    layout.total_bytes = add_bytes(layout.total_bytes, size);
    if (size == 0) continue;
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t j : placed)
      if (lifetimes_meet(buffers[i], buffers[j]))
        taken.emplace_back(layout.offsets[j], add_bytes(layout.offsets[j], aligned(buffers[j].bytes)));
    layout.offsets[i] = first_fit(taken, size);
    layout.arena_bytes = std::max(layout.arena_bytes, add_bytes(layout.offsets[i], size));
    placed.push_back(i);
  }
  return layout;
}

}  // namespace maxc

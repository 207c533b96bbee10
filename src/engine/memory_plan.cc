#include "engine/memory_plan.h"

#include <algorithm>
#include <map>
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

// The buffers placed so far, found by lifetime: those alive at one step (a segment tree over
// steps, each buffer stored in the O(log steps) nodes that cover its lifetime) and those
// first written within a range of steps. A buffer whose lifetime meets [first, last] either
// is alive at `first` or is first written in (first, last], so the two lookups find each once.
// Scanning every placed buffer instead made planning O(n^2): 120,000 buffers of an unrolled
// recurrence took minutes.
class PlacedIndex {
 public:
  explicit PlacedIndex(int64_t steps) {
    while (leaves_ < steps) leaves_ *= 2;
    alive_.resize(2 * static_cast<size_t>(leaves_));
  }

  void add(size_t id, const BufferLife& life) {
    for (int64_t l = life.first + leaves_, r = life.last + 1 + leaves_; l < r; l /= 2, r /= 2) {
      if (l & 1) alive_[static_cast<size_t>(l++)].push_back(id);
      if (r & 1) alive_[static_cast<size_t>(--r)].push_back(id);
    }
    by_first_[life.first].push_back(id);
  }

  // Calls f(id) once for every placed buffer whose lifetime meets `life`.
  template <class F>
  void for_each_meeting(const BufferLife& life, F&& f) const {
    for (int64_t node = life.first + leaves_; node >= 1; node /= 2)
      for (size_t id : alive_[static_cast<size_t>(node)]) f(id);
    for (auto it = by_first_.upper_bound(life.first); it != by_first_.end() && it->first <= life.last; ++it)
      for (size_t id : it->second) f(id);
  }

 private:
  int64_t leaves_ = 1;
  std::vector<std::vector<size_t>> alive_;
  std::map<int64_t, std::vector<size_t>> by_first_;
};

}  // namespace

ArenaLayout plan_arena(const std::vector<BufferLife>& buffers) {
  ArenaLayout layout;
  layout.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first: big buffers claim the low offsets, small ones fill the gaps.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  int64_t steps = 1;
  for (const BufferLife& b : buffers) {
    if (b.first < 0 || b.last < b.first) fail(Code::kInternal, "a buffer lives from step ", b.first, " to ", b.last);
    steps = std::max(steps, b.last + 1);
  }
  PlacedIndex placed(steps);
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  for (size_t i : order) {
    const uint64_t size = aligned(buffers[i].bytes);
    layout.total_bytes = add_bytes(layout.total_bytes, size);
    if (size == 0) continue;
    taken.clear();
    placed.for_each_meeting(buffers[i], [&](size_t j) {
      taken.emplace_back(layout.offsets[j], add_bytes(layout.offsets[j], aligned(buffers[j].bytes)));
    });
    layout.offsets[i] = first_fit(taken, size);
    layout.arena_bytes = std::max(layout.arena_bytes, add_bytes(layout.offsets[i], size));
    placed.add(i, buffers[i]);
  }
  return layout;
}

}  // namespace maxc

#include "driver/cuda/caching_allocator.h"

#include <algorithm>
#include <vector>

#include "base/error.h"
#include "base/log.h"

namespace maxc::cuda {

CachingAllocator::CachingAllocator(MemorySource& source, size_t limit) : source_(source) { stats_.limit = limit; }

CachingAllocator::~CachingAllocator() {
  release_cached();
  if (!live_.empty())
    MAXC_LOG(kDebug, source_.describe(), ": allocator destroyed with ", live_.size(), " live block(s)");
}

size_t CachingAllocator::round_size(size_t bytes) {
  constexpr size_t kMinBlock = 512;
  if (bytes <= kMinBlock) return kMinBlock;
  size_t power = 1;
  while (power <= (bytes - 1) / 2) power <<= 1;  // the largest power of two below bytes
  const size_t step = std::max(power / 4, kMinBlock);
  const size_t rounded = (bytes + step - 1) / step * step;
  if (rounded < bytes || bytes > SIZE_MAX - step)
    fail(Code::kResourceExhausted, "a block of ", bytes, " bytes is too large to allocate");
  return rounded;
}

void* CachingAllocator::allocate(size_t bytes, StreamKey stream) {
  const size_t rounded = round_size(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  void* p = take_cached(rounded, stream);
  if (!p) p = obtain_fresh(bytes, rounded, stream);
  stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
  return p;
}

void* CachingAllocator::take_cached(size_t rounded, StreamKey stream) {
  auto it = free_.lower_bound(FreeKey{stream, rounded});
  if (it == free_.end() || it->first.first != stream || it->first.second / 2 > rounded) return nullptr;
  void* p = it->second;
  const size_t size = it->first.second;
  free_.erase(it);
  live_.emplace(p, Block{size, stream});
  stats_.cached -= size;
  stats_.in_use += size;
  ++stats_.reused;
  return p;
}

void* CachingAllocator::obtain_fresh(size_t bytes, size_t rounded, StreamKey stream) {
  if (rounded > stats_.limit || stats_.in_use > stats_.limit - rounded)
    fail(Code::kResourceExhausted, "allocating ", bytes, " bytes on ", source_.describe(),
         " would pass its memory limit of ", stats_.limit, " bytes (", usage(), ")");
  // The cache gives way to live memory under the limit.
  if (stats_.cached > stats_.limit - stats_.in_use - rounded) trim_cache_to(stats_.limit - rounded);
  void* p = source_.obtain(rounded);
  if (!p && stats_.cached > 0) {
    // The device is full, partly of our own cache: give it back and try once more.
    trim_cache_to(0);
    p = source_.obtain(rounded);
  }
  if (!p)
    fail(Code::kResourceExhausted, "out of memory on ", source_.describe(), " allocating ", bytes, " bytes (",
         usage(), ")");
  live_.emplace(p, Block{rounded, stream});
  stats_.in_use += rounded;
  ++stats_.obtained;
  return p;
}

void CachingAllocator::deallocate(void* p) noexcept {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) {
    MAXC_LOG(kError, source_.describe(), ": deallocate of ", p, ", which this allocator did not give; ignored");
    return;
  }
  const Block b = it->second;
  live_.erase(it);
  stats_.in_use -= b.size;
  stats_.cached += b.size;
  free_.emplace(FreeKey{b.stream, b.size}, p);
}

void CachingAllocator::trim_cache_to(size_t target) {
  if (stats_.in_use + stats_.cached <= target || free_.empty()) return;
  std::vector<std::multimap<FreeKey, void*>::iterator> blocks;
  blocks.reserve(free_.size());
  for (auto it = free_.begin(); it != free_.end(); ++it) blocks.push_back(it);
  std::sort(blocks.begin(), blocks.end(),
            [](const auto& a, const auto& b) { return a->first.second > b->first.second; });
  source_.quiesce();
  for (auto it : blocks) {
    if (stats_.in_use + stats_.cached <= target) break;
    source_.give_back(it->second, it->first.second);
    stats_.cached -= it->first.second;
    free_.erase(it);
  }
}

void CachingAllocator::set_limit(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.limit = bytes;
  trim_cache_to(bytes);
}

void CachingAllocator::release_cached() {
  std::lock_guard<std::mutex> lock(mu_);
  trim_cache_to(0);
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::string CachingAllocator::usage() const {
  return str_cat(stats_.in_use, " bytes in use, ", stats_.cached, " cached");
}

}  // namespace maxc::cuda

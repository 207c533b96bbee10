// The caching allocator's policy against a fake memory source: size classes, reuse per
// stream, the memory limit, giving the cache back under pressure, and what it refuses.
#include "driver/cuda/caching_allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include "driver/test_util.h"

namespace maxc::testing {
namespace {

using cuda::AllocatorStats;
using cuda::CachingAllocator;
using cuda::StreamKey;

class FakeSource : public cuda::MemorySource {
 public:
  void* obtain(size_t bytes) override {
    if (bytes > capacity - live_bytes) return nullptr;
    void* p = std::malloc(bytes);
    live[p] = bytes;
    live_bytes += bytes;
    ++obtains;
    return p;
  }
  void give_back(void* p, size_t bytes) noexcept override {
    EXPECT_EQ(live.at(p), bytes) << "given back with another size than obtained";
    live_bytes -= bytes;
    live.erase(p);
    std::free(p);
    ++give_backs;
  }
  void quiesce() noexcept override { ++quiesces; }
  std::string describe() const override { return "fake memory"; }

  size_t capacity = SIZE_MAX;
  size_t live_bytes = 0;
  std::map<void*, size_t> live;
  int obtains = 0, give_backs = 0, quiesces = 0;
};

TEST(CachingAllocator, SizeClassesAre512BytesThenAQuarterApart) {
  EXPECT_EQ(CachingAllocator::round_size(0), 512u);
  EXPECT_EQ(CachingAllocator::round_size(1), 512u);
  EXPECT_EQ(CachingAllocator::round_size(512), 512u);
  EXPECT_EQ(CachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(CachingAllocator::round_size(4096), 4096u);
  EXPECT_EQ(CachingAllocator::round_size(4097), 5120u);
  EXPECT_EQ(CachingAllocator::round_size((size_t{1} << 30) + 1), (size_t{1} << 30) + (size_t{1} << 28));
  for (size_t bytes = 1; bytes < (size_t{1} << 26); bytes = bytes * 3 / 2 + 7) {
    const size_t r = CachingAllocator::round_size(bytes);
    ASSERT_GE(r, bytes);
    ASSERT_LE(r, bytes + std::max<size_t>(511, bytes / 4)) << bytes;
    ASSERT_EQ(CachingAllocator::round_size(r), r) << "a class rounds to itself";
  }
  EXPECT_MAXC_ERROR(CachingAllocator::round_size(SIZE_MAX - 3), Code::kResourceExhausted, "too large");
}

TEST(CachingAllocator, ReusesFreedBlocksOfTheSameStream) {
  FakeSource src;
  CachingAllocator a(src);
  void* p = a.allocate(3000);
  a.deallocate(p);
  EXPECT_EQ(a.allocate(2800), p);  // same class (3072)
  EXPECT_EQ(src.obtains, 1);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.in_use, 3072u);
  EXPECT_EQ(s.cached, 0u);
  EXPECT_EQ(s.reused, 1u);
  EXPECT_EQ(s.obtained, 1u);
  a.deallocate(p);
}

TEST(CachingAllocator, ABlockServesRequestsDownToHalfItsSize) {
  FakeSource src;
  CachingAllocator a(src);
  void* big = a.allocate(8192);
  a.deallocate(big);
  EXPECT_EQ(a.allocate(4096), big);
  a.deallocate(big);
  void* small = a.allocate(2048);  // 8192 would waste more than half
  EXPECT_NE(small, big);
  EXPECT_EQ(src.obtains, 2);
  a.deallocate(small);
}

TEST(CachingAllocator, StreamsDoNotShareCachedBlocks) {
  FakeSource src;
  CachingAllocator a(src);
  int s1 = 0, s2 = 0;
  const StreamKey k1 = &s1, k2 = &s2;
  void* p = a.allocate(1024, k1);
  a.deallocate(p);
  void* q = a.allocate(1024, k2);  // work on k1 may still be using p
  EXPECT_NE(p, q);
  EXPECT_EQ(a.allocate(1024, k1), p);
  a.deallocate(p);
  a.deallocate(q);
}

TEST(CachingAllocator, LimitCountsLiveMemory) {
  FakeSource src;
  CachingAllocator a(src, 4096);
  void* p = a.allocate(3000);
  EXPECT_MAXC_ERROR(a.allocate(2000), Code::kResourceExhausted, "allocating 2000 bytes on fake memory",
                    "memory limit of 4096 bytes", "3072 bytes in use");
  EXPECT_MAXC_ERROR(a.allocate(5000), Code::kResourceExhausted, "memory limit of 4096 bytes");
  a.deallocate(p);
  EXPECT_EQ(src.obtains, 1);
}

TEST(CachingAllocator, CacheGivesWayUnderTheLimit) {
  FakeSource src;
  CachingAllocator a(src, 8192);
  void* p = a.allocate(6000);  // 6144
  a.deallocate(p);
  void* q = a.allocate(2500);  // under half of p's block: fresh memory, for which p's must go
  EXPECT_EQ(src.give_backs, 1);
  EXPECT_GE(src.quiesces, 1);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.cached, 0u);
  EXPECT_EQ(s.in_use, 2560u);
  a.deallocate(q);
}

TEST(CachingAllocator, OutOfMemoryRetriesAfterGivingTheCacheBack) {
  FakeSource src;
  src.capacity = 8192;
  CachingAllocator a(src);
  void* p = a.allocate(6000);
  a.deallocate(p);
  void* q = a.allocate(2500);  // the source is full of our cache: it goes back, then this fits
  EXPECT_EQ(src.give_backs, 1);
  a.deallocate(q);
  void* r = a.allocate(1500);
  EXPECT_MAXC_ERROR(a.allocate(8000), Code::kResourceExhausted, "out of memory on fake memory allocating 8000 bytes");
  a.deallocate(r);
}

TEST(CachingAllocator, LoweringTheLimitTrimsTheCache) {
  FakeSource src;
  CachingAllocator a(src);
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(a.allocate(4096));
  for (void* p : blocks) a.deallocate(p);
  EXPECT_EQ(a.stats().cached, 4u * 4096);
  a.set_limit(8192);
  EXPECT_EQ(a.stats().cached, 8192u);
  EXPECT_EQ(a.stats().limit, 8192u);
  a.release_cached();
  EXPECT_EQ(a.stats().cached, 0u);
  EXPECT_TRUE(src.live.empty());
}

TEST(CachingAllocator, ZeroBytesStillGivesDistinctBlocks) {
  FakeSource src;
  CachingAllocator a(src);
  void* p = a.allocate(0);
  void* q = a.allocate(0);
  EXPECT_NE(p, nullptr);
  EXPECT_NE(p, q);
  a.deallocate(p);
  a.deallocate(q);
}

TEST(CachingAllocator, UnknownPointersAndNullAreIgnored) {
  FakeSource src;
  CachingAllocator a(src);
  int not_ours = 0;
  a.deallocate(nullptr);
  a.deallocate(&not_ours);  // logged, never thrown: this runs in destructors
  EXPECT_EQ(a.stats().cached, 0u);
  void* p = a.allocate(100);
  a.deallocate(p);
  EXPECT_EQ(a.stats().cached, 512u);
}

TEST(CachingAllocator, PeakIsTracked) {
  FakeSource src;
  CachingAllocator a(src);
  void* p = a.allocate(10000);
  void* q = a.allocate(10000);
  a.deallocate(p);
  a.deallocate(q);
  EXPECT_EQ(a.stats().peak_in_use, 2 * CachingAllocator::round_size(10000));
  EXPECT_EQ(a.stats().in_use, 0u);
}

TEST(CachingAllocator, DestructionGivesTheCacheBack) {
  FakeSource src;
  {
    CachingAllocator a(src);
    a.deallocate(a.allocate(700));
    a.deallocate(a.allocate(70000));
  }
  EXPECT_TRUE(src.live.empty());
  EXPECT_EQ(src.give_backs, 2);
}

}  // namespace
}  // namespace maxc::testing

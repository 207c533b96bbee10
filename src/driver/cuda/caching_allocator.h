// A caching allocator over one kind of raw memory (device memory, pinned host memory).
// Raw allocation is slow on GPUs (cuMemAlloc synchronizes and takes locks in the driver), so
// freed blocks are kept and handed out again, and a memory limit (MAX's
// device_memory_limit) caps what the process takes from the device.
//
// Sizes round up to classes (multiples of 512 bytes up to 2 KiB, then at most 25% apart), so
// a freed block fits later requests of about its size, and a cached block serves any request
// of at least half its size.
// Blocks are tied to the stream they were allocated for: work queued on that stream may
// still use a freed block, and only later work on the same stream is ordered after it, so a
// cached block is reused for that stream alone. Handing memory to another stream needs the
// caller's event; giving it back to the source first waits for the device (quiesce).
//
// Backend-neutral: the memory comes from a MemorySource, so the caching and limit logic is
// tested against a fake one without a GPU (tests/gpu/caching_allocator_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace maxc::cuda {

class MemorySource {
 public:
  virtual ~MemorySource() = default;
  // `bytes` of fresh memory, or nullptr when the source is out of memory. Other failures throw.
  virtual void* obtain(size_t bytes) = 0;
  // Returns what obtain gave, with the size it was obtained with. Must not throw.
  virtual void give_back(void* p, size_t bytes) noexcept = 0;
  // Waits until no queued work may still touch a cached block; called once before a batch
  // of give_backs.
  virtual void quiesce() noexcept {}
  // The memory's owner for messages: "cuda:0 (NVIDIA H100)".
  virtual std::string describe() const = 0;
};

// The stream a block is used on; nullptr is the default stream (and all of host memory).
using StreamKey = const void*;

struct AllocatorStats {
  size_t in_use = 0;       // bytes of live blocks, as rounded
  size_t cached = 0;       // bytes of freed blocks kept for reuse
  size_t peak_in_use = 0;
  size_t limit = 0;
  uint64_t obtained = 0;   // blocks taken from the source
  uint64_t reused = 0;     // allocations served from the cache
};

class CachingAllocator {
 public:
  static constexpr size_t kUnlimited = SIZE_MAX;

  explicit CachingAllocator(MemorySource& source, size_t limit = kUnlimited);
  ~CachingAllocator();  // gives the cache back; live blocks stay with whoever holds them
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `bytes` (never null, even for 0 bytes). Throws RESOURCE_EXHAUSTED
  // naming the memory, the request, the limit and what is in use.
  void* allocate(size_t bytes, StreamKey stream = nullptr);
  // Back into the cache. Null is ignored; a pointer this allocator did not give is logged
  // and ignored (this runs in destructors, so it cannot throw).
  void deallocate(void* p) noexcept;

  // A new limit; cached blocks are given back until in_use + cached fits under it. Live
  // memory above it stays: later allocations fail until enough is freed.
  void set_limit(size_t bytes);
  // Gives every cached block back to the source.
  void release_cached();
  AllocatorStats stats() const;

  // The size class of a request: 512 bytes at least, then steps of a quarter of the largest
  // power of two below it (512 bytes at least). Throws RESOURCE_EXHAUSTED when rounding overflows.
  static size_t round_size(size_t bytes);

 private:
  struct Block {
    size_t size;
    StreamKey stream;
  };
  using FreeKey = std::pair<StreamKey, size_t>;

  void* take_cached(size_t rounded, StreamKey stream);
  void* obtain_fresh(size_t bytes, size_t rounded, StreamKey stream);
  void trim_cache_to(size_t target);  // gives back cached blocks, largest first
  std::string usage() const;

  MemorySource& source_;
  mutable std::mutex mu_;
  std::multimap<FreeKey, void*> free_;
  std::unordered_map<void*, Block> live_;
  AllocatorStats stats_;
};

}  // namespace maxc::cuda

// A host emulator of the CUDA execution model, so the kernel sources of kernels/cuda run on
// the CPU in unit tests and their numerics are checked on machines without a GPU.
//
// Included before a kernels/cuda/*.cu file, this header makes the file compile with the host
// C++ compiler as the device code NVRTC sees: it defines MAXC_EMULATED, which puts
// common/platform.cuh on its CUDA branch, and supplies what NVRTC would: the function and
// variable qualifiers, threadIdx / blockIdx / blockDim / gridDim / warpSize, __syncthreads,
// the warp shuffles, votes and atomics, the bit-cast intrinsics and the float math functions.
// The kernels then run unchanged:
//
//   - every thread of a block is a fiber (ucontext) on the calling OS thread, and runs until
//     it blocks at a barrier or returns; then another ready lane of its warp runs, or, when
//     the warp has none, the next warp (Block::next_ready says why in that order). Nothing
//     runs concurrently, so a run is deterministic and repeatable;
//   - __syncthreads() is a barrier of the whole block, and every warp-level operation
//     (shuffle, vote, __syncwarp) a barrier of the warp where each lane posts its value and
//     then reads its partner's;
//   - a thread that has returned counts as arrived at every later barrier (what the hardware
//     does for exited threads), so `if (out of range) return;` before a barrier works;
//   - blocks run one after another, in x, y, z order.
//
// Running each thread up to its next barrier is adversarial in a useful way: a missing
// __syncthreads usually shows as a wrong result, because a warp races all the way to the
// next barrier before the others start (removing any one barrier of matmul.cu,
// transpose.cu or block_reduce.cuh fails their tests). What the emulator turns into a test failure (a
// std::runtime_error from emulate_launch, whose message says which threads of which block):
//   - deadlock: no thread can go on, e.g. some threads at __syncthreads while others of their
//     warp wait at a shuffle, or a barrier that only part of a warp reaches;
//   - a shuffle that reads a lane that has returned or does not exist (a block that is not a
//     whole number of warps), and a shuffle mask that leaves out a live lane;
//   - a launch configuration CUDA would refuse (more than 1024 threads in a block, ...).
// What it cannot see: races between blocks (blocks never overlap), memory-model effects
// (all memory is coherent), and the timing of anything. Stack overflow in a fiber hits a
// guard page: a crash, not a corruption.
//
// How to test a new kernel (a test file per kernel source, tests/gpu_emu/<name>_test.cc):
//
//   #include "gpu_emu/cuda_emulator.h"   // first: the .cu below must see MAXC_EMULATED
//   #include "kernels/cuda/softmax.cu"
//   #include "gpu_emu/emu_test_util.h"   // seeded data, dtype tolerances, comparisons
//
//   std::vector<float> x = ..., y(x.size());
//   emulate_launch(dim3(2), dim3(256), maxc::gpu::softmax_rows<float, false>, x.data(),
//                  y.data(), rows, cols);
//   // compare y with the CPU kernel (kernels/cpu) or a plain reference, in the test
//
// emulate_launch takes the kernel's template instance directly (the same one the catalog
// names) and converts the arguments to its parameters, as a launch does; pass them in the
// order the lowering (src/engine/lower_gpu) packs them. "Device memory" is host memory: pass
// vector data. gpu_emu/cpu_reference.h reaches the CPU's casts and elementwise ops from the
// GPU's storage types. Use small grids (kernels are grid-stride, and one block
// running several rows is itself worth testing) and shapes that hit the edges: rows longer
// than the block, sizes that are not a multiple of the warp or the tile. Each thread switch
// costs about a microsecond (a few under the sanitizers), so keep a test's blocks x barriers
// x threads in the hundreds of thousands at most.
//
// Not emulated: dynamic shared memory (extern __shared__), shuffles or votes on part of a
// warp (a mask other than every live lane), cooperative groups, clusters, textures, and
// concurrent blocks (a kernel that waits for another block spins forever). Several test
// files may include the same .cu while its functions are templates or __forceinline__, as
// all are today; a plain __device__ function or variable would be defined twice.
//
// Shared memory: __shared__ is `static`. Blocks run one at a time, so the one static copy a
// variable has is the block's, and every thread of the block (every fiber) sees the same one,
// which is what shared memory is. Like shared memory it is not cleared between blocks, and,
// as with NVRTC, each template instance has its own.
#ifndef MAXC_TESTS_GPU_EMU_CUDA_EMULATOR_H
#define MAXC_TESTS_GPU_EMU_CUDA_EMULATOR_H

#include <math.h>  // the global ::expf and friends that common/math.cuh calls, as on the device
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define MAXC_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MAXC_EMU_ASAN 1
#endif
#endif
#if defined(MAXC_EMU_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(MAXC_GPU_PLATFORM_CUH) && !defined(MAXC_EMULATED)
#error "include gpu_emu/cuda_emulator.h before any kernels/cuda header: they must see MAXC_EMULATED"
#endif
#define MAXC_EMULATED 1

// ---- qualifiers ------------------------------------------------------------------------------
// Kernels and device functions become ordinary inline functions (a kernel source included in
// one test file has no other definition to clash with; inline keeps templates and helpers
// from clashing across files that include common/*.cuh).
#define __global__ inline
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __constant__ static
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// __restrict__ is a keyword of g++ and clang already.

// ---- the built-in variables ------------------------------------------------------------------

struct uint3 {
  unsigned x, y, z;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr unsigned count() const { return x * y * z; }
};

// The running thread's coordinates. The scheduler rewrites them at every switch between
// fibers, so kernel code reads its own thread's, exactly like the hardware registers.
inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;
inline constexpr int warpSize = 32;

namespace maxc::gpu_emu {

// ---- the scheduler ---------------------------------------------------------------------------
namespace detail {

constexpr int kMaxThreadsPerBlock = 1024;
constexpr std::size_t kSlotBytes = 16;  // the largest value one lane can shuffle
// A fiber's stack: the kernels' frames are small, but a sanitizer's report runs on it too.
#if defined(MAXC_EMU_ASAN)
constexpr std::size_t kStackBytes = 128 * 1024;
#else
constexpr std::size_t kStackBytes = 64 * 1024;
#endif

[[noreturn]] inline void die(const char* what) {
  std::fprintf(stderr, "cuda emulator: %s\n", what);
  std::abort();
}

// A stack with an inaccessible page below it, so an overflow faults instead of silently
// writing over the neighbouring fiber's stack.
class Stack {
 public:
  Stack() {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    mapping_ = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
    if (mapping_ == MAP_FAILED) die("cannot map a fiber stack");
    if (mprotect(mapping_, page, PROT_NONE) != 0) die("cannot protect a fiber stack's guard page");
    bottom_ = static_cast<char*>(mapping_) + page;
  }
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
  ~Stack() { munmap(mapping_, kStackBytes + static_cast<std::size_t>(sysconf(_SC_PAGESIZE))); }
  void* bottom() const { return bottom_; }

 private:
  void* mapping_;
  void* bottom_;
};

// A place execution can switch to and from: a fiber or the launching (main) context. The
// stack bounds are AddressSanitizer's business: it must be told which stack is live.
struct Context {
  ucontext_t uc;
  const void* stack_bottom = nullptr;
  std::size_t stack_size = 0;
  void* asan_fake_stack = nullptr;
};

enum class ThreadState : std::uint8_t { kReady, kAtSyncthreads, kAtWarpSync, kExited };

struct Thread {
  Context context;
  uint3 index;
  int linear;
  ThreadState state;
};

// One warp's barrier and the slots its lanes exchange values through. Two sets of slots,
// alternating by generation: a lane can post to the next set as soon as it leaves a barrier
// while slower lanes still read the previous set, and it cannot get two sets ahead because
// the next barrier waits for every lane. So each exchange costs one barrier, not two.
struct Warp {
  int lanes = 0;             // lanes that exist: fewer than 32 in the last warp of a ragged block
  unsigned live_mask = 0;    // the lanes that exist
  int arrived = 0, exited = 0;
  unsigned generation = 0;
  unsigned posted[2] = {0, 0};  // per set: which lanes wrote a value this generation
  alignas(16) unsigned char slots[2][32][kSlotBytes];
};

// What one lane got back from an exchange: the slots of the generation it took part in.
struct Exchange {
  const Warp* warp;
  int set;
  int lane;
};


// Thrown by a fiber that ends its launch, and caught where the fiber began.
struct LaunchFailed {};

class Block;
inline thread_local Block* current_block = nullptr;

// Runs one block's threads to completion.
class Block {
 public:
  Block(dim3 dim, const std::function<void()>& body, std::vector<std::unique_ptr<Stack>>& stacks);
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  // Runs every thread to its end; returns why it could not, empty on success.
  std::string run();

  void syncthreads();
  // Posts `size` bytes of the calling lane and waits for the rest of its warp.
  Exchange exchange(unsigned mask, const void* value, std::size_t size, const char* what);
  // The bytes `lane` posted to the exchange `ex`; a lane that took no part fails the launch.
  const unsigned char* posted(const Exchange& ex, int lane, const char* what);
  // Ends the launch: the calling fiber unwinds its stack (so nothing it allocated leaks),
  // the others stay suspended where they are, and run() returns `message`.
  [[noreturn]] void fail(std::string message);

 private:
  static void prepare_fiber(Context& c, Stack& stack);
  static void fiber_entry();
  void switch_to(Thread* to, bool leaving_for_good);
  void suspend();
  void finish_running_thread();
  void release_block();
  void release_warp(Warp& warp);
  void release_completed_barriers(Warp& warp);
  Thread* next_ready() const;
  Warp& warp_of(const Thread& t) { return warps_[t.linear / warpSize]; }
  std::string where() const;
  std::string describe_deadlock() const;

  const std::function<void()>& body_;
  std::vector<Thread> threads_;
  std::vector<Warp> warps_;
  Context main_;
  Thread* running_ = nullptr;  // null while the launching context runs
  bool entered_from_main_ = false;
  int arrived_ = 0, exited_ = 0;
  std::string error_;
};

inline Block& block_or_die() {
  if (!current_block) die("a device function was called outside emulate_launch");
  return *current_block;
}

inline Block::Block(dim3 dim, const std::function<void()>& body, std::vector<std::unique_ptr<Stack>>& stacks)
    : body_(body), threads_(dim.count()), warps_((dim.count() + warpSize - 1) / warpSize) {
  const unsigned n = dim.count();
  while (stacks.size() < n) stacks.push_back(std::make_unique<Stack>());
  for (unsigned t = 0; t < n; ++t) {
    Thread& th = threads_[t];
    th.linear = static_cast<int>(t);
    th.index = {t % dim.x, (t / dim.x) % dim.y, t / (dim.x * dim.y)};
    th.state = ThreadState::kReady;
    prepare_fiber(th.context, *stacks[t]);
    Warp& w = warp_of(th);
    ++w.lanes;
    w.live_mask |= 1u << (t % warpSize);
  }
}

// A context that starts in fiber_entry on `stack` when first switched to.
inline void Block::prepare_fiber(Context& c, Stack& stack) {
  c.stack_bottom = stack.bottom();
  c.stack_size = kStackBytes;
#if defined(MAXC_EMU_ASAN)
  // The previous block's fibers never left their entry frames, whose redzones are still
  // poisoned.
  ASAN_UNPOISON_MEMORY_REGION(stack.bottom(), kStackBytes);
#endif
  if (getcontext(&c.uc) != 0) die("getcontext failed");
  c.uc.uc_stack.ss_sp = stack.bottom();
  c.uc.uc_stack.ss_size = kStackBytes;
  c.uc.uc_link = nullptr;  // fiber_entry never returns
  makecontext(&c.uc, &Block::fiber_entry, 0);
}

inline std::string Block::run() {
  Block* const enclosing = current_block;
  current_block = this;
  switch_to(&threads_[0], false);
  current_block = enclosing;
  return error_;
}

// Every switch goes through here: it points the built-in threadIdx at the thread that
// resumes, and tells AddressSanitizer which stack becomes live (and, when a fiber leaves for
// good, that it may drop the fiber's fake stack).
inline void Block::switch_to(Thread* to, bool leaving_for_good) {
  Context& from = running_ ? running_->context : main_;
  Context& dest = to ? to->context : main_;
  entered_from_main_ = running_ == nullptr;
  running_ = to;
  if (to) threadIdx = to->index;
#if defined(MAXC_EMU_ASAN)
  __sanitizer_start_switch_fiber(leaving_for_good ? nullptr : &from.asan_fake_stack, dest.stack_bottom,
                                 dest.stack_size);
#endif
  (void)leaving_for_good;
  // Other threads run during the switch and write shared memory, which the compiler cannot
  // see: to it a __shared__ variable is a static whose address may never escape, so it could
  // keep the variable in a register across a __syncthreads. The fence says that any memory
  // may change here, as __syncthreads says to the device compiler.
  asm volatile("" ::: "memory");
  if (swapcontext(&from.uc, &dest.uc) != 0) die("swapcontext failed");
  asm volatile("" ::: "memory");
#if defined(MAXC_EMU_ASAN)
  __sanitizer_finish_switch_fiber(from.asan_fake_stack, nullptr, nullptr);
#endif
}

inline void Block::fiber_entry() {
  Block& block = *current_block;
#if defined(MAXC_EMU_ASAN)
  const void* from_bottom = nullptr;
  std::size_t from_size = 0;
  __sanitizer_finish_switch_fiber(nullptr, &from_bottom, &from_size);
  // The launching context's stack is known only from inside the first fiber it enters.
  if (block.entered_from_main_) {
    block.main_.stack_bottom = from_bottom;
    block.main_.stack_size = from_size;
  }
#endif
  try {
    block.body_();
  } catch (const LaunchFailed&) {
    // error_ says why
  } catch (const std::exception& e) {
    block.error_ = std::string("a thread threw: ") + e.what() + block.where();
  } catch (...) {
    block.error_ = "a thread threw" + block.where();
  }
  if (!block.error_.empty()) block.switch_to(nullptr, true);
  block.finish_running_thread();
}

// The thread to run next, null when none is ready: another lane of the running thread's warp
// (after it, cyclically) while one is ready, else the first ready thread of the warps after
// it. Warps run as units, as on the hardware: a warp goes on until every lane of it waits,
// so one warp gets a whole phase ahead of the others, which is what exposes a missing
// barrier. (The last thread to reach a __syncthreads goes on first, so the last warp leads
// each phase and warp 0 comes next: a race in either direction shows.)
inline Thread* Block::next_ready() const {
  const int n = static_cast<int>(threads_.size());
  const int current = running_->linear, first = current / warpSize * warpSize;
  const int lanes = warps_[current / warpSize].lanes;
  for (int i = 1; i <= lanes; ++i) {
    const Thread& t = threads_[first + (current - first + i) % lanes];
    if (t.state == ThreadState::kReady) return const_cast<Thread*>(&t);
  }
  for (int i = 0; i < n; ++i) {
    const Thread& t = threads_[(first + lanes + i) % n];
    if (t.state == ThreadState::kReady) return const_cast<Thread*>(&t);
  }
  return nullptr;
}

// The running thread waits: the next ready one runs, or, when none is left, the launching
// context resumes, either because every thread is done or because nothing can move.
inline void Block::suspend() {
  Thread* next = next_ready();
  if (!next && exited_ != static_cast<int>(threads_.size())) error_ = describe_deadlock();
  switch_to(next, false);
  if (!error_.empty()) die("a fiber resumed after its launch failed");
}

inline void Block::finish_running_thread() {
  Thread& self = *running_;
  self.state = ThreadState::kExited;
  ++exited_;
  Warp& w = warp_of(self);
  ++w.exited;
  release_completed_barriers(w);
  Thread* next = next_ready();
  if (!next && exited_ != static_cast<int>(threads_.size())) error_ = describe_deadlock();
  switch_to(next, true);
  die("a finished fiber was resumed");
}

// A thread that returns may be the last one a barrier was waiting for.
inline void Block::release_completed_barriers(Warp& w) {
  if (arrived_ > 0 && arrived_ + exited_ == static_cast<int>(threads_.size())) release_block();
  if (w.arrived > 0 && w.arrived + w.exited == w.lanes) release_warp(w);
}

inline void Block::syncthreads() {
  running_->state = ThreadState::kAtSyncthreads;
  if (++arrived_ + exited_ == static_cast<int>(threads_.size())) {
    release_block();  // the last to arrive goes straight on
  } else {
    suspend();
  }
}

inline void Block::release_block() {
  for (Thread& t : threads_)
    if (t.state == ThreadState::kAtSyncthreads) t.state = ThreadState::kReady;
  arrived_ = 0;
}

inline Exchange Block::exchange(unsigned mask, const void* value, std::size_t size, const char* what) {
  Thread& self = *running_;
  Warp& w = warp_of(self);
  const int lane = self.linear % warpSize;
  if ((mask & w.live_mask) != w.live_mask)
    fail(std::string(what) + " with mask " + std::to_string(mask) + " leaves out live lanes of warp " +
         std::to_string(self.linear / warpSize) + " (partial-warp operations are not emulated)" + where());
  const int set = static_cast<int>(w.generation & 1u);
  std::memcpy(w.slots[set][lane], value, size);
  w.posted[set] |= 1u << lane;
  self.state = ThreadState::kAtWarpSync;
  if (++w.arrived + w.exited == w.lanes) {
    release_warp(w);
  } else {
    suspend();
  }
  return {&w, set, lane};
}

inline void Block::release_warp(Warp& w) {
  const int first = static_cast<int>(&w - warps_.data()) * warpSize;
  for (int i = 0; i < w.lanes; ++i)
    if (threads_[first + i].state == ThreadState::kAtWarpSync) threads_[first + i].state = ThreadState::kReady;
  w.arrived = 0;
  ++w.generation;
  // Every live lane has left the previous generation's slots behind: they are the next ones.
  w.posted[w.generation & 1u] = 0;
}

inline const unsigned char* Block::posted(const Exchange& ex, int lane, const char* what) {
  if (!(ex.warp->posted[ex.set] & (1u << lane))) {
    const bool exists = lane < ex.warp->lanes;
    fail(std::string(what) + ": lane " + std::to_string(ex.lane) + " reads lane " + std::to_string(lane) +
         (exists ? ", which has returned" : ", which does not exist (the block is not a whole number of warps)") +
         where());
  }
  return ex.warp->slots[ex.set][lane];
}

inline void Block::fail(std::string message) {
  error_ = std::move(message);
  throw LaunchFailed();
}

inline std::string Block::where() const {
  std::string s = ", in thread (" + std::to_string(threadIdx.x) + "," + std::to_string(threadIdx.y) + "," +
                  std::to_string(threadIdx.z) + ")";
  return s + " of block (" + std::to_string(blockIdx.x) + "," + std::to_string(blockIdx.y) + "," +
         std::to_string(blockIdx.z) + ")";
}

// Which threads wait where, as ranges of linear thread ids: enough to see which barrier
// part of the block never reached.
inline std::string Block::describe_deadlock() const {
  static const char* const kNames[] = {"ready", "at __syncthreads", "at a warp operation", "returned"};
  std::string s = "deadlock in block (" + std::to_string(blockIdx.x) + "," + std::to_string(blockIdx.y) + "," +
                  std::to_string(blockIdx.z) + "): threads";
  const int n = static_cast<int>(threads_.size());
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && threads_[j + 1].state == threads_[i].state) ++j;
    s += " " + std::to_string(i) + (j > i ? "-" + std::to_string(j) : "") + " " +
         kNames[static_cast<int>(threads_[i].state)] + ";";
    i = j + 1;
  }
  return s;
}

// The stacks of this OS thread's fibers, kept from launch to launch.
inline std::vector<std::unique_ptr<Stack>>& stacks() {
  static thread_local std::vector<std::unique_ptr<Stack>> pool;
  return pool;
}

inline void check_geometry(dim3 grid, dim3 block) {
  const auto bad = [&](const char* why) {
    throw std::invalid_argument(std::string("emulate_launch: ") + why + " (grid " + std::to_string(grid.x) + "," +
                                std::to_string(grid.y) + "," + std::to_string(grid.z) + ", block " +
                                std::to_string(block.x) + "," + std::to_string(block.y) + "," +
                                std::to_string(block.z) + ")");
  };
  if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z) bad("an empty grid or block");
  if (grid.y > 65535 || grid.z > 65535) bad("grid y and z are at most 65535");
  if (block.z > 64) bad("block z is at most 64");
  if (static_cast<std::uint64_t>(block.x) * block.y * block.z > kMaxThreadsPerBlock) bad("more than 1024 threads");
}

inline void run_grid(dim3 grid, dim3 block, const std::function<void()>& body) {
  check_geometry(grid, block);
  if (current_block) throw std::logic_error("emulate_launch from device code (dynamic parallelism)");
  gridDim = grid;
  blockDim = block;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = {x, y, z};
        Block b(block, body, stacks());
        const std::string error = b.run();
        if (!error.empty()) throw std::runtime_error("cuda emulator: " + error);
      }
}

// CUDA's shuffle rule: lanes work in segments of `width`; a source outside the lane's own
// segment (a relative lane outside [0, width)) gives the lane its own value.
template <class T, class SourceOf>
T shuffle(unsigned mask, T value, int width, SourceOf source_of, const char* what) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kSlotBytes, "a shuffle moves a small plain value");
  if (width <= 0 || width > warpSize || (width & (width - 1)))
    block_or_die().fail(std::string(what) + ": width " + std::to_string(width) + " is not a power of 2 up to 32");
  Block& block = block_or_die();
  const Exchange ex = block.exchange(mask, &value, sizeof value, what);
  const int base = ex.lane & ~(width - 1);
  const int source = source_of(ex.lane - base);
  if (source < 0 || source >= width) return value;
  T result;
  std::memcpy(&result, block.posted(ex, base + source, what), sizeof result);
  return result;
}

// A warp vote: the bits of the lanes whose predicate holds, and of the lanes that voted
// (returned lanes do not).
struct Ballot {
  unsigned yes = 0, voters = 0;
};

inline Ballot vote(unsigned mask, int predicate, const char* what) {
  Block& block = block_or_die();
  const int p = predicate != 0;
  const Exchange ex = block.exchange(mask, &p, sizeof p, what);
  Ballot b;
  b.voters = ex.warp->posted[ex.set] & mask;
  for (int lane = 0; lane < warpSize; ++lane) {
    if (!(b.voters & (1u << lane))) continue;
    int q;
    std::memcpy(&q, ex.warp->slots[ex.set][lane], sizeof q);
    b.yes |= static_cast<unsigned>(q) << lane;
  }
  return b;
}

}  // namespace detail

// Runs `kernel` over `grid` x `block` threads, like kernel<<<grid, block>>>(args...) followed
// by a synchronize. The arguments are converted to the kernel's parameter types first, and
// every thread gets its own copy of them, as on the device (kernels may modify parameters).
// Throws std::runtime_error when the launch deadlocks or breaks a rule of warp operations,
// std::invalid_argument for a configuration CUDA refuses.
template <class... Params, class... Args>
void emulate_launch(dim3 grid, dim3 block, void (*kernel)(Params...), Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "emulate_launch: one argument per kernel parameter");
  const std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);
  detail::run_grid(grid, block, [&] { std::apply(kernel, params); });
}

}  // namespace maxc::gpu_emu

using maxc::gpu_emu::emulate_launch;

// ---- synchronization and warp operations -----------------------------------------------------

inline void __syncthreads() { maxc::gpu_emu::detail::block_or_die().syncthreads(); }

inline void __syncwarp(unsigned mask = 0xffffffffu) {
  const char nothing = 0;
  maxc::gpu_emu::detail::block_or_die().exchange(mask, &nothing, 0, "__syncwarp");
}

// Memory is coherent: fences order nothing that is not already ordered.
inline void __threadfence() {}
inline void __threadfence_block() {}

template <class T>
T __shfl_sync(unsigned mask, T value, int source_lane, int width = warpSize) {
  return maxc::gpu_emu::detail::shuffle(
      mask, value, width, [&](int) { return source_lane & (width - 1); }, "__shfl_sync");
}

template <class T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = warpSize) {
  return maxc::gpu_emu::detail::shuffle(
      mask, value, width, [&](int lane) { return lane ^ lane_mask; }, "__shfl_xor_sync");
}

template <class T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = warpSize) {
  return maxc::gpu_emu::detail::shuffle(
      mask, value, width, [&](int lane) { return lane + static_cast<int>(delta); }, "__shfl_down_sync");
}

template <class T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = warpSize) {
  return maxc::gpu_emu::detail::shuffle(
      mask, value, width, [&](int lane) { return lane - static_cast<int>(delta); }, "__shfl_up_sync");
}

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return maxc::gpu_emu::detail::vote(mask, predicate, "__ballot_sync").yes;
}
inline int __any_sync(unsigned mask, int predicate) {
  return maxc::gpu_emu::detail::vote(mask, predicate, "__any_sync").yes != 0;
}
inline int __all_sync(unsigned mask, int predicate) {
  const maxc::gpu_emu::detail::Ballot b = maxc::gpu_emu::detail::vote(mask, predicate, "__all_sync");
  return b.yes == b.voters;
}

// ---- atomics ---------------------------------------------------------------------------------
// Fibers never preempt one another, so a plain read-modify-write is atomic.

template <class T>
T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}
template <class T>
T atomicSub(T* address, T value) {
  const T old = *address;
  *address = old - value;
  return old;
}
template <class T>
T atomicMax(T* address, T value) {
  const T old = *address;
  if (value > old) *address = value;
  return old;
}
template <class T>
T atomicMin(T* address, T value) {
  const T old = *address;
  if (value < old) *address = value;
  return old;
}
template <class T>
T atomicExch(T* address, T value) {
  const T old = *address;
  *address = value;
  return old;
}
template <class T>
T atomicCAS(T* address, T compare, T value) {
  const T old = *address;
  if (old == compare) *address = value;
  return old;
}
template <class T>
T atomicOr(T* address, T value) {
  const T old = *address;
  *address = old | value;
  return old;
}
template <class T>
T atomicAnd(T* address, T value) {
  const T old = *address;
  *address = old & value;
  return old;
}

// ---- bit casts and integer intrinsics --------------------------------------------------------

namespace maxc::gpu_emu::detail {
template <class To, class From>
To bit_cast(From from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}
}  // namespace maxc::gpu_emu::detail

inline unsigned __float_as_uint(float x) { return maxc::gpu_emu::detail::bit_cast<unsigned>(x); }
inline int __float_as_int(float x) { return maxc::gpu_emu::detail::bit_cast<int>(x); }
inline float __uint_as_float(unsigned x) { return maxc::gpu_emu::detail::bit_cast<float>(x); }
inline float __int_as_float(int x) { return maxc::gpu_emu::detail::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return maxc::gpu_emu::detail::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return maxc::gpu_emu::detail::bit_cast<double>(x); }

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }

template <class T>
T __ldg(const T* address) {
  return *address;
}

// ---- math ------------------------------------------------------------------------------------
// The C functions (expf, erfcf, ...) come from the host's libm, which is at least as accurate
// as the device's. What follows are the device's own spellings. The fast intrinsics are
// exact here, so a test of a kernel that uses them needs the device's documented error bound
// as its tolerance, not this emulator's.

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }

// CUDA's global min and max (overloaded, not templates, so mixed arguments convert as there).
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

#endif  // MAXC_TESTS_GPU_EMU_CUDA_EMULATOR_H

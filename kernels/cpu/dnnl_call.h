// Calls of oneDNN primitives that keep their memory objects from one call to the next.
//
// oneDNN 2.6 makes every dnnl::memory on the heap (two aligned allocations), and
// primitive::execute copies its argument map into a vector: a convolution's 3-7 memories
// and its map, made on every call, were most of a small CNN's allocations per execute. A
// DnnlCalls keeps, per call site (one primitive call of a kernel: a shard, a reorder), sets
// of memory objects that later calls rebind to their own data. Calls of one site that
// overlap (concurrent executes of one plan) take separate sets, so a set never sees two
// threads at once; sets live as long as the kernel.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace maxc::cpu {

// One argument of a call: its DNNL_ARG_* id, its layout and its data.
struct DnnlArg {
  int id = 0;
  const dnnl::memory::desc* desc = nullptr;
  const void* data = nullptr;
};

class DnnlCalls {
 public:
  DnnlCalls();
  ~DnnlCalls();
  // Runs `primitive` with `args` on the calling thread's stream (dnnl_engine.h) and waits
  // for it. Sites are small numbers the kernel chooses. A site's calls always pass the same ids and layouts, in the same order. Safe to
  // call from several threads at once; throws dnnl::error as execute does.
  void run(size_t site, const dnnl::primitive& primitive, std::span<const DnnlArg> args) const;

 private:
  struct Set;
  std::unique_ptr<Set> take(size_t site) const;
  void give_back(size_t site, std::unique_ptr<Set> set) const;

  mutable std::mutex mu_;
  mutable std::vector<std::vector<std::unique_ptr<Set>>> free_;  // by site
};

}  // namespace maxc::cpu

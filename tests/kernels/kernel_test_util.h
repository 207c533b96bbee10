// What the kernel tests share: seeded random inputs, scratch aligned as the engine's arena
// aligns it, and a node lowered on its own.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/lowering.h"

namespace maxc::kernel_test {

// n floats uniform in [-scale, scale), the same for the same seed.
inline std::vector<float> random_floats(int64_t n, uint32_t seed, float scale = 2.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(gen);
  return v;
}

// A per-call scratch, 64-byte aligned like the engine's arena.
struct AlignedScratch {
  explicit AlignedScratch(uint64_t bytes)
      : raw(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64))) {}
  ~AlignedScratch() { std::free(raw); }
  AlignedScratch(const AlignedScratch&) = delete;
  AlignedScratch& operator=(const AlignedScratch&) = delete;
  void* get() { return raw; }
  char* raw;
};

// The CPU lowering of one `op` node whose inputs are values 0.. and outputs the values after.
inline Lowered lower_node(const std::string& op, Attrs attrs, std::vector<Shape> ins, std::vector<Shape> outs) {
  Node node;
  node.op = op;
  node.attrs = std::move(attrs);
  for (size_t i = 0; i < ins.size() + outs.size(); ++i)
    (i < ins.size() ? node.inputs : node.outputs).push_back(static_cast<ValueId>(i));
  std::vector<const Constant*> consts(ins.size(), nullptr);
  const LowerFn* fn = KernelTable::builtin().find(op);
  if (!fn) throw std::runtime_error("no lowering for " + op);
  LowerContext ctx{node, ins, outs, consts, [](ValueId) { return Shape{}; }, 1};
  return (*fn)(ctx);
}

}  // namespace maxc::kernel_test

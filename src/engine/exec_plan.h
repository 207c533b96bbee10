// An ExecPlan: a Program specialized for one set of concrete input shapes (DESIGN §4). Every
// node is lowered to a kernel, every value has a home (an input, a weight, a constant, an
// output tensor, or an offset in the arena), and `execute` only walks the steps.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "compiler/program.h"
#include "engine/lowering.h"

namespace maxc {

struct Home {
  enum class Kind : uint8_t { kInput, kWeight, kConstant, kOutput, kArena };
  Kind kind = Kind::kArena;
  uint32_t index = 0;   // input, weight, constant or output number
  uint64_t offset = 0;  // kArena: bytes into the arena
};

struct Step {
  Kernel run;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  int64_t scratch_offset = -1;  // bytes into the arena, or -1 for none
  std::string op;               // for logs and profiles
  int32_t packed_input = -1;    // this input reads ExecPlan::prepacks[packed_slot] instead
  uint32_t packed_slot = 0;
};

// A packed copy of weight `weight` that some step reads (see Prepack in lowering.h).
struct PrepackSlot {
  uint32_t weight = 0;
  std::string layout;
  uint64_t bytes = 0;
  std::function<void(const void*, void*)> pack;
};

// Arenas of one size, handed to concurrent calls; a call that finds none free makes one.
class ArenaPool {
 public:
  explicit ArenaPool(uint64_t bytes) : bytes_(bytes) {}
  std::shared_ptr<uint8_t> acquire();
  void release(std::shared_ptr<uint8_t> arena);

 private:
  uint64_t bytes_;
  std::mutex mu_;
  std::vector<std::shared_ptr<uint8_t>> free_;
};

struct ExecPlan {
  std::vector<Shape> shapes;  // by ValueId
  std::vector<Home> homes;    // by ValueId
  std::vector<Step> steps;
  std::vector<PrepackSlot> prepacks;
  // Output j is written in place by its producer when direct[j]; otherwise it is copied
  // from its value's home after the steps ran (an input, a weight, an alias, a repeat).
  std::vector<bool> direct_outputs;
  uint64_t arena_bytes = 0;
  uint64_t intermediate_bytes = 0;  // the sum of the arena's buffers, were none shared
  std::unique_ptr<ArenaPool> arenas;
};

// Symbol -> value, as fixed by the inputs of one call.
using SymbolValues = std::map<std::string, int64_t, std::less<>>;

// Builds the plan for `p` with the symbols bound to `symbols`. UNIMPLEMENTED when a node
// has no CPU kernel for its shapes and dtypes; INVALID_ARGUMENT when a value's dims come
// out negative for these symbols.
std::unique_ptr<ExecPlan> build_plan(const Program& p, const SymbolValues& symbols, int32_t num_threads);

}  // namespace maxc

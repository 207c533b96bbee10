// Batch loops: the early layers of a batched CNN, run a few batch items at a time.
//
// A ResNet's first stages at batch 8 make tensors of 13 to 26 MB ([8, 56, 56, 256] float32),
// larger than the L3 cache: every layer then streams its input, its residual and its output
// through DRAM, and its convolutions run bandwidth-bound. One image's [56, 56, 256] is 3.2 MB
// and stays in cache from one layer to the next. So the plan runs such a stretch of layers
// once per slice of the batch, each step's kernel specialized for the slice, and moves the
// step's pointers on by a slice's bytes each pass. Values made and used within the stretch
// live in one slice's buffer; the rest are whole and read or written a slice per pass.
// Measured on ResNet-50 at batch 8 (2-core AVX-512 VM): the stages at 56x56 and 28x28 took
// 1.3 to 1.8x the time per image that they take at batch 1.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/program.h"
#include "engine/lowering.h"

namespace maxc {

// Nodes [first, end) of a program, run batch / slice times, `slice` batch items at a time.
struct BatchLoop {
  size_t first = 0, end = 0;
  int64_t batch = 0;  // dim 0 of every batch operand of the nodes
  int64_t slice = 1;
  int64_t passes() const { return batch / slice; }
};

// A stretch is looped when one of its values has at least this many bytes for the whole
// batch (a quarter of a 32 MiB L3: below that, a layer's operands stay in cache anyway) ...
inline constexpr uint64_t kBatchLoopMinBytes = 8ull << 20;
// ... with as many items per slice as keep its largest value under this size.
inline constexpr uint64_t kBatchLoopSliceBytes = 4ull << 20;

// Which inputs of `node` a batch slice cuts (dim 0 of the batch), where the node computes
// each item of the batch on its own: convolutions and pools (input 0, and a fused residual),
// elementwise ops (inputs of the output's rank with dim 0 equal to the batch; broadcast
// inputs are read whole), and permutes that keep dim 0 in front. Empty when the node is not
// such a node, or not for `batch` (`shapes` by ValueId).
std::vector<bool> batch_cut_inputs(const Node& node, std::span<const Shape> shapes, int64_t batch);

// The stretches of host program `p` worth running as batch loops, for these concrete shapes:
// runs of at least two nodes that batch_cut_inputs accepts for one batch of 2 or more, cut
// after the last node whose outputs reach kBatchLoopMinBytes. In node order, disjoint.
std::vector<BatchLoop> find_batch_loops(const Program& p, std::span<const Shape> shapes);

// `s` with dim 0 made `slice` when s is a batch operand of a node whose output has rank
// `rank` (the rank, and dim 0 equal to `batch`); `s` itself otherwise.
Shape batch_slice_of(const Shape& s, size_t rank, int64_t batch, int64_t slice);

}  // namespace maxc

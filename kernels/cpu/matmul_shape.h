// The shape of one numpy matmul reduced to what a kernel needs: a list of batch dims (with
// broadcasting) over [M, K] @ [K, N] products of dense row-major operands.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace maxc::cpu {

struct MatmulDims {
  // Batch dims of the result and of each operand, of one length; an operand's dim is 1 where
  // it is broadcast. Collapsed: no dim of size 1 in the result, and neighbours that broadcast
  // alike are merged, so [2, 3, 4] @ [4, 5] is no batch at all and M = 6.
  std::vector<int64_t> out_batch, lhs_batch, rhs_batch;
  int64_t m = 0, k = 0, n = 0;
  // The rhs matrix is stored [N, K] and read as its transpose (float32 only, no rhs batch).
  bool rhs_transposed = false;

  int64_t batch_count() const;
  // Element offsets of batch `b` (row-major over out_batch) in each operand.
  int64_t lhs_offset(int64_t b) const;
  int64_t rhs_offset(int64_t b) const;
};

// The dims of numpy's matmul of operands shaped `lhs` and `rhs`: a 1-D lhs is [1, K] and a
// 1-D rhs is [K, 1]. INVALID_ARGUMENT when the inner dims or the batch dims do not match.
MatmulDims matmul_dims(std::span<const int64_t> lhs, std::span<const int64_t> rhs);

}  // namespace maxc::cpu

// The geometry of the line sort (kernels/cuda/sort.cu) that host code must agree on: which
// lines fit in shared memory, how long a line may be, and how much global scratch a block
// needs for a longer one. The header compiles on the host too, so the lowering sizes the
// scratch with the very numbers the kernel reads.
#ifndef MAXC_GPU_SORT_PARAMS_CUH
#define MAXC_GPU_SORT_PARAMS_CUH

#include "platform.cuh"

namespace maxc {
namespace gpu {

// Lines padded to at most this many elements sort in shared memory: 2048 (key, int32 index)
// pairs are 24 KiB with 8-byte keys, inside the 48 KiB of static shared memory a block has.
constexpr i64 kSortSharedLength = 2048;
// Positions are int32 inside the kernel, and the padded line (a power of two) must keep the
// pair arithmetic of the network within it.
constexpr i64 kSortMaxLength = i64(1) << 30;

// The bitonic network sorts a power of two: n rounded up (1 for an empty line).
MAXC_HD i64 sort_padded_length(i64 n) {
  i64 p = 1;
  while (p < n) p <<= 1;
  return p;
}

// The global scratch of one block for a padded line that does not fit in shared memory:
// the keys, then the int32 positions (keys are 4 or 8 bytes and the padded length is a power
// of two above kSortSharedLength, so the positions start aligned).
MAXC_HD i64 sort_block_scratch_bytes(i64 padded, i64 key_bytes) {
  return padded <= kSortSharedLength ? 0 : padded * (key_bytes + static_cast<i64>(sizeof(i32)));
}

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_SORT_PARAMS_CUH

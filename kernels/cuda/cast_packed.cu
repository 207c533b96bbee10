// cast_packed: a cast to or from a sub-byte dtype (float4_e2m1fn, uint2, int2, uint4, int4;
// common/packed.cuh), or between two of them, with the CPU's meaning and bits (kernels/cpu/
// cast_minifloat.h for float4, cast_packed_int.h once a packed integer is involved). x is
// dense; numel counts elements. A packed Out is written a whole byte per thread, from the 2
// or 4 elements it holds, so no two threads share a byte and a last partial byte gets 0 in
// its unused high bits; otherwise a thread writes one element, reading its field of x.
// saturate (nonzero or 0): the cast's attribute, for a float8 Out (float4 always saturates).
#include "common/cast.cuh"
#include "common/launch.cuh"
#include "common/packed.cuh"

namespace maxc {
namespace gpu {

template <class In, class Out>
__global__ void cast_packed(const In* __restrict__ x, Out* __restrict__ y, i64 numel, i32 saturate) {
  typedef typename PackedCastCompute<In, Out>::type C;
  if constexpr (PackedFormat<Out>::value) {
    const i64 bytes = packed_bytes<Out>(numel);
    for (i64 b = first_index(); b < bytes; b += index_step()) y[b] = pack_byte<C, Out>(x, b, numel, saturate != 0);
  } else {
    for (i64 i = first_index(); i < numel; i += index_step())
      y[i] = store_cast<Out>(load_element<C>(x, i), saturate != 0);
  }
}

}  // namespace gpu
}  // namespace maxc

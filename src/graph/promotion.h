// The dtype that mixed-dtype elementwise ops compute in.
//
// MAX documents that binary ops promote mixed dtypes but not the table, so this is torch's
// rule restricted to MAX's dtypes (categories first, then width):
//   1. Equal dtypes stay.
//   2. Categories rank bool < integer < float; the higher category's dtype wins whatever its
//      width (bool + uint8 -> uint8, int64 + float16 -> float16).
//   3. Two signed or two unsigned integers: the wider.
//   4. Signed with unsigned: the narrowest signed integer that holds both ranges
//      (uint8 + int8 -> int16, uint32 + int32 -> int64, uint16 + int64 -> int64). uint64 with
//      a signed integer has none: an error, cast one side explicitly.
//   5. Two floats: the wider (float8_e4m3fn + bfloat16 -> bfloat16). Equal width, different
//      formats: the narrowest float that represents both exactly (float16 + bfloat16 ->
//      float32; two different float8 formats -> float16).
// Python scalars are weakly typed in MAX (x * 2 keeps x's dtype); that is the bindings' job:
// they make the constant in the tensor's dtype before calling the op.
#pragma once

#include <optional>
#include <vector>

#include "base/dtype.h"
#include "graph/op_schema.h"

namespace maxc {

// nullopt when no dtype holds both (uint64 with a signed integer) or one is invalid.
std::optional<DType> promote_types(DType a, DType b);

// The promotion of the inputs at `indices`; ctx.fail names the two inputs that have none.
DType promote_inputs(const InferContext& ctx, const std::vector<size_t>& indices);

}  // namespace maxc

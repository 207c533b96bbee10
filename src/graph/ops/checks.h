// Checks that many op families share. Each throws through ctx.fail, so every message starts
// with the op's name and names the input or attribute at fault.
#pragma once

#include <cstdint>
#include <string_view>

#include "graph/op_schema.h"

namespace maxc {

enum class DTypeClass {
  kAny,
  kBool,
  kInteger,  // signed or unsigned, not bool
  kFloat,
  kNumeric,  // integer or float
};

const char* dtype_class_name(DTypeClass c);  // "a float dtype", ...
bool dtype_in_class(DType d, DTypeClass c);

// "op 'exp': input 0 'x' must have a float dtype, got int32".
void require_dtype(const InferContext& ctx, size_t input, DTypeClass c);

// Every input must have the same dtype as input `first`.
void require_same_dtype(const InferContext& ctx, size_t first = 0);

// The device every input is on; names the first input on another one.
DeviceRef common_device(const InferContext& ctx);

// `axis` in [-rank, rank) made non-negative; `what` names it ("attribute 'axis'").
// Ops that insert an axis (unsqueeze, stack) pass rank + 1.
int64_t normalize_axis(const InferContext& ctx, int64_t axis, int64_t rank, std::string_view what = "attribute 'axis'");

}  // namespace maxc

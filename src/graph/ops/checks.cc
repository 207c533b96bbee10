#include "graph/ops/checks.h"

namespace maxc {

const char* dtype_class_name(DTypeClass c) {
  switch (c) {
    case DTypeClass::kAny: return "any dtype";
    case DTypeClass::kBool: return "a bool dtype";
    case DTypeClass::kInteger: return "an integer dtype";
    case DTypeClass::kFloat: return "a float dtype";
    case DTypeClass::kNumeric: return "a numeric (integer or float) dtype";
  }
  return "?";
}

bool dtype_in_class(DType d, DTypeClass c) {
  switch (c) {
    case DTypeClass::kAny: return dtype_is_valid(d);
    case DTypeClass::kBool: return dtype_is_bool(d);
    case DTypeClass::kInteger: return dtype_is_integral(d);
    case DTypeClass::kFloat: return dtype_is_float(d);
    case DTypeClass::kNumeric: return dtype_is_integral(d) || dtype_is_float(d);
  }
  return false;
}

void require_dtype(const InferContext& ctx, size_t input, DTypeClass c) {
  DType d = ctx.input(input).dtype;
  if (!dtype_in_class(d, c)) ctx.fail(ctx.input_label(input), " must have ", dtype_class_name(c), ", got ", dtype_name(d));
}

void require_same_dtype(const InferContext& ctx, size_t first) {
  DType want = ctx.input(first).dtype;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).dtype != want)
      ctx.fail(ctx.input_label(i), " has dtype ", dtype_name(ctx.input(i).dtype), " but ", ctx.input_label(first),
               " has ", dtype_name(want), "; they must match");
  }
}

DeviceRef common_device(const InferContext& ctx) {
  DeviceRef device = ctx.input(0).device;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).device != device)
      ctx.fail(ctx.input_label(i), " is on ", ctx.input(i).device.to_string(), " but ", ctx.input_label(0), " is on ",
               device.to_string(), "; move it with transfer_to first");
  }
  return device;
}

int64_t normalize_axis(const InferContext& ctx, int64_t axis, int64_t rank, std::string_view what) {
  if (rank == 0) ctx.fail(what, " is ", axis, " but the input has rank 0 (no axes)");
  if (axis < -rank || axis >= rank)
    ctx.fail(what, " is ", axis, ", out of range for rank ", rank, " (expected ", -rank, " to ", rank - 1, ")");
  return axis < 0 ? axis + rank : axis;
}

}  // namespace maxc

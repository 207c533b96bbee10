#include "onnx/order_key.h"

namespace maxc::onnx {
namespace {

bool kernels_take(DType dt) {
  return dt == DType::kFloat32 || dt == DType::kFloat64 || dtype_is_half(dt) || dt == DType::kInt32 ||
         dt == DType::kInt64;
}

// -2^63: added in int64, which wraps, it moves uint64's upper half (negative once cast)
// below the lower half. Adding it again undoes it.
ValueId top_bit(NodeContext& c) { return c.scalar(DType::kInt64, -9223372036854775808.0); }

}  // namespace

ValueId order_key(NodeContext& c, ValueId x) {
  const DType dt = c.type_of(x).dtype;
  if (kernels_take(dt)) return x;
  if (dt == DType::kUInt64) return c.op("add", {c.cast(x, DType::kInt64), top_bit(c)});
  if (dt == DType::kUInt32) return c.cast(x, DType::kInt64);
  if (dtype_is_float(dt)) return c.cast(x, DType::kFloat32);  // float8 and float4 widen exactly
  if (dt == DType::kBool || (dtype_is_integral(dt) && dtype_size_in_bits(dt) < 32)) return c.cast(x, DType::kInt32);
  c.unsupported("ordering ", dtype_name(dt), " values");
}

ValueId from_order_key(NodeContext& c, ValueId key, DType dtype) {
  if (dtype == DType::kUInt64) return c.cast(c.op("add", {key, top_bit(c)}), dtype);
  return c.cast(key, dtype);
}

ValueId reversed_order(NodeContext& c, ValueId key) {
  const DType dt = c.type_of(key).dtype;
  if (dtype_is_float(dt)) return c.op("negate", {key});
  return c.op("sub", {c.scalar(dt, -1), key});
}

}  // namespace maxc::onnx

// BitShift, composed from arithmetic our op set has: on unsigned integers, x << y is
// x * 2^y (the multiply wraps, as the shift drops high bits) and x >> y is (x - x mod 2^y) /
// 2^y, a division with no remainder, done in float64, which is exact below 2^53 (so up to
// uint32; uint64 right shifts are refused rather than rounded). 2^y comes from a constant
// table gathered by y; shifts by the width or more give 0, as numpy's do. Signed inputs
// (a newer opset) need arithmetic shifts and are not composed yet. The other bitwise operators (And, Or, Xor, Not,
// BitCast) have no composition short of splitting every bit, and stay unsupported.
#include <cmath>
#include <vector>

#include "onnx/known_value.h"
#include "onnx/node_context.h"

namespace maxc::onnx {
namespace {

void import_bit_shift(NodeContext& c) {
  const DType dtype = c.dtype(0);
  if (c.dtype(1) != dtype)
    c.invalid("BitShift takes two inputs of one type, got ", dtype_name(dtype), " and ", dtype_name(c.dtype(1)));
  if (!dtype_is_unsigned_integral(dtype)) c.unsupported("BitShift of ", dtype_name(dtype), " (only unsigned types)");
  const std::string direction = c.attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") c.invalid("direction must be LEFT or RIGHT, got '", direction, "'");
  const bool left = direction == "LEFT";
  if (!left && dtype == DType::kUInt64) c.unsupported("a right BitShift of uint64 (float64 division is exact below 2^53)");
  const int64_t width = dtype_size_in_bits(dtype);
  // Entry `width` stands for every shift past the width: 0 multiplies to 0; the right shift
  // divides by 1 there and masks the result to 0 below (a divide by 0 would trap).
  std::vector<double> powers;
  for (int64_t k = 0; k < width; ++k) powers.push_back(std::ldexp(1.0, static_cast<int>(k)));
  powers.push_back(left ? 0.0 : 1.0);
  const ValueId table = c.constant(KnownValue::from_doubles(dtype, {width + 1}, powers));
  const ValueId y = c.input(1);
  const ValueId index = c.cast(c.op("min", {y, c.scalar(dtype, static_cast<double>(width))}), DType::kInt64);
  const ValueId power = c.op("gather", {table, index}, {{"axis", int64_t{0}}});
  if (left) {
    c.set_output(0, c.op("mul", {c.input(0), power}));
    return;
  }
  const ValueId x = c.input(0);
  const ValueId whole = c.op("sub", {x, c.op("mod", {x, power})});
  const ValueId quotient = c.op("div", {c.cast(whole, DType::kFloat64), c.cast(power, DType::kFloat64)});
  const ValueId shifted = c.cast(quotient, dtype);
  const ValueId too_far = c.op("greater_equal", {y, c.scalar(dtype, static_cast<double>(width))});
  c.set_output(0, c.op("where", {too_far, c.scalar(dtype, 0), shifted}));
}

}  // namespace

void register_bitwise_importers(ImportTable& t) { t["BitShift"] = import_bit_shift; }

}  // namespace maxc::onnx

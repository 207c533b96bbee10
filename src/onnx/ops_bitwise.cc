// BitShift, composed from arithmetic our op set has. For a shift y in [0, width):
//   x << y is x * 2^y, a multiply that wraps as the shift drops high bits (for signed types
//   the table holds 2^(width-1) as its wrapped value, -2^(width-1), which wraps alike);
//   x >> y is floor(x / 2^y) in float64: a division by a power of two is exact, so this is
//   the logical shift of unsigned and the arithmetic (sign-filling) shift of signed types
//   wherever float64 holds x exactly. It does not hold 64-bit x, which is split into 32-bit
//   halves that it does hold (shift_right_64).
// A shift out of range (y < 0 or y >= width) gives 0, and -1 for a right shift of a negative
// signed x, as ONNX's reference does. 2^y comes from a constant table gathered by y, whose
// last entry stands for every out-of-range shift.
// BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot and BitCast have no composition short of
// splitting every bit, so they map to ops of their own (graph/ops/bitwise.cc), one each.
#include <cmath>
#include <vector>

#include "onnx/dtypes.h"
#include "onnx/known_value.h"
#include "onnx/node_context.h"

namespace maxc::onnx {
namespace {

// The table's entry for y: y itself in range, `width` out of it.
ValueId shift_index(NodeContext& c, DType dtype, int64_t width) {
  const ValueId y = c.input(1);
  const ValueId wide = c.scalar(dtype, static_cast<double>(width));
  ValueId out_of_range = c.op("greater_equal", {y, wide});
  if (dtype_is_signed_integral(dtype))
    out_of_range = c.op("logical_or", {out_of_range, c.op("less", {y, c.scalar(dtype, 0)})});
  return c.cast(c.op("where", {out_of_range, wide, y}), DType::kInt64);
}

// x * 2^y, wrapping; 0 out of range.
ValueId shift_left(NodeContext& c, DType dtype, int64_t width, ValueId index) {
  std::vector<double> powers;
  for (int64_t k = 0; k < width; ++k) powers.push_back(std::ldexp(1.0, static_cast<int>(k)));
  if (dtype_is_signed_integral(dtype)) powers.back() = -powers.back();
  powers.push_back(0.0);
  const ValueId table = c.constant(KnownValue::from_doubles(dtype, {width + 1}, powers));
  return c.op("mul", {c.input(0), c.op("gather", {table, index}, {{"axis", int64_t{0}}})});
}

// table[index] for a constant table of `dtype` with entry i = f(i), i in [0, 64].
template <class F>
ValueId lookup(NodeContext& c, DType dtype, ValueId index, F f) {
  std::vector<double> entries;
  for (int i = 0; i <= 64; ++i) entries.push_back(f(i));
  const ValueId table = c.constant(KnownValue::from_doubles(dtype, {65}, entries));
  return c.op("gather", {table, index}, {{"axis", int64_t{0}}});
}

// floor(v / 2^e[index]) for v of `dtype` that float64 holds exactly, as `dtype`.
ValueId floor_shift(NodeContext& c, DType dtype, ValueId v, ValueId index, double (*e)(int)) {
  const ValueId power = lookup(c, DType::kFloat64, index, [e](int i) { return std::ldexp(1.0, static_cast<int>(e(i))); });
  return c.cast(c.op("floor", {c.op("div", {c.cast(v, DType::kFloat64), power})}), dtype);
}

// floor(x / 2^y); out of range, floor(x / 2^width) is 0 or -1 already when the table's last
// entry is 2^width (exact in float64, and no division by 0).
ValueId shift_right(NodeContext& c, DType dtype, ValueId index) {
  return floor_shift(c, dtype, c.input(0), index, [](int i) { return double(i); });
}

// The 64-bit right shift on halves: x = hi * 2^32 + lo with lo = x mod 2^32 in [0, 2^32), and
// hi exact in float64 because x - lo is a multiple of 2^32 below 2^64. Then x >> y is
// hi * 2^(32-y) + (lo >> y) for y < 32 and hi >> (y - 32) from there on, out of range (the
// table's index 64) included: floor(hi / 2^32) is 0 or -1.
ValueId shift_right_64(NodeContext& c, DType dtype, ValueId index) {
  const ValueId x = c.input(0), two32 = c.scalar(dtype, 4294967296.0);
  const ValueId lo = c.op("mod", {x, two32});
  const ValueId hi = c.cast(c.op("div", {c.cast(c.op("sub", {x, lo}), DType::kFloat64),
                                         c.scalar(DType::kFloat64, 4294967296.0)}),
                            dtype);
  const ValueId hi_part = c.op("mul", {hi, lookup(c, dtype, index, [](int i) {
                                         return i < 32 ? std::ldexp(1.0, 32 - i) : 0.0;
                                       })});
  const ValueId low_y = c.op("add", {hi_part, floor_shift(c, dtype, lo, index, [](int i) { return double(i); })});
  const ValueId high_y = floor_shift(c, dtype, hi, index, [](int i) { return double(i < 32 ? 0 : i - 32); });
  return c.op("where", {c.op("less", {index, c.scalar(DType::kInt64, 32)}), low_y, high_y});
}

void import_bit_shift(NodeContext& c) {
  const DType dtype = c.dtype(0);
  if (c.dtype(1) != dtype)
    c.invalid("BitShift takes two inputs of one type, got ", dtype_name(dtype), " and ", dtype_name(c.dtype(1)));
  if (!dtype_is_integral(dtype) || dtype == DType::kBool) c.invalid("BitShift of ", dtype_name(dtype), " (integers only)");
  const std::string direction = c.attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") c.invalid("direction must be LEFT or RIGHT, got '", direction, "'");
  const int64_t width = dtype_size_in_bits(dtype);
  const ValueId index = shift_index(c, dtype, width);
  if (direction == "LEFT") {
    c.set_output(0, shift_left(c, dtype, width, index));
    return;
  }
  c.set_output(0, width == 64 ? shift_right_64(c, dtype, index) : shift_right(c, dtype, index));
}

// ONNX types the operands alike (integers only); the op checks dtypes and broadcasts.
void import_bitwise_binary(NodeContext& c, const char* ours) {
  c.set_output(0, c.op(ours, {c.input(0), c.input(1)}));
}

void import_bit_cast(NodeContext& c) {
  const DType to = to_dtype(static_cast<int32_t>(c.attr_int("to", 0)), c.label() + " attribute 'to'");
  c.set_output(0, c.op("bitcast", {c.input(0)}, {{"dtype", to}}));
}

}  // namespace

void register_bitwise_importers(ImportTable& t) {
  t["BitShift"] = import_bit_shift;
  for (auto [onnx, ours] : {std::pair{"BitwiseAnd", "bitwise_and"}, {"BitwiseOr", "bitwise_or"}, {"BitwiseXor", "bitwise_xor"}})
    t[onnx] = [op = ours](NodeContext& c) { import_bitwise_binary(c, op); };  // clang 14: no binding captures
  t["BitwiseNot"] = [](NodeContext& c) { c.set_output(0, c.op("bitwise_not", {c.input(0)})); };
  t["BitCast"] = import_bit_cast;
}

}  // namespace maxc::onnx

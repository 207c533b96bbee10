// Bitwise operators and bitcast: extras beyond MAX's op set (like rms_norm), named in its
// style, so ONNX's BitwiseAnd/Or/Xor/Not and BitCast import as one op each.
//
// bitwise_and/or/xor take integers or bools, numpy-broadcast, and insist on one dtype: no
// promotion, since widening a signed operand would change which bits the other one meets
// (ONNX and numpy's bitwise ufuncs on equal types agree). bitwise_not takes integers only;
// on bool it would be logical_not, which already exists. bitcast reads each element's bytes
// as another dtype of the same width, so it moves nothing (an alias on every device).
#include "graph/broadcast.h"
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"

namespace maxc {
namespace {

bool bitwise_operand(DType d) { return dtype_is_integral(d) || dtype_is_bool(d); }

std::vector<TensorType> infer_bitwise_binary(const InferContext& ctx) {
  for (size_t i = 0; i < 2; ++i)
    if (!bitwise_operand(ctx.input(i).dtype))
      ctx.fail(ctx.input_label(i), " must have an integer or bool dtype, got ", dtype_name(ctx.input(i).dtype));
  require_same_dtype(ctx);
  DeviceRef device = common_device(ctx);
  return {TensorType{ctx.input(0).dtype, broadcast_inputs(ctx, {0, 1}), device}};
}

std::vector<TensorType> infer_bitwise_not(const InferContext& ctx) {
  if (dtype_is_bool(ctx.input(0).dtype))
    ctx.fail(ctx.input_label(0), " is bool; bitwise_not takes integers (use logical_not for bool)");
  require_dtype(ctx, 0, DTypeClass::kInteger);
  return {ctx.input(0)};
}

// float4 and the 2- and 4-bit integers pack several elements in a byte: an element has no
// bytes of its own to reinterpret.
std::vector<TensorType> infer_bitcast(const InferContext& ctx) {
  const DType from = ctx.input(0).dtype, to = ctx.attr<DType>("dtype");
  if (!dtype_is_valid(to)) ctx.fail("attribute 'dtype' has unknown dtype code ", static_cast<int32_t>(to));
  for (DType d : {from, to})
    if (dtype_size_in_bits(d) % 8 != 0)
      ctx.fail("cannot bitcast ", dtype_name(from), " to ", dtype_name(to), ": ", dtype_name(d),
               " elements are smaller than a byte");
  if (dtype_size_in_bits(from) != dtype_size_in_bits(to))
    ctx.fail("cannot bitcast ", dtype_name(from), " (", dtype_size_in_bytes(from), " bytes) to ", dtype_name(to), " (",
             dtype_size_in_bytes(to), " bytes): the widths must match");
  TensorType out = ctx.input(0);
  out.dtype = to;
  return {out};
}

}  // namespace

void register_bitwise_ops(OpRegistry& r) {
  for (const char* name : {"bitwise_and", "bitwise_or", "bitwise_xor"})
    r.add(OpSchema{.name = name, .inputs = {{"lhs"}, {"rhs"}}, .infer = infer_bitwise_binary});
  r.add(OpSchema{.name = "bitwise_not", .inputs = {{"x"}}, .infer = infer_bitwise_not});
  r.add(OpSchema{.name = "bitcast",
                 .inputs = {{"x"}},
                 .attrs = {AttrSpec::required("dtype", AttrKind::kDType)},
                 .infer = infer_bitcast});
}

}  // namespace maxc

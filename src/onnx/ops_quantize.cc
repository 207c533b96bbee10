// Linear quantization operators: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv. We have no integer-quantized
// kernels of this kind, so each is composed from casts and arithmetic: integers are widened
// (int32 for matmul, float64 for convolution, which has float kernels only and is exact
// there), scales are applied in floating point and the result is rounded half to even and
// saturated to the quantized type's range, as the ONNX spec defines.
#include <optional>

#include "onnx/dtypes.h"
#include "onnx/node_context.h"

namespace maxc::onnx {
namespace {

struct QRange {
  double lo, hi;
};

// The integer types we quantize to and from by rounding (float8/float4 go through cast).
std::optional<QRange> integer_range(DType d) {
  switch (d) {
    case DType::kInt8: return QRange{-128, 127};
    case DType::kUInt8: return QRange{0, 255};
    case DType::kInt16: return QRange{-32768, 32767};
    case DType::kUInt16: return QRange{0, 65535};
    case DType::kInt32: return QRange{-2147483648.0, 2147483647.0};
    case DType::kInt4: return QRange{-8, 7};
    case DType::kUInt4: return QRange{0, 15};
    case DType::kInt2: return QRange{-2, 1};
    case DType::kUInt2: return QRange{0, 3};
    default: return std::nullopt;
  }
}


QRange require_integer_type(NodeContext& c, DType d, std::string_view what) {
  std::optional<QRange> r = integer_range(d);
  if (!r)
    c.unsupported(what, " of type ", dtype_label(d),
                  " (only int2, uint2, int4, uint4, int8, uint8, int16, uint16 and int32 are supported)");
  return *r;
}

// ---- scale and zero point layouts ----

// How a scale/zero point maps onto x: per tensor, per axis (a vector along `axis`) or
// blocked (x's shape with `axis` divided into blocks of `block_size`).
struct QuantLayout {
  std::vector<Dim> x_dims;
  int64_t axis_attr = 1;
  int64_t block_size = 0;
};

QuantLayout layout_of(NodeContext& c) {
  QuantLayout l;
  l.x_dims = c.type(0).dims;
  l.axis_attr = c.attr_int("axis", 1);
  l.block_size = c.attr_int("block_size", 0);
  if (l.block_size < 0) c.invalid("block_size must be >= 0, got ", l.block_size);
  return l;
}

// Blocked: each entry covers block_size consecutive elements along the axis; the last block
// may be partial, so the repeated parameter is cut to x's length.
ValueId expand_blocked(NodeContext& c, ValueId v, const QuantLayout& l, std::string_view what) {
  const std::vector<Dim> vd = c.type_of(v).dims;
  int64_t r = static_cast<int64_t>(l.x_dims.size());
  if (static_cast<int64_t>(vd.size()) != r)
    c.invalid(what, " has rank ", vd.size(), " but blocked quantization needs x's rank ", r);
  size_t a = static_cast<size_t>(c.axis(l.axis_attr, r));
  const Dim& xa = l.x_dims[a];
  if (!xa.is_static() || !vd[a].is_static())
    c.unsupported("blocked quantization needs static dims along axis ", a);
  // Rounded up without adding: a block_size near int64's limit must not overflow.
  const int64_t blocks = xa.static_value() / l.block_size + (xa.static_value() % l.block_size != 0 ? 1 : 0);
  if (vd[a].static_value() != blocks)
    c.invalid(what, " has ", vd[a], " blocks along axis ", a, "; x's ", xa, " elements in blocks of ", l.block_size,
              " need ", blocks);
  ValueId rep = c.op("repeat_interleave", {v}, {{"repeats", l.block_size}, {"axis", static_cast<int64_t>(a)}});
  if (xa.static_value() % l.block_size == 0) return rep;
  std::vector<Dim> starts(vd.size(), Dim(0)), stops = c.type_of(rep).dims;
  stops[a] = xa;
  return c.op("slice_tensor", {rep}, {{"starts", starts}, {"stops", stops}});
}

// A scale or zero point shaped to broadcast against x.
ValueId expand_param(NodeContext& c, ValueId v, const QuantLayout& l, std::string_view what) {
  const TensorType t = c.type_of(v);
  if (l.block_size > 0) return expand_blocked(c, v, l, what);
  if (t.rank() == 0) return v;
  if (t.num_elements() == Dim(1)) return c.reshape(v, {});
  if (t.rank() != 1) c.invalid(what, " must be a scalar or a vector, got shape ", dims_to_string(t.dims));
  int64_t r = static_cast<int64_t>(l.x_dims.size());
  size_t a = static_cast<size_t>(c.axis(l.axis_attr, r));
  if (!(t.dims[0] == l.x_dims[a]))
    c.invalid(what, " has ", t.dims[0], " entries but x has ", l.x_dims[a], " along axis ", a);
  std::vector<Dim> shape(l.x_dims.size(), Dim(1));
  shape[a] = t.dims[0];
  return c.reshape(v, shape);
}

// A per-tensor or per-row/column operand of a (Q)MatMul: a vector of M entries belongs to
// a's rows, so it becomes [M, 1]; one of N entries broadcasts along b's columns as it is.
ValueId matmul_param(NodeContext& c, ValueId v, bool per_row) {
  const TensorType t = c.type_of(v);
  if (t.rank() == 0) return v;
  if (t.num_elements() == Dim(1)) return c.reshape(v, {});
  if (t.rank() == 1 && per_row) return c.reshape(v, {t.dims[0], Dim(1)});
  return v;
}

// ---- QuantizeLinear ----

// A dtype-valued attribute (output_dtype, precision); nullopt when absent or 0 (unset).
std::optional<DType> attr_dtype(NodeContext& c, std::string_view name) {
  int64_t code = c.attr_int(name, 0);
  if (code == 0) return std::nullopt;
  return to_dtype(static_cast<int32_t>(code), c.label() + ": attribute '" + std::string(name) + "'");
}

// x's type when it and the scale agree, else the wider float (numpy's promotion, under which
// an integer x divides in float64).
DType division_dtype(NodeContext& c) {
  if (std::optional<DType> p = attr_dtype(c, "precision")) return *p;
  DType x = c.dtype(0), s = c.dtype(1);
  if (x == s) return x;
  if (!dtype_is_float(x) || x == DType::kFloat64 || s == DType::kFloat64) return DType::kFloat64;
  return DType::kFloat32;
}

DType quantize_output_dtype(NodeContext& c) {
  std::optional<DType> attr = attr_dtype(c, "output_dtype");
  if (!c.has_input(2)) return attr.value_or(DType::kUInt8);
  DType zp = c.dtype(2);
  if (attr && *attr != zp)
    c.invalid("output_dtype ", dtype_label(*attr), " differs from the zero point's ", dtype_label(zp));
  return zp;
}

// float8_e8m0fnu is no quantized type of ONNX's (it is the MX formats' scale): it falls to
// the integer types' check, which refuses it naming it.
bool is_minifloat(DType d) {
  return (dtype_is_float8(d) && d != DType::kFloat8E8M0Fnu) || d == DType::kFloat4E2M1Fn;
}

// float8: x / scale cast to the type, its largest finite value where it is out of range with
// saturate = 1; float4 (no inf or NaN) always saturates and adds its zero point first, as
// the reference does.
void quantize_to_minifloat(NodeContext& c, DType out, const QuantLayout& l, DType work) {
  ValueId scale = expand_param(c, c.cast(c.input(1), work), l, "y_scale");
  ValueId y = c.op("div", {c.cast(c.input(0), work), scale});
  bool saturate = c.attr_int("saturate", 1) != 0;
  if (out == DType::kFloat4E2M1Fn) {
    saturate = true;
    if (c.has_input(2)) y = c.op("add", {y, expand_param(c, c.cast(c.input(2), work), l, "y_zero_point")});
  }
  c.set_output(0, c.op("cast", {y}, {{"dtype", out}, {"saturate", saturate}}));
}

// round(x / scale) + zero_point, saturated. The sum is taken in int64 so that it cannot wrap
// before the clamp, whatever the target type.
void import_quantize(NodeContext& c) {
  DType out = quantize_output_dtype(c);
  QuantLayout l = layout_of(c);
  DType work = division_dtype(c);
  if (is_minifloat(out)) return quantize_to_minifloat(c, out, l, work);
  QRange range = require_integer_type(c, out, "quantizing to a zero point/output");
  ValueId scale = expand_param(c, c.cast(c.input(1), work), l, "y_scale");
  ValueId q = c.op("round", {c.op("div", {c.cast(c.input(0), work), scale})});
  q = c.cast(q, DType::kInt64);
  if (c.has_input(2)) q = c.op("add", {q, expand_param(c, c.cast(c.input(2), DType::kInt64), l, "y_zero_point")});
  q = c.op("clamp", {q}, {{"min", range.lo}, {"max", range.hi}});
  c.set_output(0, c.cast(q, out));
}

// ---- DequantizeLinear ----

// (x - zero_point) * scale, in float32 (float64 for a float64 scale) and then rounded once to
// the output type, as the reference computes it.
// float8 and float4 values are their own dequantized values up to the scale: their zero
// point must be 0 and is not read.
void import_dequantize(NodeContext& c) {
  DType in = c.dtype(0);
  bool minifloat = is_minifloat(in);
  if (!minifloat) require_integer_type(c, in, "dequantizing x");
  if (c.has_input(2) && c.dtype(2) != in)
    c.invalid("x_zero_point is ", dtype_label(c.dtype(2)), " but x is ", dtype_label(in));
  DType out = attr_dtype(c, "output_dtype").value_or(c.dtype(1));
  DType work = c.dtype(1) == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  QuantLayout l = layout_of(c);
  ValueId x = c.cast(c.input(0), work);
  if (c.has_input(2) && !minifloat)
    x = c.op("sub", {x, expand_param(c, c.cast(c.input(2), work), l, "x_zero_point")});
  ValueId y = c.op("mul", {x, expand_param(c, c.cast(c.input(1), work), l, "x_scale")});
  c.set_output(0, c.cast(y, out));
}

// ---- DynamicQuantizeLinear ----

// The whole tensor's maximum (max = true) or minimum, as a scalar.
ValueId reduce_all(NodeContext& c, ValueId x, bool max) {
  ValueId flat = c.reshape(x, {c.type_of(x).num_elements()});
  return c.reshape(c.op(max ? "max" : "min", {flat}, {{"axis", int64_t{0}}}), {});
}

// uint8 with scale = (max(0, max x) - min(0, min x)) / 255 (1 / 255 when that range is 0)
// and zero point = round(clamp(-min / scale, 0, 255)).
void import_dynamic_quantize(NodeContext& c) {
  if (c.dtype(0) != DType::kFloat32) c.unsupported("x must be float32, got ", dtype_label(c.dtype(0)));
  ValueId x = c.input(0);
  ValueId zero = c.scalar(DType::kFloat32, 0);
  ValueId hi = c.op("max", {reduce_all(c, x, true), zero});
  ValueId lo = c.op("min", {reduce_all(c, x, false), zero});
  ValueId span = c.op("sub", {hi, lo});
  span = c.op("where", {c.op("equal", {span, zero}), c.scalar(DType::kFloat32, 1), span});
  ValueId scale = c.op("div", {span, c.scalar(DType::kFloat32, 255)});
  ValueId zp = c.op("clamp", {c.op("negate", {c.op("div", {lo, scale})})}, {{"min", 0.0}, {"max", 255.0}});
  zp = c.op("round", {zp});
  ValueId y = c.op("add", {c.op("round", {c.op("div", {x, scale})}), zp});
  y = c.op("clamp", {y}, {{"min", 0.0}, {"max", 255.0}});
  c.set_output(0, c.cast(y, DType::kUInt8));
  c.set_output(1, scale);
  c.set_output(2, c.cast(zp, DType::kUInt8));
}

// ---- MatMulInteger, QLinearMatMul ----

// An 8-bit matmul operand minus its zero point, widened to int32.
ValueId centered(NodeContext& c, size_t value, size_t zero_point, bool per_row) {
  require_integer_type(c, c.dtype(value), "input " + std::to_string(value));
  ValueId v = c.cast(c.input(value), DType::kInt32);
  if (!c.has_input(zero_point)) return v;
  ValueId zp = matmul_param(c, c.cast(c.input(zero_point), DType::kInt32), per_row);
  return c.op("sub", {v, zp});
}

void import_matmul_integer(NodeContext& c) {
  ValueId a = centered(c, 0, 2, true), b = centered(c, 1, 3, false);
  c.set_output(0, c.op("matmul", {a, b}));
}

// An exact integer accumulator (float64) times `ratio`, plus the output zero point, rounded
// half to even and saturated to the zero point's type.
ValueId requantize(NodeContext& c, ValueId acc, ValueId ratio, size_t y_zero_point, DType fallback) {
  DType out = c.has_input(y_zero_point) ? c.dtype(y_zero_point) : fallback;
  QRange range = require_integer_type(c, out, "the quantized output");
  ValueId y = c.op("mul", {c.cast(acc, DType::kFloat64), c.cast(ratio, DType::kFloat64)});
  if (c.has_input(y_zero_point))
    y = c.op("add", {y, c.reshape(c.cast(c.input(y_zero_point), DType::kFloat64), {})});
  y = c.op("clamp", {c.op("round", {y})}, {{"min", range.lo}, {"max", range.hi}});
  return c.cast(y, out);
}

// The combined scale x_scale * w_scale / y_scale, computed in the scales' own type (so a
// float16 model rounds it as the reference does); w_scale comes already shaped.
ValueId combined_scale(NodeContext& c, size_t a_scale, ValueId w_scale, size_t y_scale) {
  ValueId a = c.reshape(c.input(a_scale), c.type(a_scale).num_elements() == Dim(1) ? std::vector<Dim>{}
                                                                                    : c.type(a_scale).dims);
  ValueId y = c.reshape(c.input(y_scale), {});
  DType dt = c.type_of(a).dtype;
  return c.op("div", {c.op("mul", {a, c.cast(w_scale, dt)}), c.cast(y, dt)});
}

// inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
void import_qlinear_matmul(NodeContext& c) {
  if (c.type(6).num_elements() != Dim(1)) c.unsupported("y_scale must hold one value (per-tensor)");
  ValueId acc = c.op("matmul", {centered(c, 0, 2, true), centered(c, 3, 5, false)});
  ValueId a_scale = matmul_param(c, c.input(1), true);
  ValueId b_scale = matmul_param(c, c.cast(c.input(4), c.dtype(1)), false);
  ValueId y_scale = c.reshape(c.input(6), {});
  ValueId ratio = c.op("div", {c.op("mul", {a_scale, b_scale}), c.cast(y_scale, c.dtype(1))});
  c.set_output(0, requantize(c, acc, ratio, 7, c.dtype(0)));
}

// ---- ConvInteger, QLinearConv ----

// A conv operand minus its zero point, in float64. A weight's zero point may be per output
// channel ([M] against an [M, C/group, k...] filter).
ValueId conv_operand(NodeContext& c, size_t value, size_t zero_point) {
  require_integer_type(c, c.dtype(value), "input " + std::to_string(value));
  ValueId v = c.cast(c.input(value), DType::kFloat64);
  if (!c.has_input(zero_point)) return v;
  ValueId zp = c.cast(c.input(zero_point), DType::kFloat64);
  const TensorType t = c.type_of(zp);
  if (t.num_elements() == Dim(1)) {
    zp = c.reshape(zp, {});
  } else {
    if (t.rank() != 1) c.invalid("zero point of input ", value, " must be a scalar or a vector");
    std::vector<Dim> shape(c.type_of(v).dims.size(), Dim(1));
    shape[0] = t.dims[0];
    zp = c.reshape(zp, shape);
  }
  return c.op("sub", {v, zp});
}

void import_conv_integer(NodeContext& c) {
  ValueId y = conv_from_attrs(c, conv_operand(c, 0, 2), conv_operand(c, 1, 3), std::nullopt);
  c.set_output(0, c.cast(y, DType::kInt32));
}

// inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
void import_qlinear_conv(NodeContext& c) {
  std::optional<ValueId> bias;
  if (c.has_input(8)) bias = c.cast(c.input(8), DType::kFloat64);
  ValueId acc = conv_from_attrs(c, conv_operand(c, 0, 2), conv_operand(c, 3, 5), bias);
  ValueId w_scale = c.input(4);
  if (c.type_of(w_scale).num_elements() == Dim(1)) {
    w_scale = c.reshape(w_scale, {});
  } else {  // per output channel: [M] -> [1, M, 1, ...]
    std::vector<Dim> shape(c.type_of(acc).dims.size(), Dim(1));
    shape[1] = c.type_of(w_scale).num_elements();
    w_scale = c.reshape(w_scale, shape);
  }
  ValueId ratio = combined_scale(c, 1, w_scale, 6);
  c.set_output(0, requantize(c, acc, ratio, 7, c.dtype(0)));
}

}  // namespace

void register_quantize_importers(ImportTable& t) {
  t["QuantizeLinear"] = import_quantize;
  t["DequantizeLinear"] = import_dequantize;
  t["DynamicQuantizeLinear"] = import_dynamic_quantize;
  t["MatMulInteger"] = import_matmul_integer;
  t["QLinearMatMul"] = import_qlinear_matmul;
  t["ConvInteger"] = import_conv_integer;
  t["QLinearConv"] = import_qlinear_conv;
}

}  // namespace maxc::onnx

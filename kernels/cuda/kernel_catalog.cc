#include "kernels/cuda/kernel_catalog.h"

#include <span>

#include "base/error.h"
#include "base/str_cat.h"
#include "kernels/cpu/pool.h"
#include "kernels/cuda/layout_catalog.h"

namespace maxc::gpu {
namespace {

using cpu::ElemOp;

const char* functor_of(ElemOp op) {
  switch (op) {
    case ElemOp::kCopy: return "Copy";
    case ElemOp::kAbs: return "Abs";
    case ElemOp::kAcos: return "Acos";
    case ElemOp::kAtanh: return "Atanh";
    case ElemOp::kCos: return "Cos";
    case ElemOp::kErf: return "Erf";
    case ElemOp::kExp: return "Exp";
    case ElemOp::kFloor: return "Floor";
    case ElemOp::kLog: return "Log";
    case ElemOp::kLog1p: return "Log1p";
    case ElemOp::kNegate: return "Negate";
    case ElemOp::kRelu: return "Relu";
    case ElemOp::kRound: return "Round";
    case ElemOp::kRsqrt: return "Rsqrt";
    case ElemOp::kSigmoid: return "Sigmoid";
    case ElemOp::kSilu: return "Silu";
    case ElemOp::kSin: return "Sin";
    case ElemOp::kSqrt: return "Sqrt";
    case ElemOp::kTanh: return "Tanh";
    case ElemOp::kTrunc: return "Trunc";
    case ElemOp::kGeluErf: return "GeluErf";
    case ElemOp::kGeluTanh: return "GeluTanh";
    case ElemOp::kGeluQuick: return "GeluQuick";
    case ElemOp::kLogicalNot: return "LogicalNot";
    case ElemOp::kIsInf: return "IsInf";
    case ElemOp::kIsNan: return "IsNan";
    case ElemOp::kClamp: return "Clamp";
    case ElemOp::kSquare: return "Square";
    case ElemOp::kCube: return "Cube";
    case ElemOp::kReciprocal: return "Reciprocal";
    case ElemOp::kOne: return "One";
    case ElemOp::kBitwiseNot: return "BitwiseNot";
    case ElemOp::kAdd: return "Add";
    case ElemOp::kSub: return "Sub";
    case ElemOp::kMul: return "Mul";
    case ElemOp::kDiv: return "Div";
    case ElemOp::kMod: return "Mod";
    case ElemOp::kPow: return "Pow";
    case ElemOp::kMax: return "Max";
    case ElemOp::kMin: return "Min";
    case ElemOp::kEqual: return "Equal";
    case ElemOp::kNotEqual: return "NotEqual";
    case ElemOp::kGreater: return "Greater";
    case ElemOp::kGreaterEqual: return "GreaterEqual";
    case ElemOp::kLess: return "Less";
    case ElemOp::kLessEqual: return "LessEqual";
    case ElemOp::kLogicalAnd: return "LogicalAnd";
    case ElemOp::kLogicalOr: return "LogicalOr";
    case ElemOp::kLogicalXor: return "LogicalXor";
    case ElemOp::kBitwiseAnd: return "BitwiseAnd";
    case ElemOp::kBitwiseOr: return "BitwiseOr";
    case ElemOp::kBitwiseXor: return "BitwiseXor";
    case ElemOp::kWhere: return "Where";
  }
  return nullptr;
}

const char* require_storage(DType d, const char* what) {
  const char* name = storage_type_name(d);
  if (!name) fail(Code::kUnimplemented, what, ": the GPU kernels do not handle ", dtype_label(d));
  return name;
}

const char* require_cast_storage(DType d, const char* what) {
  const char* name = cast_storage_type_name(d);
  if (!name)
    fail(Code::kUnimplemented, what, ": the GPU cast kernel does not handle ", dtype_label(d));
  return name;
}

// A side of cast_packed: a sub-byte dtype or anything cast.cu reads and writes.
const char* require_packed_cast_side(DType d, const char* what) {
  const char* packed = packed_type_name(d);
  return packed ? packed : require_cast_storage(d, what);
}

const char* require_word(DType d, const char* what) {
  const char* name = word_type_name(d);
  if (!name) fail(Code::kUnimplemented, what, ": the GPU kernels do not move ", dtype_label(d));
  return name;
}

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::kSum: return "Sum";
    case Reduction::kMean: return "Mean";
    case Reduction::kMax: return "Max";
    case Reduction::kMin: return "Min";
  }
  return "?";
}

// The dtypes of the catalog: the float types kernels compute in float, and the integers
// models index and count with. Others compile on demand through the same templates.
// (Plain arrays: constant-initialized, so usable from other files' static initializers.)
constexpr DType kFloats[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
constexpr DType kNumbers[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt64};
constexpr DType kBitwiseTypes[] = {DType::kBool, DType::kUInt8, DType::kInt32, DType::kInt64};  // flags, masks
constexpr DType kMatmulIntegers[] = {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
                                     DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
constexpr DType kWords[] = {DType::kUInt8, DType::kUInt16, DType::kFloat32, DType::kInt64};  // 1, 2, 4, 8 bytes
constexpr DType kCastTypes[] = {DType::kBool,    DType::kUInt8,    DType::kInt8,    DType::kInt32, DType::kInt64,
                                DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
constexpr DType kFloat8s[] = {DType::kFloat8E4M3Fn, DType::kFloat8E4M3Fnuz, DType::kFloat8E5M2,
                              DType::kFloat8E5M2Fnuz};
constexpr DType kSubByteTypes[] = {DType::kFloat4E2M1Fn, DType::kUInt2, DType::kInt2, DType::kUInt4, DType::kInt4};

// Into f: each of `specials` to and from each of `others`, and to each other special, as
// kernel(in, out) names them.
void add_casts_of(KernelFamily& f, std::span<const DType> specials, std::span<const DType> others,
                  std::string (*kernel)(DType, DType)) {
  for (DType special : specials) {
    for (DType other : others) {
      f.instances.push_back(kernel(other, special));
      f.instances.push_back(kernel(special, other));
    }
    for (DType out : specials)
      if (out != special) f.instances.push_back(kernel(special, out));
  }
}

// Every pair of distinct cast dtypes, float8 to and from each of them and each other.
KernelFamily cast_family() {
  KernelFamily f{"cast.cu", {}};
  for (DType in : kCastTypes)
    for (DType out : kCastTypes)
      if (in != out) f.instances.push_back(cast_kernel(in, out));
  add_casts_of(f, kFloat8s, kCastTypes, cast_kernel);
  return f;
}

// Each sub-byte dtype to and from every cast dtype and each other, and float4 to and from the
// float8s it is scaled with in the MX formats.
KernelFamily cast_packed_family() {
  KernelFamily f{"cast_packed.cu", {}};
  add_casts_of(f, kSubByteTypes, kCastTypes, cast_packed_kernel);
  constexpr DType kFloat4[] = {DType::kFloat4E2M1Fn};
  add_casts_of(f, kFloat4, kFloat8s, cast_packed_kernel);
  return f;
}

KernelFamily elementwise_family() {
  using enum ElemOp;
  KernelFamily f{"elementwise.cu", {}};
  for (ElemOp op : {kAcos, kAtanh, kCos, kErf, kExp, kLog, kLog1p, kRsqrt, kSigmoid, kSilu, kSin, kSqrt, kTanh, kGeluErf,
                    kGeluTanh, kGeluQuick, kReciprocal})
    for (DType d : kFloats) f.instances.push_back(unary_kernel(op, d, d));
  for (ElemOp op : {kAbs, kNegate, kRelu, kFloor, kRound, kTrunc, kSquare, kCube, kClamp})
    for (DType d : kNumbers) f.instances.push_back(unary_kernel(op, d, d));
  for (ElemOp op : {kIsInf, kIsNan})
    for (DType d : kFloats) f.instances.push_back(unary_kernel(op, d, DType::kBool));
  f.instances.push_back(unary_kernel(kLogicalNot, DType::kBool, DType::kBool));
  for (ElemOp op : {kAdd, kSub, kMul, kDiv, kMod, kPow, kMax, kMin})
    for (DType d : kNumbers) f.instances.push_back(binary_kernel(op, d, d));
  for (ElemOp op : {kEqual, kNotEqual, kGreater, kGreaterEqual, kLess, kLessEqual})
    for (DType d : kNumbers) f.instances.push_back(binary_kernel(op, d, DType::kBool));
  for (ElemOp op : {kLogicalAnd, kLogicalOr, kLogicalXor})
    f.instances.push_back(binary_kernel(op, DType::kBool, DType::kBool));
  for (DType d : kBitwiseTypes) {
    for (ElemOp op : {kBitwiseAnd, kBitwiseOr, kBitwiseXor}) f.instances.push_back(binary_kernel(op, d, d));
    if (d != DType::kBool) f.instances.push_back(unary_kernel(kBitwiseNot, d, d));
  }
  for (DType d : kWords) f.instances.push_back(where_kernel(d));
  return f;
}

}  // namespace

const char* storage_type_name(DType d) {
  switch (d) {
    case DType::kBool: return "maxc::gpu::bool8";
    case DType::kUInt8: return "unsigned char";
    case DType::kInt8: return "signed char";
    case DType::kUInt16: return "unsigned short";
    case DType::kInt16: return "short";
    case DType::kUInt32: return "unsigned int";
    case DType::kInt32: return "int";
    case DType::kUInt64: return "unsigned long long";
    case DType::kInt64: return "long long";
    case DType::kFloat16: return "maxc::gpu::half";
    case DType::kBFloat16: return "maxc::gpu::bfloat16";
    case DType::kFloat32: return "float";
    case DType::kFloat64: return "double";
    default: return nullptr;
  }
}

const char* cast_storage_type_name(DType d) {
  switch (d) {
    case DType::kFloat8E4M3Fn: return "maxc::gpu::float8_e4m3fn";
    case DType::kFloat8E4M3Fnuz: return "maxc::gpu::float8_e4m3fnuz";
    case DType::kFloat8E5M2: return "maxc::gpu::float8_e5m2";
    case DType::kFloat8E5M2Fnuz: return "maxc::gpu::float8_e5m2fnuz";
    case DType::kFloat8E8M0Fnu: return "maxc::gpu::float8_e8m0fnu";
    default: return storage_type_name(d);
  }
}

const char* packed_type_name(DType d) {
  switch (d) {
    case DType::kFloat4E2M1Fn: return "maxc::gpu::float4_e2m1fn";
    case DType::kUInt2: return "maxc::gpu::packed_uint2";
    case DType::kInt2: return "maxc::gpu::packed_int2";
    case DType::kUInt4: return "maxc::gpu::packed_uint4";
    case DType::kInt4: return "maxc::gpu::packed_int4";
    default: return nullptr;
  }
}

const char* word_type_name(DType d) {
  switch (dtype_size_in_bits(d)) {
    case 8: return "unsigned char";
    case 16: return "unsigned short";
    case 32: return "unsigned int";
    case 64: return "unsigned long long";
    default: return nullptr;
  }
}

const char* compute_type_name(DType d) {
  switch (d) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32: return "float";
    case DType::kFloat64: return "double";
    case DType::kUInt64: return "unsigned long long";
    default: return "long long";
  }
}

std::string elementwise_op_name(ElemOp op, DType d) {
  const char* functor = functor_of(op);
  if (!functor) fail(Code::kInvalidArgument, "unknown elementwise op ", static_cast<int>(op));
  if (op == ElemOp::kClamp) return str_cat("maxc::gpu::op::Clamp<", compute_type_name(d), ">");
  return str_cat("maxc::gpu::op::", functor);
}

std::string unary_kernel(ElemOp op, DType in, DType out) {
  return str_cat("maxc::gpu::unary<", elementwise_op_name(op, in), ", ", require_storage(in, "unary input"), ", ",
                 require_storage(out, "unary output"), ">");
}

std::string binary_kernel(ElemOp op, DType in, DType out) {
  return str_cat("maxc::gpu::binary<", elementwise_op_name(op, in), ", ", require_storage(in, "binary input"), ", ",
                 require_storage(out, "binary output"), ">");
}

std::string where_kernel(DType d) { return str_cat("maxc::gpu::where<", require_word(d, "where"), ">"); }

std::string cast_kernel(DType in, DType out) {
  return str_cat("maxc::gpu::cast<", require_cast_storage(in, "cast input"), ", ",
                 require_cast_storage(out, "cast output"), ">");
}

std::string cast_packed_kernel(DType in, DType out) {
  if (!packed_type_name(in) && !packed_type_name(out))
    fail(Code::kInvalidArgument, "cast_packed: a cast from ", dtype_label(in), " to ", dtype_label(out),
         " has no sub-byte side (cast_kernel casts those)");
  return str_cat("maxc::gpu::cast_packed<", require_packed_cast_side(in, "packed cast input"), ", ",
                 require_packed_cast_side(out, "packed cast output"), ">");
}

std::string fill_kernel(DType d) { return str_cat("maxc::gpu::fill<", require_word(d, "fill"), ">"); }

std::string copy_strided_kernel(DType d) {
  return str_cat("maxc::gpu::copy_strided<", require_word(d, "strided copy"), ">");
}

std::string transpose_tiles_kernel(DType d) {
  return str_cat("maxc::gpu::transpose_tiles<", require_word(d, "transpose"), ">");
}

std::string gather_kernel(DType d, DType index) {
  if (!dtype_is_integral(index))
    fail(Code::kInvalidArgument, "gather indices of ", dtype_label(index),
         "; expected an integer dtype");
  return str_cat("maxc::gpu::gather<", require_word(d, "gather"), ", ", require_storage(index, "gather indices"), ">");
}

std::string reduce_kernel(Reduction r, DType d, bool rows) {
  const char* s = require_storage(d, "reduction");
  return str_cat("maxc::gpu::", rows ? "reduce_rows" : "reduce_columns", "<maxc::gpu::", reduction_name(r), "<", s,
                 ">, ", s, ">");
}

std::string softmax_kernel(DType d, bool log) {
  return str_cat("maxc::gpu::softmax_rows<", require_storage(d, "softmax"), ", ", log ? "true" : "false", ">");
}

std::string layer_norm_kernel(DType d) { return str_cat("maxc::gpu::layer_norm<", require_storage(d, "layer_norm"), ">"); }

std::string add_layer_norm_kernel(DType d) {
  return str_cat("maxc::gpu::add_layer_norm<", require_storage(d, "add_layer_norm"), ">");
}

std::string rms_norm_kernel(DType d) { return str_cat("maxc::gpu::rms_norm<", require_storage(d, "rms_norm"), ">"); }

namespace {

const char* activation_functor(cpu::Activation a) {
  switch (a) {
    case cpu::Activation::kNone: return "Copy";
    case cpu::Activation::kRelu: return "Relu";
    case cpu::Activation::kGelu: return "GeluErf";
    case cpu::Activation::kGeluTanh: return "GeluTanh";
    case cpu::Activation::kSigmoid: return "Sigmoid";
    case cpu::Activation::kTanh: return "Tanh";
    case cpu::Activation::kSilu: return "Silu";
  }
  return "?";
}

}  // namespace

std::string matmul_kernel(DType d, cpu::Activation activation) {
  if (!dtype_is_float(d) && !dtype_is_integral(d))
    fail(Code::kUnimplemented, "matmul: the GPU kernels multiply numbers, not ", dtype_name(d));
  if (dtype_is_integral(d) && activation != cpu::Activation::kNone && activation != cpu::Activation::kRelu)
    fail(Code::kUnimplemented, "matmul: no GPU kernel for the ", cpu::activation_name(activation), " epilogue on ",
         dtype_name(d));
  return str_cat("maxc::gpu::matmul_tiled<", require_storage(d, "matmul"), ", maxc::gpu::op::",
                 activation_functor(activation), ">");
}

std::string attention_kernel(DType d, DType mask) {
  if (!dtype_is_float(d) || d == DType::kFloat64)
    fail(Code::kUnimplemented, "attention: the GPU kernel computes float32, float16 and bfloat16, not ",
         dtype_label(d));
  if (mask != d && mask != DType::kFloat32 && mask != DType::kBool)
    fail(Code::kUnimplemented, "attention: a mask of ", dtype_label(mask),
         " (float32, bool or the inputs' dtype)");
  return str_cat("maxc::gpu::attention_rows<", require_storage(d, "attention"), ", ", require_storage(mask, "attention mask"), ">");
}

namespace {

// The dtypes the CPU scans and arg-reduces (its DTypeSet::kNumeric).
const char* require_numeric(DType d, const char* what) {
  if (!dtype_is_float(d) && d != DType::kInt32 && d != DType::kInt64)
    fail(Code::kUnimplemented, what, ": the GPU kernel handles float types, int32 and int64, not ", dtype_label(d));
  return require_storage(d, what);
}

}  // namespace

std::string cumsum_kernel(DType d) { return str_cat("maxc::gpu::cumsum_lines<", require_numeric(d, "cumsum"), ">"); }

std::string count_nonzero_kernel(DType d) {
  return str_cat("maxc::gpu::count_nonzero_block<", require_word(d, "count_nonzero"), ">");
}
std::string nonzero_kernel(DType d) { return str_cat("maxc::gpu::nonzero_block<", require_word(d, "nonzero"), ">"); }
std::string masked_scatter_kernel(DType d) {
  return str_cat("maxc::gpu::masked_scatter_block<", require_word(d, "masked_scatter"), ">");
}
std::string count_repeats_kernel(DType d) {
  if (d != DType::kInt32 && d != DType::kInt64)
    fail(Code::kUnimplemented, "repeat_interleave: the GPU kernels count repeats of int32 or int64, not ",
         dtype_label(d));
  return str_cat("maxc::gpu::count_repeats_one<", require_storage(d, "repeats"), ">");
}

std::string arg_reduce_kernel(DType d, bool max) {
  return str_cat("maxc::gpu::arg_reduce_lines<maxc::gpu::", max ? "ArgMax" : "ArgMin", ", ",
                 require_numeric(d, max ? "argmax" : "argmin"), ">");
}

std::string sort_kernel(DType d) { return str_cat("maxc::gpu::sort_lines<", require_numeric(d, "sort"), ">"); }

int64_t sort_key_bytes(DType d) {
  require_numeric(d, "sort");
  return d == DType::kFloat32 || d == DType::kFloat16 || d == DType::kBFloat16 ? 4 : 8;  // float, or double / i64
}

std::string conv2d_kernel(DType d, bool direct) {
  if (!dtype_is_float(d))
    fail(Code::kUnimplemented, "conv2d: the GPU kernels convolve float types, not ", dtype_label(d));
  return str_cat("maxc::gpu::", direct ? "conv2d_direct<" : "conv2d_tiled<", require_storage(d, "conv2d"), ">");
}

std::string max_pool2d_kernel(DType d) {
  if (!cpu::max_pool2d_supports(d))
    fail(Code::kUnimplemented, "max_pool2d: no GPU kernel for ", dtype_label(d));
  return str_cat("maxc::gpu::max_pool2d<", require_storage(d, "max_pool2d"), ">");
}

std::string avg_pool2d_kernel(DType d) {
  if (!cpu::avg_pool2d_supports(d))
    fail(Code::kUnimplemented, "avg_pool2d: no GPU kernel for ", dtype_label(d));
  return str_cat("maxc::gpu::avg_pool2d<", require_storage(d, "avg_pool2d"), ">");
}

namespace {

// The tag struct of common/quant_blocks.cuh for an encoding.
const char* quant_block_type(QuantEncoding e, const char* what) {
  switch (e) {
    case QuantEncoding::kQ4_0: return "maxc::gpu::QuantQ4_0";
    case QuantEncoding::kQ4_K: return "maxc::gpu::QuantQ4_K";
    case QuantEncoding::kQ5_K: return "maxc::gpu::QuantQ5_K";
    case QuantEncoding::kQ6_K: return "maxc::gpu::QuantQ6_K";
    case QuantEncoding::kQ8_0: return "maxc::gpu::QuantQ8_0";
    case QuantEncoding::kNone: break;
  }
  const char* name = quant_encoding_name(e);
  fail(Code::kUnimplemented, what, ": no GPU kernel for quantization encoding ", name ? name : "?", " (",
       static_cast<int>(e), ")");
}

constexpr QuantEncoding kQuantEncodings[] = {QuantEncoding::kQ4_0, QuantEncoding::kQ4_K, QuantEncoding::kQ5_K,
                                             QuantEncoding::kQ6_K, QuantEncoding::kQ8_0};

}  // namespace

std::string dequantize_kernel(QuantEncoding e) {
  return str_cat("maxc::gpu::dequantize_rows<", quant_block_type(e, "dequantize"), ">");
}

std::string qmatmul_kernel(QuantEncoding e) {
  return str_cat("maxc::gpu::qmatmul_rows<", quant_block_type(e, "qmatmul"), ">");
}

std::vector<KernelFamily> kernel_catalog() {
  std::vector<KernelFamily> catalog;
  catalog.push_back(elementwise_family());

  catalog.push_back(cast_family());
  catalog.push_back(cast_packed_family());

  KernelFamily fill{"fill.cu", {}}, transpose{"transpose.cu", {}}, gather{"gather.cu", {}};
  for (DType d : kWords) {
    fill.instances.push_back(fill_kernel(d));
    transpose.instances.push_back(copy_strided_kernel(d));
    transpose.instances.push_back(transpose_tiles_kernel(d));
    for (DType index : {DType::kInt32, DType::kInt64}) gather.instances.push_back(gather_kernel(d, index));
  }
  catalog.push_back(fill);
  catalog.push_back(transpose);
  catalog.push_back(gather);

  KernelFamily reduce{"reduce.cu", {}};
  for (Reduction r : {Reduction::kSum, Reduction::kMean, Reduction::kMax, Reduction::kMin})
    for (DType d : kNumbers)
      for (bool rows : {true, false}) reduce.instances.push_back(reduce_kernel(r, d, rows));
  catalog.push_back(reduce);

  KernelFamily softmax{"softmax.cu", {}}, layer_norm{"layer_norm.cu", {}}, rms_norm{"rms_norm.cu", {}};
  for (DType d : kFloats) {
    softmax.instances.push_back(softmax_kernel(d, false));
    softmax.instances.push_back(softmax_kernel(d, true));
    layer_norm.instances.push_back(layer_norm_kernel(d));
    layer_norm.instances.push_back(add_layer_norm_kernel(d));
    rms_norm.instances.push_back(rms_norm_kernel(d));
  }
  catalog.push_back(softmax);
  catalog.push_back(layer_norm);
  catalog.push_back(rms_norm);

  KernelFamily matmul{"matmul.cu", {}};
  for (DType d : kFloats)
    for (cpu::Activation a : {cpu::Activation::kNone, cpu::Activation::kRelu, cpu::Activation::kGelu,
                              cpu::Activation::kGeluTanh, cpu::Activation::kSigmoid, cpu::Activation::kTanh,
                              cpu::Activation::kSilu})
      matmul.instances.push_back(matmul_kernel(d, a));
  for (DType d : kMatmulIntegers)
    for (cpu::Activation a : {cpu::Activation::kNone, cpu::Activation::kRelu}) matmul.instances.push_back(matmul_kernel(d, a));
  catalog.push_back(matmul);
  for (KernelFamily& f : layout_kernel_families()) catalog.push_back(std::move(f));

  KernelFamily attention{"attention.cu", {}};
  for (DType d : kFloats) {
    attention.instances.push_back(attention_kernel(d, d));
    if (d != DType::kFloat32) attention.instances.push_back(attention_kernel(d, DType::kFloat32));
    attention.instances.push_back(attention_kernel(d, DType::kBool));
  }
  catalog.push_back(attention);

  KernelFamily scan{"scan.cu", {}}, arg_reduce{"arg_reduce.cu", {}};
  for (DType d : kNumbers) {
    scan.instances.push_back(cumsum_kernel(d));
    arg_reduce.instances.push_back(arg_reduce_kernel(d, true));
    arg_reduce.instances.push_back(arg_reduce_kernel(d, false));
  }
  catalog.push_back(scan);
  catalog.push_back(arg_reduce);

  KernelFamily positions{"nonzero.cu", {}};
  for (DType d : kWords) {
    positions.instances.push_back(count_nonzero_kernel(d));
    positions.instances.push_back(nonzero_kernel(d));
    positions.instances.push_back(masked_scatter_kernel(d));
  }
  for (DType d : {DType::kInt32, DType::kInt64}) positions.instances.push_back(count_repeats_kernel(d));
  catalog.push_back(positions);

  KernelFamily sort{"sort.cu", {}};
  for (DType d : kNumbers) sort.instances.push_back(sort_kernel(d));
  sort.instances.push_back(sort_kernel(DType::kFloat64));  // the CPU sorts float64 too
  catalog.push_back(sort);

  KernelFamily conv{"conv.cu", {}}, pool{"pool.cu", {}};
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    conv.instances.push_back(conv2d_kernel(d, false));
    conv.instances.push_back(conv2d_kernel(d, true));
    pool.instances.push_back(avg_pool2d_kernel(d));
  }
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt8, DType::kInt16,
                  DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64})
    pool.instances.push_back(max_pool2d_kernel(d));
  catalog.push_back(conv);
  catalog.push_back(pool);

  KernelFamily quantized{"quantized.cu", {}};
  for (QuantEncoding e : kQuantEncodings) {
    quantized.instances.push_back(dequantize_kernel(e));
    quantized.instances.push_back(qmatmul_kernel(e));
  }
  catalog.push_back(quantized);
  return catalog;
}

}  // namespace maxc::gpu

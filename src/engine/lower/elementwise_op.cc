#include "engine/lower/elementwise_op.h"

#include <limits>
#include <map>
#include <set>

#include "graph/promotion.h"
#include "kernels/cpu/cast.h"

namespace maxc {
namespace {

using cpu::ElemOp;

// Ops whose one ElemOp does not depend on attributes, with their arity.
struct Plain {
  ElemOp op;
  size_t arity;
};

const std::map<std::string, Plain, std::less<>>& plain_ops() {
  static const std::map<std::string, Plain, std::less<>> ops = {
      {"abs", {ElemOp::kAbs, 1}},           {"acos", {ElemOp::kAcos, 1}},
      {"atanh", {ElemOp::kAtanh, 1}},       {"cos", {ElemOp::kCos, 1}},
      {"erf", {ElemOp::kErf, 1}},           {"exp", {ElemOp::kExp, 1}},
      {"floor", {ElemOp::kFloor, 1}},       {"log", {ElemOp::kLog, 1}},
      {"log1p", {ElemOp::kLog1p, 1}},       {"negate", {ElemOp::kNegate, 1}},
      {"relu", {ElemOp::kRelu, 1}},         {"round", {ElemOp::kRound, 1}},
      {"rsqrt", {ElemOp::kRsqrt, 1}},       {"sigmoid", {ElemOp::kSigmoid, 1}},
      {"silu", {ElemOp::kSilu, 1}},         {"sin", {ElemOp::kSin, 1}},
      {"sqrt", {ElemOp::kSqrt, 1}},         {"tanh", {ElemOp::kTanh, 1}},
      {"trunc", {ElemOp::kTrunc, 1}},       {"logical_not", {ElemOp::kLogicalNot, 1}},
      {"is_inf", {ElemOp::kIsInf, 1}},      {"is_nan", {ElemOp::kIsNan, 1}},
      {"add", {ElemOp::kAdd, 2}},           {"sub", {ElemOp::kSub, 2}},
      {"mul", {ElemOp::kMul, 2}},           {"div", {ElemOp::kDiv, 2}},
      {"mod", {ElemOp::kMod, 2}},           {"pow", {ElemOp::kPow, 2}},
      {"max", {ElemOp::kMax, 2}},           {"min", {ElemOp::kMin, 2}},
      {"equal", {ElemOp::kEqual, 2}},       {"not_equal", {ElemOp::kNotEqual, 2}},
      {"greater", {ElemOp::kGreater, 2}},   {"greater_equal", {ElemOp::kGreaterEqual, 2}},
      {"less", {ElemOp::kLess, 2}},         {"less_equal", {ElemOp::kLessEqual, 2}},
      {"logical_and", {ElemOp::kLogicalAnd, 2}}, {"logical_or", {ElemOp::kLogicalOr, 2}},
      {"logical_xor", {ElemOp::kLogicalXor, 2}}, {"where", {ElemOp::kWhere, 3}},
      {"bitwise_and", {ElemOp::kBitwiseAnd, 2}}, {"bitwise_or", {ElemOp::kBitwiseOr, 2}},
      {"bitwise_xor", {ElemOp::kBitwiseXor, 2}}, {"bitwise_not", {ElemOp::kBitwiseNot, 1}},
  };
  return ops;
}


void check_arity(const Node& node, size_t got, size_t want, const std::string& where) {
  if (got != want) fail(Code::kInternal, where, ": ", got, " inputs; expected ", want);
}

ElemOp gelu_op(const Node& node, const std::string& where) {
  const std::string& mode = node.attrs.get<std::string>("approximate", where);
  if (mode == "none") return ElemOp::kGeluErf;
  if (mode == "tanh") return ElemOp::kGeluTanh;
  if (mode == "quick") return ElemOp::kGeluQuick;
  fail(Code::kInvalidArgument, where, ": attribute 'approximate' is \"", mode,
       "\"; expected \"none\", \"tanh\" or \"quick\"");
}

double bound(const Node& node, const char* name, double none, const std::string& where) {
  return node.attrs.has(name) ? node.attrs.get<double>(name, where) : none;
}

// The dtype the op computes in: comparisons and float predicates in their (promoted) input
// dtype, everything else in its output dtype (which the schema already promoted; for `div`
// of integers it is float32, so the integers are converted as they load).
DType compute_dtype(std::string_view op, std::span<const DType> in, DType out, const std::string& where) {
  static const std::set<std::string_view> by_inputs = {"equal", "not_equal", "greater", "greater_equal",
                                                       "less",  "less_equal", "is_inf", "is_nan"};
  if (!by_inputs.contains(op)) return out;
  if (in.size() == 1) return in[0];
  std::optional<DType> p = promote_types(in[0], in[1]);
  if (!p) fail(Code::kInvalidArgument, where, ": inputs ", dtype_label(in[0]), " and ", dtype_label(in[1]),
               " have no common dtype");
  return *p;
}

}  // namespace

const std::vector<std::string>& elementwise_op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [name, plain] : plain_ops()) v.push_back(name);
    v.push_back("gelu");
    v.push_back("clamp");
    v.push_back("cast");
    return v;
  }();
  return names;
}

ElemOpDesc describe_elementwise(const Node& node, std::span<const DType> inputs, DType output,
                                const std::string& where) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!cpu::is_storage_supported(inputs[i]))
      fail(Code::kUnimplemented, where, ": no CPU kernel for dtype ", dtype_label(inputs[i]), " (input ", i, ")");
  if (!cpu::is_storage_supported(output))
    fail(Code::kUnimplemented, where, ": no CPU kernel for dtype ", dtype_label(output), " (output)");

  ElemOpDesc d;
  if (node.op == "cast") {
    check_arity(node, inputs.size(), 1, where);
    d.is_cast = true;
    d.compute = cpu::elem_compute_of(inputs[0]);
    if (!d.compute) d.compute = cpu::elem_compute_of(output);
    return d;
  }
  if (node.op == "gelu") {
    check_arity(node, inputs.size(), 1, where);
    d.op = gelu_op(node, where);
  } else if (node.op == "clamp") {
    check_arity(node, inputs.size(), 1, where);
    d.op = ElemOp::kClamp;
    d.p0 = bound(node, "min", -std::numeric_limits<double>::infinity(), where);
    d.p1 = bound(node, "max", std::numeric_limits<double>::infinity(), where);
  } else {
    auto it = plain_ops().find(node.op);
    if (it == plain_ops().end()) fail(Code::kUnimplemented, where, ": not an elementwise op");
    check_arity(node, inputs.size(), it->second.arity, where);
    d.op = it->second.op;
  }
  d.compute = cpu::elem_compute_of(compute_dtype(node.op, inputs, output, where));
  return d;
}

}  // namespace maxc

// The ai.onnx.ml helpers of ml_common.h.
#include "onnx/ml_common.h"

#include <cmath>

#include "onnx/tensor_data.h"

namespace maxc::onnx {

std::optional<std::vector<double>> tensor_attr(NodeContext& c, std::string_view name) {
  const AttributeProto* a = c.attr(name);
  if (!a) return std::nullopt;
  if (a->type != AttrType::kTensor || !a->t) c.invalid("attribute '", name, "' must be a tensor");
  KnownValue k = KnownValue::from_tensor(tensor_from_proto(*a->t, c.label() + " attribute '" + std::string(name) + "'", ""));
  std::optional<std::vector<double>> v = k.doubles();
  if (!v) c.unsupported("attribute '", name, "' of dtype ", dtype_name(k.dtype));
  return v;
}

std::vector<double> floats_attr(NodeContext& c, std::string_view name) {
  std::optional<std::vector<float>> f = c.attr_floats(name);
  return f ? std::vector<double>(f->begin(), f->end()) : std::vector<double>{};
}

std::optional<std::vector<double>> floats_or_tensor(NodeContext& c, std::string_view name) {
  if (c.attr(name)) return floats_attr(c, name);
  return tensor_attr(c, std::string(name) + "_as_tensor");
}

std::vector<int64_t> required_ints(NodeContext& c, std::string_view name) {
  std::optional<std::vector<int64_t>> v = c.attr_ints(name);
  if (!v) c.invalid("attribute '", name, "' is required");
  return *v;
}

std::vector<int64_t> int_class_labels(NodeContext& c, std::string_view ints_name, std::string_view strings_name) {
  const AttributeProto* s = c.attr(strings_name);
  if (s && !s->strings.empty())
    c.unsupported("string class labels ('", strings_name, "', ", s->strings.size(),
                  " labels): max_c has no string tensors; convert the model with integer labels");
  return c.attr_ints(ints_name).value_or(std::vector<int64_t>{});
}

PostTransform post_transform(NodeContext& c) {
  const std::string t = c.attr_string("post_transform", "NONE");
  if (t == "NONE") return PostTransform::kNone;
  if (t == "LOGISTIC") return PostTransform::kLogistic;
  if (t == "SOFTMAX") return PostTransform::kSoftmax;
  if (t == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (t == "PROBIT") return PostTransform::kProbit;
  c.invalid("post_transform '", t, "' (NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO or PROBIT)");
}

ValueId probit(NodeContext& c, ValueId v) {
  constexpr double kA = 0.147, kPi = 3.14159265358979323846;
  const DType f = DType::kFloat32;
  auto k = [&](double x) { return c.scalar(f, x); };
  const ValueId x = c.op("sub", {c.op("mul", {v, k(2)}), k(1)});
  const ValueId sign = c.op("where", {c.op("less", {x, k(0)}), k(-1), k(1)});
  const ValueId ln = c.op("log", {c.op("mul", {c.op("sub", {k(1), x}), c.op("add", {k(1), x})})});
  const ValueId a = c.op("add", {k(2 / (kPi * kA)), c.op("mul", {ln, k(0.5)})});
  const ValueId b = c.op("mul", {ln, k(1 / kA)});
  const ValueId root = c.op("sqrt", {c.op("sub", {c.op("mul", {a, a}), b})});
  const ValueId erfinv = c.op("mul", {sign, c.op("sqrt", {c.op("sub", {root, a})})});
  return c.op("mul", {erfinv, k(std::sqrt(2.0))});
}

// Softmax over the scores that are not (nearly) zero: a zero score stays zero, as
// onnxruntime's SOFTMAX_ZERO skips it (|v| <= 1e-7 is zero there).
ValueId softmax_zero(NodeContext& c, ValueId s) {
  const DType f = DType::kFloat32;
  const ValueId top = c.op("max", {s}, {{"axis", int64_t{-1}}});
  const ValueId live = c.op("greater", {c.op("abs", {s}), c.scalar(f, 1e-7)});
  const ValueId e = c.op("exp", {c.op("sub", {s, top})});
  const ValueId zero_part = c.op("mul", {s, c.op("exp", {c.op("negate", {top})})});
  const ValueId value = c.op("where", {live, e, zero_part});
  const ValueId total = c.op("sum", {c.op("where", {live, e, c.scalar(f, 0)})}, {{"axis", int64_t{-1}}});
  return c.op("div", {value, total});
}

ValueId transform_scores(NodeContext& c, ValueId s, PostTransform t) {
  switch (t) {
    case PostTransform::kNone: return s;
    case PostTransform::kLogistic: return c.op("sigmoid", {s});
    case PostTransform::kSoftmax: return c.op("softmax", {s}, {{"axis", int64_t{-1}}});
    case PostTransform::kSoftmaxZero: return softmax_zero(c, s);
    case PostTransform::kProbit: return probit(c, s);
  }
  return s;
}

ValueId two_columns(NodeContext& c, ValueId s, SecondClass how, PostTransform t) {
  ValueId first = s, second = s;
  switch (how) {
    case SecondClass::kComplement:
      if (t == PostTransform::kLogistic) second = c.op("sigmoid", {s});
      first = c.op("sub", {c.scalar(DType::kFloat32, 1), second});
      break;
    case SecondClass::kNegation: first = c.op("negate", {s}); break;
    case SecondClass::kLogistic:
      first = c.op("sigmoid", {c.op("negate", {s})});
      second = c.op("sigmoid", {s});
      break;
  }
  return c.op("concat", {first, second}, {{"axis", int64_t{1}}});
}

ValueId pick_labels(NodeContext& c, const std::vector<int64_t>& labels, ValueId index) {
  // The table is built through doubles, exact up to 2^53.
  for (int64_t l : labels)
    if (l > (int64_t{1} << 53) || l < -(int64_t{1} << 53)) c.unsupported("class label ", l, " beyond 2^53");
  const ValueId table = c.constant(KnownValue::from_doubles(
      DType::kInt64, {static_cast<int64_t>(labels.size())}, std::vector<double>(labels.begin(), labels.end())));
  return c.op("gather", {table, index}, {{"axis", int64_t{0}}});
}

ValueId float_rows(NodeContext& c) {
  const DType dt = c.dtype(0);
  if (dt != DType::kFloat32 && dt != DType::kFloat64 && dt != DType::kInt32 && dt != DType::kInt64)
    c.unsupported("X of ", dtype_name(dt), " (float32/64 and int32/64 only)");
  ValueId x = c.cast(c.input(0), DType::kFloat32);
  if (c.rank(0) == 1) return c.reshape(x, {Dim(1), c.type(0).dims[0]});
  if (c.rank(0) != 2) c.unsupported("X of rank ", c.rank(0), " (rank 1 or 2, [N, F], only)");
  return x;
}

}  // namespace maxc::onnx

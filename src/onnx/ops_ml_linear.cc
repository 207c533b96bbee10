// The linear operators of ai.onnx.ml, as onnxruntime computes them (in float32):
//   LinearClassifier: scores = X W^T + intercepts, W [C, F] with C = the intercepts' count.
//     Labels come from the raw scores: with one score, score > 0 picks classlabels[1] (or 1)
//     over classlabels[0] (or 0); with more, the first highest score's label. A single score
//     with two labels is widened to [1 - s, s], LOGISTIC applied to s first (PROBIT, which
//     would leave the second column unwritten, is refused); otherwise post_transform applies
//     to rows of two or more scores, and only PROBIT to a single one. multi_class is
//     ignored, as there.
//   LinearRegressor: X W^T (+ intercepts when there is one per target); post_transform as for
//     the classifier's scores.
//   Scaler: (X - offset) * scale along the last axis (offset and scale of length F or 1).
//   Normalizer: each row divided by its MAX, L1 norm (sum |x|) or L2 norm (sign(x) *
//     sqrt(x^2 / sum x^2)); a row whose divisor is zero is left as it is.
#include "onnx/ml_common.h"

namespace maxc::onnx {
namespace {

// X [N, F] times the transposed [C, F] coefficients, plus the intercepts (when given).
ValueId affine(NodeContext& c, ValueId x, const std::vector<double>& coefficients, int64_t classes,
               const std::vector<double>& intercepts) {
  if (classes < 1) c.invalid("the model has ", classes, " targets or classes");
  const int64_t n = static_cast<int64_t>(coefficients.size());
  if (n == 0 || n % classes != 0)
    c.invalid("coefficients has ", n, " entries, not a multiple of the ", classes, " targets or classes");
  const int64_t f = n / classes;
  const Dim& xf = c.type_of(x).dims[1];
  if (xf.is_static() && xf.static_value() != f)
    c.invalid("X has ", xf.static_value(), " features; the coefficients are for ", f);
  std::vector<double> wt(static_cast<size_t>(n));
  for (int64_t k = 0; k < classes; ++k)
    for (int64_t j = 0; j < f; ++j) wt[static_cast<size_t>(j * classes + k)] = coefficients[static_cast<size_t>(k * f + j)];
  ValueId y = c.op("matmul", {x, c.constant(KnownValue::from_doubles(DType::kFloat32, {f, classes}, wt))});
  if (!intercepts.empty()) y = c.op("add", {y, c.constant(KnownValue::from_doubles(DType::kFloat32, {classes}, intercepts))});
  return y;
}

// post_transform on [N, C] scores as onnxruntime applies it without a second class: to rows
// of two or more, and only PROBIT to a single score.
ValueId transform_rows(NodeContext& c, ValueId scores, int64_t columns, PostTransform t) {
  if (columns > 1) return transform_scores(c, scores, t);
  return t == PostTransform::kProbit ? probit(c, scores) : scores;
}

void import_linear_classifier(NodeContext& c) {
  const std::vector<int64_t> labels = int_class_labels(c, "classlabels_ints", "classlabels_strings");
  const std::optional<std::vector<float>> coef = c.attr_floats("coefficients");
  if (!coef) c.invalid("attribute 'coefficients' is required");
  const std::vector<double> intercepts = floats_attr(c, "intercepts");
  if (intercepts.empty()) c.invalid("attribute 'intercepts' is required (its count is the number of classes)");
  const int64_t classes = static_cast<int64_t>(intercepts.size());
  const PostTransform t = post_transform(c);
  const ValueId scores = affine(c, float_rows(c), {coef->begin(), coef->end()}, classes, intercepts);
  const Dim n = c.type_of(scores).dims[0];

  ValueId label;
  if (classes == 1) {
    const ValueId positive = c.op("greater", {c.reshape(scores, {n}), c.scalar(DType::kFloat32, 0)});
    label = pick_labels(c, labels.size() == 2 ? labels : std::vector<int64_t>{0, 1}, c.cast(positive, DType::kInt64));
  } else {
    if (static_cast<int64_t>(labels.size()) < classes)
      c.invalid("classlabels_ints has ", labels.size(), " labels for ", classes, " classes");
    const ValueId best = c.op("squeeze", {c.op("argmax", {scores}, {{"axis", int64_t{1}}})}, {{"axis", int64_t{1}}});
    label = pick_labels(c, labels, best);
  }
  c.set_output(0, label);

  if (classes == 1 && labels.size() == 2) {
    if (t == PostTransform::kProbit)
      c.unsupported("post_transform PROBIT with one score and two labels (onnxruntime leaves the second column unset)");
    return c.set_output(1, two_columns(c, scores, SecondClass::kComplement, t));
  }
  c.set_output(1, transform_rows(c, scores, classes, t));
}

void import_linear_regressor(NodeContext& c) {
  const std::optional<std::vector<float>> coef = c.attr_floats("coefficients");
  if (!coef) c.invalid("attribute 'coefficients' is required");
  const int64_t targets = c.attr_int("targets", 1);
  std::vector<double> intercepts = floats_attr(c, "intercepts");
  if (static_cast<int64_t>(intercepts.size()) != targets) intercepts.clear();  // onnxruntime ignores them then
  const ValueId y = affine(c, float_rows(c), {coef->begin(), coef->end()}, targets, intercepts);
  c.set_output(0, transform_rows(c, y, targets, post_transform(c)));
}

// A per-feature attribute as a float32 constant: [F] or a scalar when it has one entry.
ValueId per_feature(NodeContext& c, std::string_view name, double absent) {
  std::vector<double> v = floats_attr(c, name);
  if (v.empty()) v = {absent};
  const Dim last = c.rank(0) == 0 ? Dim(1) : c.type(0).dims.back();
  if (v.size() > 1 && last.is_static() && last.static_value() != static_cast<int64_t>(v.size()))
    c.invalid("attribute '", name, "' has ", v.size(), " entries; X has ", last.static_value(), " features");
  if (v.size() == 1) return c.scalar(DType::kFloat32, v[0]);
  return c.constant(KnownValue::from_doubles(DType::kFloat32, {static_cast<int64_t>(v.size())}, v));
}

void import_scaler(NodeContext& c) {
  const DType dt = c.dtype(0);
  if (dt != DType::kFloat32 && dt != DType::kFloat64 && dt != DType::kInt32 && dt != DType::kInt64)
    c.unsupported("Scaler of ", dtype_name(dt), " (float32/64 and int32/64 only)");
  const ValueId x = c.cast(c.input(0), DType::kFloat32);
  c.set_output(0, c.op("mul", {c.op("sub", {x, per_feature(c, "offset", 0)}), per_feature(c, "scale", 1)}));
}

void import_normalizer(NodeContext& c) {
  const DType dt = c.dtype(0);
  if (dt != DType::kFloat32 && dt != DType::kFloat64 && dt != DType::kInt32 && dt != DType::kInt64)
    c.unsupported("Normalizer of ", dtype_name(dt), " (float32/64 and int32/64 only)");
  if (c.rank(0) < 1 || c.rank(0) > 2) c.invalid("X must be [C] or [N, C], it has rank ", c.rank(0));
  const std::string norm = c.attr_string("norm", "MAX");
  const ValueId x = c.cast(c.input(0), DType::kFloat32);
  const ValueId zero = c.scalar(DType::kFloat32, 0);
  auto along = [&](const char* op, ValueId v) { return c.op(op, {v}, {{"axis", int64_t{-1}}}); };
  ValueId divisor, y;
  if (norm == "MAX") {
    divisor = along("max", x);
    y = c.op("div", {x, divisor});
  } else if (norm == "L1") {
    divisor = along("sum", c.op("abs", {x}));
    y = c.op("div", {x, divisor});
  } else if (norm == "L2") {
    const ValueId squares = c.op("mul", {x, x});
    divisor = along("sum", squares);
    const ValueId magnitude = c.op("sqrt", {c.op("div", {squares, divisor})});
    y = c.op("where", {c.op("less", {x, zero}), c.op("negate", {magnitude}), magnitude});
  } else {
    c.invalid("norm '", norm, "' (MAX, L1 or L2)");
  }
  c.set_output(0, c.op("where", {c.op("equal", {divisor, zero}), x, y}));
}

}  // namespace

void register_ml_linear_importers(ImportTable& t) {
  t["ai.onnx.ml.LinearClassifier"] = import_linear_classifier;
  t["ai.onnx.ml.LinearRegressor"] = import_linear_regressor;
  t["ai.onnx.ml.Scaler"] = import_scaler;
  t["ai.onnx.ml.Normalizer"] = import_normalizer;
}

}  // namespace maxc::onnx

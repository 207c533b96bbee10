// The encoders of ai.onnx.ml, as onnxruntime computes them:
//   Imputer: x where it equals replaced_value_float (any NaN when that is NaN) or
//     replaced_value_int64 becomes the imputed value (one, or one per feature on the last
//     axis); float32 and int64 only, as there.
//   OneHotEncoder: X.shape + [categories], float32, 1 at the first position of x (cast to
//     int64, truncating) in cats_int64s. An unknown value gives a row of zeros; onnxruntime
//     fails the run instead when zeros = 0, which a graph cannot. String categories refused.
//   LabelEncoder (opset 2+): each x replaced by the value of its key (the first one when a
//     key repeats, as onnxruntime keeps it), else the default. A NaN key is refused: whether
//     it matches NaN depends on the ai.onnx.ml opset (which the importer is not told) and on
//     the peer (onnxruntime and ONNX's reference disagree). Keys and values as int64s,
//     floats or tensors; strings refused.
#include <cmath>
#include <limits>

#include "onnx/ml_common.h"
#include "onnx/tensor_data.h"

namespace maxc::onnx {
namespace {

// ---- Imputer ----

void import_imputer(NodeContext& c) {
  const DType dt = c.dtype(0);
  std::vector<double> imputed;
  ValueId match;
  if (dt == DType::kFloat32) {
    imputed = floats_attr(c, "imputed_value_floats");
    const double replaced = c.attr_float("replaced_value_float", 0);
    match = std::isnan(replaced) ? c.op("is_nan", {c.input(0)}) : c.op("equal", {c.input(0), c.scalar(dt, replaced)});
  } else if (dt == DType::kInt64) {
    for (int64_t v : c.attr_ints("imputed_value_int64s").value_or(std::vector<int64_t>{})) imputed.push_back(static_cast<double>(v));
    const int64_t replaced = c.attr_int("replaced_value_int64", 0);
    match = c.op("equal", {c.input(0), c.constant(KnownValue::from_doubles(dt, {}, {static_cast<double>(replaced)}))});
  } else {
    c.unsupported("Imputer of ", dtype_name(dt), " (float32 and int64 only)");
  }
  if (imputed.empty()) c.invalid("the imputed values (imputed_value_floats or imputed_value_int64s) are required");
  const Dim last = c.rank(0) == 0 ? Dim(1) : c.type(0).dims.back();
  if (imputed.size() > 1 && last.is_static() && last.static_value() != static_cast<int64_t>(imputed.size()))
    c.invalid(imputed.size(), " imputed values for ", last.static_value(), " features");
  const ValueId with = imputed.size() == 1 ? c.scalar(dt, imputed[0])
                                           : c.constant(KnownValue::from_doubles(dt, {static_cast<int64_t>(imputed.size())}, imputed));
  c.set_output(0, c.op("where", {match, with, c.input(0)}));
}

// ---- OneHotEncoder ----

// Int64 values as doubles for a constant: exact up to 2^53.
std::vector<double> exact_doubles(NodeContext& c, const std::vector<int64_t>& v, std::string_view what) {
  std::vector<double> out;
  for (int64_t x : v) {
    if (x > (int64_t{1} << 53) || x < -(int64_t{1} << 53)) c.unsupported(what, " value ", x, " beyond 2^53");
    out.push_back(static_cast<double>(x));
  }
  return out;
}

void import_one_hot_encoder(NodeContext& c) {
  const AttributeProto* strings = c.attr("cats_strings");
  if (strings && !strings->strings.empty()) c.unsupported("string categories (cats_strings): max_c has no string tensors");
  const std::optional<std::vector<int64_t>> cats = c.attr_ints("cats_int64s");
  if (!cats || cats->empty()) c.invalid("attribute 'cats_int64s' is required");
  const DType dt = c.dtype(0);
  if (dt != DType::kInt64 && dt != DType::kInt32 && dt != DType::kFloat32 && dt != DType::kFloat64)
    c.unsupported("OneHotEncoder of ", dtype_name(dt), " (int32/64 and float32/64 only)");
  const int64_t k = static_cast<int64_t>(cats->size());
  std::vector<double> first(cats->size(), 1.0);
  for (size_t i = 0; i < cats->size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if ((*cats)[j] == (*cats)[i]) first[i] = 0;  // a repeated category's later column stays 0
  const ValueId table = c.constant(KnownValue::from_doubles(DType::kInt64, {k}, exact_doubles(c, *cats, "category")));
  const ValueId x = c.op("unsqueeze", {c.cast(c.input(0), DType::kInt64)}, {{"axis", int64_t{-1}}});
  ValueId hit = c.op("equal", {x, table});
  if (std::count(first.begin(), first.end(), 0.0) > 0)
    hit = c.op("logical_and", {hit, c.op("not_equal", {c.constant(KnownValue::from_doubles(DType::kFloat32, {k}, first)),
                                                       c.scalar(DType::kFloat32, 0)})});
  c.set_output(0, c.cast(hit, DType::kFloat32));
}

// ---- LabelEncoder ----

struct Column {
  DType dtype = DType::kInvalid;
  std::vector<double> values;
};

// keys_* or values_* (`side`): int64s, floats or a tensor; strings refused.
Column encoder_column(NodeContext& c, const std::string& side) {
  const AttributeProto* s = c.attr(side + "_strings");
  if (s && !s->strings.empty()) c.unsupported("string ", side, " (", side, "_strings): max_c has no string tensors");
  if (std::optional<std::vector<int64_t>> v = c.attr_ints(side + "_int64s"))
    return {DType::kInt64, exact_doubles(c, *v, side)};
  if (c.attr(side + "_floats")) return {DType::kFloat32, floats_attr(c, side + "_floats")};
  if (const AttributeProto* a = c.attr(side + "_tensor")) {
    if (a->type != AttrType::kTensor || !a->t) c.invalid("attribute '", side, "_tensor' must be a tensor");
    KnownValue k = KnownValue::from_tensor(tensor_from_proto(*a->t, c.label() + " attribute '" + side + "_tensor'", ""));
    std::optional<std::vector<double>> v = k.doubles();
    if (!v) c.unsupported("attribute '", side, "_tensor' of dtype ", dtype_name(k.dtype));
    return {k.dtype, *v};
  }
  c.invalid("the ", side, " (", side, "_int64s, ", side, "_floats or ", side, "_tensor) are required");
}

void import_label_encoder(NodeContext& c) {
  if (c.opset() < 2) c.unsupported("LabelEncoder of ai.onnx.ml opset 1 (string <-> int64 classes only)");
  const Column keys = encoder_column(c, "keys"), values = encoder_column(c, "values");
  if (keys.values.size() != values.values.size() || keys.values.empty())
    c.invalid(keys.values.size(), " keys and ", values.values.size(), " values (the same non-zero count)");
  if (keys.dtype != c.dtype(0))
    c.invalid("the keys are ", dtype_name(keys.dtype), " but X is ", dtype_name(c.dtype(0)));
  double fallback = dtype_is_float(values.dtype) ? -0.0 : -1.0;
  if (const AttributeProto* d = c.attr("default_tensor")) {
    if (d->type != AttrType::kTensor || !d->t) c.invalid("attribute 'default_tensor' must be a tensor");
    KnownValue k = KnownValue::from_tensor(tensor_from_proto(*d->t, c.label() + " attribute 'default_tensor'", ""));
    std::optional<std::vector<double>> v = k.doubles();
    if (!v || v->size() != 1) c.invalid("default_tensor must hold one number");
    fallback = (*v)[0];
  } else if (values.dtype == DType::kInt64) {
    fallback = static_cast<double>(c.attr_int("default_int64", -1));
  } else if (c.attr("default_float")) {
    fallback = c.attr_float("default_float", -0.0f);
  }
  const int64_t n = static_cast<int64_t>(keys.values.size());
  const ValueId x = c.op("unsqueeze", {c.input(0)}, {{"axis", int64_t{-1}}});
  const ValueId key = c.constant(KnownValue::from_doubles(keys.dtype, {n}, keys.values));
  for (double k : keys.values)
    if (std::isnan(k))
      c.unsupported("a NaN key: opset 4's text has it match any NaN, onnxruntime does so from opset 4 and ONNX's "
                    "reference does not, and the importer is not told the ai.onnx.ml opset");
  const ValueId hit = c.op("equal", {x, key});
  // The first matching key's position (onnxruntime keeps a repeated key's first value), or n.
  std::vector<double> positions(keys.values.size());
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<double>(i);
  const ValueId none = c.scalar(DType::kInt64, static_cast<double>(n));
  const ValueId at = c.op("min", {c.op("where", {hit, c.constant(KnownValue::from_doubles(DType::kInt64, {n}, positions)), none})},
                          {{"axis", int64_t{-1}}});
  const ValueId found = c.op("squeeze", {c.op("less", {at, none})}, {{"axis", int64_t{-1}}});
  const ValueId index = c.op("squeeze", {c.op("min", {at, c.scalar(DType::kInt64, static_cast<double>(n - 1))})}, {{"axis", int64_t{-1}}});
  const ValueId value = c.op("gather", {c.constant(KnownValue::from_doubles(values.dtype, {n}, values.values)), index},
                             {{"axis", int64_t{0}}});
  c.set_output(0, c.op("where", {found, value, c.scalar(values.dtype, fallback)}));
}

}  // namespace

void register_ml_encoder_importers(ImportTable& t) {
  t["ai.onnx.ml.Imputer"] = import_imputer;
  t["ai.onnx.ml.OneHotEncoder"] = import_one_hot_encoder;
  t["ai.onnx.ml.LabelEncoder"] = import_label_encoder;
}

}  // namespace maxc::onnx

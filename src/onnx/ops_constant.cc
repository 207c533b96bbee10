// Operators that create tensors: Constant, ConstantOfShape, Range. Their results are known
// values where the data is small and static (they fold into shape arithmetic and become
// constants only when an op needs them as tensors).
#include <algorithm>
#include <cmath>

#include "onnx/bound_dims.h"
#include "onnx/dtypes.h"
#include "onnx/node_context.h"
#include "onnx/size_limits.h"
#include "onnx/tensor_data.h"

namespace maxc::onnx {
namespace {

// Data bigger than this is made by broadcasting a scalar rather than stored in the graph.
constexpr int64_t kMaxFilledConstant = 1 << 20;

void import_constant(NodeContext& c) {
  if (c.node().attributes.size() != 1) c.invalid("needs exactly one attribute, got ", c.node().attributes.size());
  const AttributeProto& a = c.node().attributes[0];
  const std::string what = c.label() + " attribute '" + a.name + "'";
  if (a.name == "value") {
    if (!a.t) c.invalid("attribute 'value' holds no tensor");
    return c.set_known_output(0, KnownValue::from_tensor(tensor_from_proto(*a.t, what, "")));
  }
  auto n = [](size_t s) { return static_cast<int64_t>(s); };
  if (a.name == "value_float") return c.set_known_output(0, KnownValue::from_doubles(DType::kFloat32, {}, {a.f}));
  if (a.name == "value_floats") {
    std::vector<double> v(a.floats.begin(), a.floats.end());
    return c.set_known_output(0, KnownValue::from_doubles(DType::kFloat32, {n(v.size())}, v));
  }
  if (a.name == "value_int") return c.set_known_output(0, KnownValue::from_dims(DType::kInt64, {}, {Dim(a.i)}));
  if (a.name == "value_ints") {
    std::vector<Dim> v(a.ints.begin(), a.ints.end());
    int64_t count = n(v.size());  // before v moves into the call
    return c.set_known_output(0, KnownValue::from_dims(DType::kInt64, {count}, std::move(v)));
  }
  c.unsupported("attribute '", a.name, "' (string and sparse constants are not supported)");
}

// The fill value: attribute 'value' (a one-element tensor), float32 0 by default.
KnownValue fill_value(NodeContext& c) {
  const AttributeProto* a = c.attr("value");
  if (!a) return KnownValue::from_doubles(DType::kFloat32, {}, {0.0});
  if (!a->t) c.invalid("attribute 'value' holds no tensor");
  KnownValue v = KnownValue::from_tensor(tensor_from_proto(*a->t, c.label() + " attribute 'value'", ""));
  if (v.num_elements() != 1) c.invalid("attribute 'value' must hold one element");
  v.shape = {};
  v.data = v.data->view(v.dtype, &v.shape);
  return v;
}

void import_constant_of_shape(NodeContext& c) {
  std::vector<Dim> shape = input_dims(c, 0, "input", "constant_of_shape");
  KnownValue value = fill_value(c);
  bool all_static = true;
  std::vector<int64_t> static_shape;
  for (const Dim& d : shape) {
    all_static = all_static && d.is_static();
    if (d.is_static()) {
      if (d.static_value() < 0) c.invalid("the shape has the negative dim ", d);
      static_shape.push_back(d.static_value());
    }
  }
  const int64_t count = checked_product(static_shape).value_or(INT64_MAX);
  if (all_static && count <= kMaxFilledConstant) {
    if (value.ints)
      return c.set_known_output(0, KnownValue::from_dims(value.dtype, static_shape,
                                                          std::vector<Dim>(static_cast<size_t>(count), (*value.ints)[0])));
    if (auto v = value.doubles(); v && (value.dtype == DType::kFloat32 || value.dtype == DType::kFloat64))
      return c.set_known_output(
          0, KnownValue::from_doubles(value.dtype, static_shape, std::vector<double>(static_cast<size_t>(count), (*v)[0])));
  }
  ValueId scalar = c.constant(value);
  c.set_output(0, c.op("broadcast_to", {scalar}, {{"shape", shape}}));
}

// The Dim a one-element value of c's graph holds when it is a shape's element cast to
// another dtype: shape_to_tensor of [d], reshaped and cast (how a known symbolic value
// materializes, value_table.cc). A float Cast of a dim is computed at run time, but a
// Range over it (the anchor grid of a YOLO head: arange(w) in float) needs its length.
std::optional<Dim> dim_behind(const Graph& g, ValueId v) {
  for (int hops = 0; hops < 4; ++hops) {
    const int64_t k = g.value(v).op;
    if (k < 0) return std::nullopt;
    const Op& op = g.ops()[static_cast<size_t>(k)];
    const std::string& name = op.schema->name;
    if (name == "shape_to_tensor") {
      const auto& dims = op.attrs.get<std::vector<Dim>>("shape", "shape_to_tensor");
      return dims.size() == 1 ? std::optional<Dim>(dims[0]) : std::nullopt;
    }
    if ((name != "cast" && name != "reshape") || op.inputs.size() != 1) return std::nullopt;
    v = op.inputs[0];
  }
  return std::nullopt;
}

// An integer-valued static scalar of input i (a float Range's start 0.0 and delta 1.0).
std::optional<int64_t> integral_scalar(NodeContext& c, size_t i) {
  const KnownValue* k = c.known(i);
  auto v = k ? k->doubles() : std::nullopt;
  if (!v || v->size() != 1 || (*v)[0] != std::floor((*v)[0]) || std::abs((*v)[0]) > 1e15) return std::nullopt;
  return static_cast<int64_t>((*v)[0]);
}

// Range(start, limit, delta): folded when all are known and small; with a symbolic limit,
// our range op with the length as out_dim (position ids: Range(0, seq_len, 1)).
void import_range(NodeContext& c) {
  DType dt = c.dtype(0);
  const KnownValue* ks = c.known(0);
  const KnownValue* kl = c.known(1);
  const KnownValue* kd = c.known(2);
  if (ks && kl && kd && ks->is_static() && kl->is_static() && kd->is_static()) {
    double start = c.known_scalar(0, "start"), limit = c.known_scalar(1, "limit"), delta = c.known_scalar(2, "delta");
    if (delta == 0) c.invalid("delta is 0");
    double n = std::max(std::ceil((limit - start) / delta), 0.0);
    if (n <= kMaxFilledConstant) {
      std::vector<double> v(static_cast<size_t>(n));
      for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i) * delta;
      int64_t len = static_cast<int64_t>(n);
      if (dtype_is_integral(dt)) {
        std::vector<Dim> dims;
        for (double x : v) dims.emplace_back(static_cast<int64_t>(x));
        return c.set_known_output(0, KnownValue::from_dims(dt, {len}, std::move(dims)));
      }
      return c.set_output(0, c.constant(KnownValue::from_doubles(dt, {len}, v)));
    }
  }
  std::optional<Dim> length;
  if (ks && kd && kl && kl->ints && ks->static_ints() && kd->static_ints() && ks->num_elements() == 1 &&
      kd->num_elements() == 1) {
    int64_t start = (*ks->static_ints())[0], delta = (*kd->static_ints())[0];
    const Dim& limit = (*kl->ints)[0];
    if (delta > 0) length = floordiv(limit - start + (delta - 1), delta);
  }
  // A float range from a dim: integral start and delta, the limit a dim cast to float.
  std::optional<int64_t> start = integral_scalar(c, 0), delta = integral_scalar(c, 2);
  std::optional<Dim> limit = dim_behind(c.graph(), c.input(1));
  if (!length && start && delta && *delta > 0 && limit && c.type(1).num_elements() == Dim(1))
    length = floordiv(*limit - *start + (*delta - 1), *delta);
  if (!length) c.needs_known({0, 1, 2}, "the length of the range must be known when the model is imported");
  c.set_output(0, c.op("range", {c.input(0), c.input(1), c.input(2)}, {{"out_dim", std::vector<Dim>{*length}}}));
}

// EyeLike: ones on the k-th diagonal of a static 2-D shape.
void import_eye_like(NodeContext& c) {
  const std::vector<Dim>& d = c.type(0).dims;
  if (d.size() != 2 || !d[0].is_static() || !d[1].is_static()) c.unsupported("needs a static 2-D input");
  int64_t rows = d[0].static_value(), cols = d[1].static_value(), k = c.attr_int("k", 0);
  DType dt = c.attr("dtype") ? to_dtype(static_cast<int32_t>(c.attr_int("dtype", 1)), c.label() + " attribute 'dtype'")
                             : c.dtype(0);
  std::vector<double> v(static_cast<size_t>(bounded_elements(c, {rows, cols}, "the identity")), 0.0);
  // Only the rows whose diagonal element exists: [2^40, 0] is an empty table, not 2^40 checks.
  if (k > -rows && k < cols)
    for (int64_t i = std::max<int64_t>(0, -k), end = std::min(rows, cols - k); i < end; ++i)
      v[static_cast<size_t>(i * cols + i + k)] = 1.0;  // i + k in [0, cols)
  c.set_output(0, c.constant(KnownValue::from_doubles(dt, {rows, cols}, v)));
}

}  // namespace

void register_constant_importers(ImportTable& t) {
  t["Constant"] = import_constant;
  t["ConstantOfShape"] = import_constant_of_shape;
  t["Range"] = import_range;
  t["EyeLike"] = import_eye_like;
}

}  // namespace maxc::onnx

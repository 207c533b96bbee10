// Elementwise operators: arithmetic, comparison, logic, math functions and activations.
// ONNX broadcasts numpy-style like our binary ops. Where ONNX and our ops differ (integer
// Div truncates, Pow keeps the base's type, activations with parameters), the mapping
// composes several of our ops. Integer ops on known values fold at import time (fold.h).
#include <cmath>
#include <numbers>

#include "onnx/dim_agreement.h"
#include "onnx/dtypes.h"
#include "onnx/fold.h"
#include "onnx/node_context.h"

namespace maxc::onnx {
namespace {

bool is_float(DType d) { return dtype_is_float(d); }

// ---- folding of integer shape arithmetic ----

std::optional<int64_t> as_int(const Dim& d) {
  return d.is_static() ? std::optional<int64_t>(d.static_value()) : std::nullopt;
}

// Tries to fold the node's inputs [0, n) with fn; true when the output is set.
bool try_fold(NodeContext& c, size_t n, DType out, const DimFn& fn) {
  std::vector<const KnownValue*> ks;
  for (size_t i = 0; i < n; ++i) {
    if (!c.has_input(i)) return false;
    ks.push_back(c.known(i));
  }
  std::optional<KnownValue> k = fold_elementwise(ks, out, fn);
  if (!k) return false;
  c.set_known_output(0, std::move(*k));
  return true;
}

std::optional<Dim> fold_arith(const std::string& op, const Dim& a, const Dim& b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  auto x = as_int(a), y = as_int(b);
  if (op == "Div") {
    if (x && y) return *y == 0 ? std::nullopt : std::optional<Dim>(*x / *y);  // C++ truncates, like ONNX
    if (y && *y > 0) return floordiv(a, *y);  // a symbolic dim is >= 0, where floor == trunc
    return std::nullopt;
  }
  if (!x || !y) return std::nullopt;
  if (op == "Mod") {
    if (*y == 0) return std::nullopt;
    int64_t r = *x % *y;
    return (r != 0 && ((r < 0) != (*y < 0))) ? r + *y : r;
  }
  if (op == "Max") return std::max(*x, *y);
  if (op == "Min") return std::min(*x, *y);
  return std::nullopt;
}

std::optional<Dim> fold_compare(const std::string& op, const Dim& a, const Dim& b) {
  if (op == "Equal" && a == b) return Dim(1);
  auto x = as_int(a), y = as_int(b);
  if (!x || !y) return std::nullopt;
  if (op == "Equal") return Dim(*x == *y);
  if (op == "Greater") return Dim(*x > *y);
  if (op == "Less") return Dim(*x < *y);
  if (op == "GreaterOrEqual") return Dim(*x >= *y);
  if (op == "LessOrEqual") return Dim(*x <= *y);
  return std::nullopt;
}

// ---- binary arithmetic ----

// Both operands in the first one's dtype (ONNX requires equal types; Pow allows a different
// exponent type and keeps the base's).
// Dims the algebra cannot match are asserted on b (dim_agreement.h).
std::pair<ValueId, ValueId> operands(NodeContext& c) {
  ValueId a = c.input(0), b = c.input(1);
  b = assert_broadcastable(c, b, c.type_of(a).dims, "input 1");
  return {a, c.cast(b, c.type_of(a).dtype)};
}

// Float values we can evaluate at import (fold.h's fold_numbers): float32, float64 and the
// half types, which the kernels also compute in float32.
bool foldable_float(DType d) { return d == DType::kFloat32 || d == DType::kFloat64 || dtype_is_half(d); }

// Tries to fold the node's float inputs [0, n) with fn; true when the output is set.
bool try_fold_floats(NodeContext& c, size_t n, const NumberFn& fn) {
  if (!foldable_float(c.dtype(0))) return false;
  std::vector<const KnownValue*> ks;
  for (size_t i = 0; i < n; ++i) {
    if (!c.has_input(i) || c.dtype(i) != c.dtype(0)) return false;
    ks.push_back(c.known(i));
  }
  std::optional<KnownValue> k = fold_numbers(ks, c.dtype(0), fn);
  if (!k) return false;
  c.set_known_output(0, std::move(*k));
  return true;
}

std::optional<double> fold_float_arith(const std::string& op, double a, double b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return a / b;
  return std::nullopt;
}

void import_arith(NodeContext& c, const std::string& op_type, const char* ours) {
  if (!is_float(c.dtype(0)) &&
      try_fold(c, 2, c.dtype(0), [&](const std::vector<Dim>& v) { return fold_arith(op_type, v[0], v[1]); }))
    return;
  if (fold_float_arith(op_type, 0, 1) &&
      try_fold_floats(c, 2, [&](const std::vector<double>& v) { return *fold_float_arith(op_type, v[0], v[1]); }))
    return;
  auto [a, b] = operands(c);
  c.set_output(0, c.op(ours, {a, b}));
}

// ONNX integer division truncates toward zero; ours is true division. float64 holds every
// int32 exactly (and int64 up to 2^53).
void import_div(NodeContext& c) {
  DType dt = c.dtype(0);
  if (is_float(dt)) return import_arith(c, "Div", "div");
  if (try_fold(c, 2, dt, [](const std::vector<Dim>& v) { return fold_arith("Div", v[0], v[1]); })) return;
  auto [a, b] = operands(c);
  ValueId q = c.op("div", {c.cast(a, DType::kFloat64), c.cast(b, DType::kFloat64)});
  c.set_output(0, c.cast(c.op("trunc", {q}), dt));
}

void import_mod(NodeContext& c) {
  DType dt = c.dtype(0);
  if (c.attr_int("fmod", 0) == 0) return import_arith(c, "Mod", "mod");  // numpy's sign rule, as ours
  // C's fmod: the sign of the dividend, a - trunc(a / b) * b.
  auto [a, b] = operands(c);
  DType work = is_float(dt) ? dt : DType::kFloat64;
  ValueId fa = c.cast(a, work), fb = c.cast(b, work);
  ValueId q = c.op("trunc", {c.op("div", {fa, fb})});
  c.set_output(0, c.cast(c.op("sub", {fa, c.op("mul", {q, fb})}), dt));
}

void import_pow(NodeContext& c) {
  ValueId a = c.input(0), b = c.input(1);
  DType dt = c.dtype(0);
  if (!is_float(dt)) {
    // Integer powers through float64, as ONNX Runtime does; exact below 2^53.
    ValueId r = c.op("pow", {c.cast(a, DType::kFloat64), c.cast(b, DType::kFloat64)});
    return c.set_output(0, c.cast(c.op("round", {r}), dt));
  }
  c.set_output(0, c.op("pow", {a, c.cast(b, dt)}));
}

// Max, Min, Sum, Mean: one or more inputs, folded pairwise.
void import_variadic(NodeContext& c, const std::string& op_type, const char* ours) {
  if (c.num_inputs() == 0) c.invalid("needs at least one input");
  if (c.num_inputs() == 2 && (op_type == "Max" || op_type == "Min") && !is_float(c.dtype(0)) &&
      try_fold(c, 2, c.dtype(0), [&](const std::vector<Dim>& v) { return fold_arith(op_type, v[0], v[1]); }))
    return;
  ValueId acc = c.input(0);
  for (size_t i = 1; i < c.num_inputs(); ++i) acc = c.op(ours, {acc, c.input(i)});
  if (op_type == "Mean" && c.num_inputs() > 1)
    acc = c.op("div", {acc, c.scalar(c.type_of(acc).dtype, static_cast<double>(c.num_inputs()))});
  c.set_output(0, acc);
}

// ---- comparison and logic ----

void import_compare(NodeContext& c, const std::string& op_type, const char* ours) {
  if (!is_float(c.dtype(0)) &&
      try_fold(c, 2, DType::kBool, [&](const std::vector<Dim>& v) { return fold_compare(op_type, v[0], v[1]); }))
    return;
  c.set_output(0, c.op(ours, {c.input(0), c.input(1)}));
}

// And/Or/Xor on known conditions fold, so a Where they select with (GQA's repeat count in
// Attention's function body) stays known shape arithmetic.
std::optional<Dim> fold_logical(const std::string& op, const Dim& a, const Dim& b) {
  auto x = as_int(a), y = as_int(b);
  if (!x || !y) return std::nullopt;
  bool p = *x != 0, q = *y != 0;
  if (op == "And") return Dim(p && q);
  if (op == "Or") return Dim(p || q);
  return Dim(p != q);
}

void import_logical(NodeContext& c, const std::string& op_type, const char* ours) {
  if (try_fold(c, 2, DType::kBool, [&](const std::vector<Dim>& v) { return fold_logical(op_type, v[0], v[1]); }))
    return;
  c.set_output(0, c.op(ours, {c.input(0), c.input(1)}));
}

void import_not(NodeContext& c) {
  if (try_fold(c, 1, DType::kBool, [](const std::vector<Dim>& v) -> std::optional<Dim> {
        auto x = as_int(v[0]);
        return x ? std::optional<Dim>(Dim(*x == 0)) : std::nullopt;
      }))
    return;
  c.set_output(0, c.op("logical_not", {c.input(0)}));
}

void import_where(NodeContext& c) {
  if (!is_float(c.dtype(1)) && try_fold(c, 3, c.dtype(1), [](const std::vector<Dim>& v) -> std::optional<Dim> {
        auto cond = as_int(v[0]);
        if (!cond) return std::nullopt;
        return *cond ? v[1] : v[2];
      }))
    return;
  c.set_output(0, c.op("where", {c.input(0), c.input(1), c.input(2)}));
}

void import_is_inf(NodeContext& c) {
  bool neg = c.attr_int("detect_negative", 1) != 0, pos = c.attr_int("detect_positive", 1) != 0;
  ValueId x = c.input(0);
  ValueId inf = c.op("is_inf", {x});
  if (neg && pos) return c.set_output(0, inf);
  if (!neg && !pos) return c.set_output(0, c.op("logical_and", {inf, c.op("is_nan", {x})}));  // all false
  ValueId zero = c.scalar(c.type_of(x).dtype, 0);
  ValueId side = pos ? c.op("greater", {x, zero}) : c.op("less", {x, zero});
  c.set_output(0, c.op("logical_and", {inf, side}));
}

// ---- unary math ----

// Neg folds on known integers: LayerNormalization's function body negates its axis to count
// the reduced axes (ConstantOfShape(-axis)).
void import_neg(NodeContext& c) {
  if (!is_float(c.dtype(0)) && try_fold(c, 1, c.dtype(0), [](const std::vector<Dim>& v) -> std::optional<Dim> {
        return -v[0];
      }))
    return;
  if (try_fold_floats(c, 1, [](const std::vector<double>& v) { return -v[0]; })) return;
  c.set_output(0, c.op("negate", {c.input(0)}));
}

ValueId num(NodeContext& c, ValueId like, double v) { return c.scalar(c.type_of(like).dtype, v); }

void import_ceil(NodeContext& c) {
  if (try_fold_floats(c, 1, [](const std::vector<double>& v) { return std::ceil(v[0]); })) return;
  ValueId x = c.input(0);
  if (!is_float(c.type_of(x).dtype)) return c.set_output(0, c.op("floor", {x}));
  c.set_output(0, c.op("negate", {c.op("floor", {c.op("negate", {x})})}));
}

void import_reciprocal(NodeContext& c) {
  ValueId x = c.input(0);
  c.set_output(0, c.op("div", {num(c, x, 1), x}));
}

void import_sign(NodeContext& c) {
  ValueId x = c.input(0);
  DType dt = c.type_of(x).dtype;
  ValueId zero = num(c, x, 0);
  ValueId pos = c.cast(c.op("greater", {x, zero}), dt), neg = c.cast(c.op("less", {x, zero}), dt);
  c.set_output(0, c.op("sub", {pos, neg}));
}

// Trigonometric and hyperbolic functions we have no op for, from the ones we have.
ValueId tan_of(NodeContext& c, ValueId x) { return c.op("div", {c.op("sin", {x}), c.op("cos", {x})}); }
ValueId asin_of(NodeContext& c, ValueId x) {
  return c.op("sub", {num(c, x, std::numbers::pi / 2), c.op("acos", {x})});
}
ValueId atan_of(NodeContext& c, ValueId x) {
  ValueId r = c.op("sqrt", {c.op("add", {c.op("mul", {x, x}), num(c, x, 1)})});
  return asin_of(c, c.op("div", {x, r}));
}
ValueId sinh_of(NodeContext& c, ValueId x) {
  ValueId d = c.op("sub", {c.op("exp", {x}), c.op("exp", {c.op("negate", {x})})});
  return c.op("mul", {d, num(c, x, 0.5)});
}
ValueId cosh_of(NodeContext& c, ValueId x) {
  ValueId s = c.op("add", {c.op("exp", {x}), c.op("exp", {c.op("negate", {x})})});
  return c.op("mul", {s, num(c, x, 0.5)});
}
// asinh(x) = sign(x) * log(|x| + sqrt(x^2 + 1)), which keeps precision for negative x.
ValueId asinh_of(NodeContext& c, ValueId x) {
  ValueId ax = c.op("abs", {x});
  ValueId r = c.op("sqrt", {c.op("add", {c.op("mul", {x, x}), num(c, x, 1)})});
  ValueId mag = c.op("log", {c.op("add", {ax, r})});
  ValueId neg = c.op("less", {x, num(c, x, 0)});
  return c.op("where", {neg, c.op("negate", {mag}), mag});
}
ValueId acosh_of(NodeContext& c, ValueId x) {
  ValueId r = c.op("sqrt", {c.op("sub", {c.op("mul", {x, x}), num(c, x, 1)})});
  return c.op("log", {c.op("add", {x, r})});
}

// softplus(x) = max(x, 0) + log1p(exp(-|x|)), which does not overflow.
ValueId softplus_of(NodeContext& c, ValueId x) {
  ValueId t = c.op("log1p", {c.op("exp", {c.op("negate", {c.op("abs", {x})})})});
  return c.op("add", {c.op("relu", {x}), t});
}

// ---- activations with parameters ----

void import_leaky_relu(NodeContext& c) {
  ValueId x = c.input(0);
  ValueId neg = c.op("mul", {x, num(c, x, c.attr_float("alpha", 0.01f))});
  c.set_output(0, c.op("where", {c.op("less", {x, num(c, x, 0)}), neg, x}));
}

void import_prelu(NodeContext& c) {
  ValueId x = c.input(0);
  ValueId neg = c.op("mul", {x, c.cast(c.input(1), c.type_of(x).dtype)});
  c.set_output(0, c.op("where", {c.op("less", {x, num(c, x, 0)}), neg, x}));
}

// alpha * (exp(x) - 1) for x < 0, scaled by gamma (Selu) or with exp(x / alpha) (Celu).
ValueId elu_like(NodeContext& c, ValueId x, double alpha, double inner_scale) {
  ValueId e = c.op("exp", {inner_scale == 1 ? x : c.op("mul", {x, num(c, x, inner_scale)})});
  ValueId neg = c.op("mul", {c.op("sub", {e, num(c, x, 1)}), num(c, x, alpha)});
  return c.op("where", {c.op("less", {x, num(c, x, 0)}), neg, x});
}

void import_elu(NodeContext& c) { c.set_output(0, elu_like(c, c.input(0), c.attr_float("alpha", 1.f), 1)); }

void import_celu(NodeContext& c) {
  double alpha = c.attr_float("alpha", 1.f);
  c.set_output(0, elu_like(c, c.input(0), alpha, 1 / alpha));
}

void import_selu(NodeContext& c) {
  ValueId x = c.input(0);
  double alpha = c.attr_float("alpha", 1.67326319217681884765625f);
  double gamma = c.attr_float("gamma", 1.05070102214813232421875f);
  c.set_output(0, c.op("mul", {elu_like(c, x, alpha, 1), num(c, x, gamma)}));
}

ValueId hard_sigmoid_of(NodeContext& c, ValueId x, double alpha, double beta) {
  ValueId y = c.op("add", {c.op("mul", {x, num(c, x, alpha)}), num(c, x, beta)});
  return c.op("clamp", {y}, {{"min", 0.0}, {"max", 1.0}});
}

void import_hard_sigmoid(NodeContext& c) {
  c.set_output(0, hard_sigmoid_of(c, c.input(0), c.attr_float("alpha", 0.2f), c.attr_float("beta", 0.5f)));
}

void import_hard_swish(NodeContext& c) {
  ValueId x = c.input(0);
  c.set_output(0, c.op("mul", {x, hard_sigmoid_of(c, x, 1.0 / 6, 0.5)}));
}

void import_thresholded_relu(NodeContext& c) {
  ValueId x = c.input(0);
  ValueId keep = c.op("greater", {x, num(c, x, c.attr_float("alpha", 1.f))});
  c.set_output(0, c.op("where", {keep, x, num(c, x, 0)}));
}

void import_shrink(NodeContext& c) {
  ValueId x = c.input(0);
  double lambd = c.attr_float("lambd", 0.5f), bias = c.attr_float("bias", 0.f);
  ValueId low = c.op("less", {x, num(c, x, -lambd)}), high = c.op("greater", {x, num(c, x, lambd)});
  ValueId inner = c.op("where", {high, c.op("sub", {x, num(c, x, bias)}), num(c, x, 0)});
  c.set_output(0, c.op("where", {low, c.op("add", {x, num(c, x, bias)}), inner}));
}

void import_gelu(NodeContext& c) {
  std::string approx = c.attr_string("approximate", "none");
  if (approx != "none" && approx != "tanh") c.invalid("attribute 'approximate' is \"", approx, "\"");
  c.set_output(0, c.op("gelu", {c.input(0)}, {{"approximate", approx}}));
}

// Clip's bounds are optional inputs (opset 11+): attributes of clamp when known, else
// elementwise max/min with the run-time values.
void import_clip(NodeContext& c) {
  ValueId x = c.input(0);
  DType dt = c.type_of(x).dtype;
  Attrs attrs;
  std::vector<std::pair<const char*, size_t>> runtime;
  // Before opset 11, the bounds were attributes.
  if (c.opset() < 11) {
    for (const char* name : {"min", "max"})
      if (c.attr(name)) attrs.set(name, static_cast<double>(c.attr_float(name, 0.0f)));
  }
  for (auto [name, i] : {std::pair<const char*, size_t>{"min", 1}, {"max", 2}}) {
    if (c.opset() < 11 || !c.has_input(i)) continue;
    const KnownValue* k = c.known(i);
    auto v = k ? k->doubles() : std::nullopt;
    if (v && v->size() == 1) attrs.set(name, (*v)[0]);
    else runtime.push_back({name, i});
  }
  // ONNX: when min > max every element becomes max.
  if (attrs.has("min") && attrs.has("max") && attrs.get<double>("min") > attrs.get<double>("max"))
    attrs.set("min", attrs.get<double>("max"));
  ValueId y = c.op("clamp", {x}, attrs);
  for (auto [name, i] : runtime)
    y = c.op(std::string(name) == "min" ? "max" : "min", {y, c.cast(c.input(i), dt)});
  c.set_output(0, y);
}

// A small static value cast at import: integers and floats to a float type, floats to
// integers (truncated, as numpy and ONNX Runtime) and bool. Declines values a cast to an
// integer cannot hold (NaN, infinities, out of range), whose result is undefined.
bool fold_cast(NodeContext& c, const KnownValue& k, DType to) {
  if (dtype_is_integral(to)) {
    std::optional<std::vector<double>> v = k.num_elements() <= kMaxFoldedNumbers ? k.doubles() : std::nullopt;
    if (!v) return false;
    for (double x : *v)
      if (!(std::fabs(x) < 9.2e18)) return false;
  }
  std::optional<KnownValue> out = fold_numbers({&k}, to, [](const std::vector<double>& v) { return v[0]; });
  if (!out) return false;
  c.set_known_output(0, std::move(*out));
  return true;
}

// round_mode (opset 24+) picks how a cast to float8_e8m0fnu rounds; our cast op rounds up,
// the default, and the attribute means nothing for other targets.
void require_round_up(NodeContext& c, DType to) {
  const std::string mode = c.attr_string("round_mode", "up");
  if (to == DType::kFloat8E8M0Fnu && mode != "up")
    c.unsupported("attribute 'round_mode' \"", mode, "\" (a cast to float8_e8m0fnu rounds \"up\" only)");
}

void import_cast(NodeContext& c, bool like) {
  DType to;
  if (like) to = c.dtype(1);
  else to = to_dtype(static_cast<int32_t>(c.attr_int("to", 0)), c.label() + " attribute 'to'");
  require_round_up(c, to);
  const KnownValue* k = c.known(0);
  if (k && k->ints && (dtype_is_integral(to) || to == DType::kBool)) {
    std::vector<Dim> v = *k->ints;
    if (to == DType::kBool)
      for (Dim& d : v)
        if (d.is_static()) d = Dim(d.static_value() != 0);
    return c.set_known_output(0, KnownValue::from_dims(to, k->shape, std::move(v)));
  }
  if (k && foldable_float(to) && fold_cast(c, *k, to)) return;
  if (k && foldable_float(k->dtype) && (dtype_is_integral(to) || to == DType::kBool) && fold_cast(c, *k, to)) return;
  // saturate=0 (float8 outputs only): out-of-range values become inf/NaN, not the max.
  if (c.attr_int("saturate", 1) == 0 && c.dtype(0) != to)
    return c.set_output(0, c.op("cast", {c.input(0)}, {{"dtype", to}, {"saturate", false}}));
  c.set_output(0, c.cast(c.input(0), to));
}

void import_identity(NodeContext& c) {
  if (const KnownValue* k = c.known(0); k && k->ints) return c.set_known_output(0, *k);
  c.set_output(0, c.input(0));
}

// Dropout is the identity with an all-true mask unless it trains with a ratio above 0,
// which draws random numbers: max_c has no random ops. training_mode and ratio fed as
// graph inputs specialize the model on their values.
void import_dropout(NodeContext& c) {
  if (c.has_input(2) && c.known_scalar(2, "training_mode") != 0) {
    const double ratio = c.has_input(1) ? c.known_scalar(1, "ratio") : 0.5;
    if (ratio != 0)
      c.unsupported("training-mode dropout with ratio ", ratio, " draws random numbers, which max_c does not support");
  }
  import_identity(c);
  if (c.wants_output(1)) {
    // Not training: the mask keeps everything. Before opset 10 it had X's type.
    const DType mask = c.opset() < 10 ? c.dtype(0) : DType::kBool;
    ValueId yes = c.constant(KnownValue::from_doubles(mask, {}, {1}));
    c.set_output(1, c.op("broadcast_to", {yes}, {{"shape", c.type(0).dims}}));
  }
}

using Fn = ValueId (*)(NodeContext&, ValueId);

void add_unary(ImportTable& t, const char* onnx, const char* ours) {
  t[onnx] = [ours](NodeContext& c) { c.set_output(0, c.op(ours, {c.input(0)})); };
}

// A unary op that also folds on small known float values (exact functions only, so the
// import-time result is the run-time one).
void add_folding_unary(ImportTable& t, const char* onnx, const char* ours, double (*fn)(double)) {
  t[onnx] = [ours, fn](NodeContext& c) {
    if (try_fold_floats(c, 1, [fn](const std::vector<double>& v) { return fn(v[0]); })) return;
    c.set_output(0, c.op(ours, {c.input(0)}));
  };
}

void add_composed(ImportTable& t, const char* onnx, Fn fn) {
  t[onnx] = [fn](NodeContext& c) { c.set_output(0, fn(c, c.input(0))); };
}

}  // namespace

void register_elementwise_importers(ImportTable& t) {
  for (auto [onnx, ours] : {std::pair{"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}})
    t[onnx] = [onnx = std::string(onnx), ours = ours](NodeContext& c) { import_arith(c, onnx, ours); };
  t["Div"] = import_div;
  t["Mod"] = import_mod;
  t["Pow"] = import_pow;
  for (auto [onnx, ours] : {std::pair{"Max", "max"}, {"Min", "min"}, {"Sum", "add"}, {"Mean", "add"}})
    t[onnx] = [onnx = std::string(onnx), ours = ours](NodeContext& c) { import_variadic(c, onnx, ours); };
  for (auto [onnx, ours] : {std::pair{"Equal", "equal"}, {"Greater", "greater"}, {"Less", "less"},
                            {"GreaterOrEqual", "greater_equal"}, {"LessOrEqual", "less_equal"}})
    t[onnx] = [onnx = std::string(onnx), ours = ours](NodeContext& c) { import_compare(c, onnx, ours); };
  for (auto [onnx, ours] : {std::pair{"And", "logical_and"}, {"Or", "logical_or"}, {"Xor", "logical_xor"}})
    t[onnx] = [onnx = std::string(onnx), ours = ours](NodeContext& c) { import_logical(c, onnx, ours); };
  t["Not"] = import_not;
  t["Where"] = import_where;
  t["IsNaN"] = [](NodeContext& c) { c.set_output(0, c.op("is_nan", {c.input(0)})); };
  t["IsInf"] = import_is_inf;

  t["Neg"] = import_neg;
  add_folding_unary(t, "Abs", "abs", [](double x) { return std::fabs(x); });
  add_folding_unary(t, "Floor", "floor", [](double x) { return std::floor(x); });
  add_folding_unary(t, "Relu", "relu", [](double x) { return x > 0 ? x : 0.0; });
  for (auto [onnx, ours] : {std::pair{"Exp", "exp"}, {"Log", "log"},
                            {"Sqrt", "sqrt"}, {"Round", "round"}, {"Sigmoid", "sigmoid"},
                            {"Tanh", "tanh"}, {"Erf", "erf"}, {"Sin", "sin"}, {"Cos", "cos"},
                            {"Acos", "acos"}, {"Atanh", "atanh"}})
    add_unary(t, onnx, ours);
  t["Ceil"] = import_ceil;
  t["Reciprocal"] = import_reciprocal;
  t["Sign"] = import_sign;
  add_composed(t, "Tan", tan_of);
  add_composed(t, "Asin", asin_of);
  add_composed(t, "Atan", atan_of);
  add_composed(t, "Sinh", sinh_of);
  add_composed(t, "Cosh", cosh_of);
  add_composed(t, "Asinh", asinh_of);
  add_composed(t, "Acosh", acosh_of);
  add_composed(t, "Softplus", softplus_of);
  add_composed(t, "Softsign", [](NodeContext& c, ValueId x) {
    return c.op("div", {x, c.op("add", {c.op("abs", {x}), num(c, x, 1)})});
  });
  add_composed(t, "Mish", [](NodeContext& c, ValueId x) { return c.op("mul", {x, c.op("tanh", {softplus_of(c, x)})}); });
  t["LeakyRelu"] = import_leaky_relu;
  t["PRelu"] = import_prelu;
  t["Elu"] = import_elu;
  t["Celu"] = import_celu;
  t["Selu"] = import_selu;
  t["HardSigmoid"] = import_hard_sigmoid;
  t["HardSwish"] = import_hard_swish;
  t["ThresholdedRelu"] = import_thresholded_relu;
  t["Shrink"] = import_shrink;
  t["Gelu"] = import_gelu;
  t["Swish"] = [](NodeContext& c) {
    ValueId x = c.input(0);
    double alpha = c.attr_float("alpha", 1.f);
    ValueId ax = alpha == 1 ? x : c.op("mul", {x, num(c, x, alpha)});
    c.set_output(0, c.op("mul", {x, c.op("sigmoid", {ax})}));
  };
  t["Clip"] = import_clip;
  t["Cast"] = [](NodeContext& c) { import_cast(c, false); };
  t["CastLike"] = [](NodeContext& c) { import_cast(c, true); };
  t["Identity"] = import_identity;
  t["Dropout"] = import_dropout;
}

}  // namespace maxc::onnx

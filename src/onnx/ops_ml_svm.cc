// Support vector machines of ai.onnx.ml, as onnxruntime computes them (float32):
//   kernels K(x, s): LINEAR x.s, POLY (gamma x.s + coef0)^degree, RBF exp(-gamma |x - s|^2),
//   SIGMOID tanh(gamma x.s + coef0) (kernel_params = [gamma, coef0, degree]).
//   SVMClassifier, with support vectors (vectors_per_class): one-vs-one. The classifier of
//     classes i < j scores sum_{s in i} coef[j-1, s] K(x, s) + sum_{s in j} coef[i, s] K(x, s)
//     + rho[pair] (accumulated in float64, as there) and votes i when > 0, else j; the label
//     is that of the first class with the most votes. Without prob_a/prob_b the scores are the
//     pair scores (post_transform on rows of more than one; two classes give [-s, s] under
//     NONE, [1 - s, s] otherwise). With them, each pair's probability 1 - logistic(s A + B)
//     (clamped to [1e-7, 1 - 1e-7]) is coupled into class probabilities by the iterative
//     method of Wu, Lin and Weng (libsvm's multiclass_probability: at most 100 rounds, each
//     row stopping once its error is below 0.005 / classes), a while_loop here.
//     Without support vectors (liblinear): scores X coef^T + rho[0], the label the first
//     highest score's, except with two labels and no probabilities: classlabels[1] when the
//     top score is >= 0.5 (all coefficients >= 0) or > 0 (some negative).
//   SVMRegressor: sum_s coef[s] K(x, s) + rho[0] (X coef + rho[0] without support vectors);
//     one_class maps it to 1 (> 0) or -1. post_transform is ignored, as there.
#include <algorithm>
#include <cmath>

#include "onnx/loop_parts.h"
#include "onnx/ml_common.h"
#include "onnx/value_table.h"

namespace maxc::onnx {
namespace {

enum class Kernel { kLinear, kPoly, kRbf, kSigmoid };

struct KernelSpec {
  Kernel kind = Kernel::kLinear;
  double gamma = 0, coef0 = 0, degree = 0;
};

KernelSpec kernel_spec(NodeContext& c) {
  KernelSpec k;
  const std::string t = c.attr_string("kernel_type", "LINEAR");
  if (t == "LINEAR") k.kind = Kernel::kLinear;
  else if (t == "POLY") k.kind = Kernel::kPoly;
  else if (t == "RBF") k.kind = Kernel::kRbf;
  else if (t == "SIGMOID") k.kind = Kernel::kSigmoid;
  else c.invalid("kernel_type '", t, "' (LINEAR, POLY, RBF or SIGMOID)");
  const std::vector<double> p = floats_attr(c, "kernel_params");
  if (!p.empty() && p.size() != 3) c.invalid("kernel_params has ", p.size(), " values; it is [gamma, coef0, degree]");
  if (p.size() == 3) k.gamma = p[0], k.coef0 = p[1], k.degree = p[2];
  return k;
}

ValueId f32(NodeContext& c, std::vector<int64_t> shape, const std::vector<double>& v) {
  return c.constant(KnownValue::from_doubles(DType::kFloat32, std::move(shape), v));
}

// K(x, s) for every row of x [N, F] and support vector [V, F]: [N, V].
ValueId kernel(NodeContext& c, ValueId x, const std::vector<double>& vectors, int64_t v, int64_t f, const KernelSpec& k) {
  const DType t = DType::kFloat32;
  std::vector<double> st(vectors.size());
  for (int64_t i = 0; i < v; ++i)
    for (int64_t j = 0; j < f; ++j) st[static_cast<size_t>(j * v + i)] = static_cast<float>(vectors[static_cast<size_t>(i * f + j)]);
  if (k.kind == Kernel::kRbf) {
    // |x - s|^2 = |x|^2 - 2 x.s + |s|^2 in float64, whose cancellation stays far below
    // float32's rounding, where the direct difference would take an [N, V, F] tensor.
    const DType d = DType::kFloat64;
    const ValueId x64 = c.cast(x, d);
    std::vector<double> norms(static_cast<size_t>(v), 0.0);
    for (int64_t i = 0; i < v; ++i)
      for (int64_t j = 0; j < f; ++j) norms[static_cast<size_t>(i)] += st[static_cast<size_t>(j * v + i)] * st[static_cast<size_t>(j * v + i)];
    const ValueId xx = c.op("sum", {c.op("mul", {x64, x64})}, {{"axis", int64_t{-1}}});  // [N, 1]
    const ValueId xs = c.op("matmul", {x64, c.constant(KnownValue::from_doubles(d, {f, v}, st))});
    ValueId dist = c.op("add", {c.op("sub", {xx, c.op("mul", {xs, c.scalar(d, 2)})}),
                                c.constant(KnownValue::from_doubles(d, {v}, norms))});
    dist = c.cast(c.op("max", {dist, c.scalar(d, 0)}), t);
    return c.op("exp", {c.op("mul", {dist, c.scalar(t, -k.gamma)})});
  }
  ValueId dot = c.op("matmul", {x, f32(c, {f, v}, st)});
  if (k.kind == Kernel::kLinear) return dot;
  dot = c.op("add", {c.op("mul", {dot, c.scalar(t, k.gamma)}), c.scalar(t, k.coef0)});
  if (k.kind == Kernel::kSigmoid) return c.op("tanh", {dot});
  if (k.degree == 2) return c.op("mul", {dot, dot});
  if (k.degree == 3) return c.op("mul", {c.op("mul", {dot, dot}), dot});
  return c.op("pow", {dot, c.scalar(t, k.degree)});
}

ValueId svm_features(NodeContext& c, int64_t f) {
  const ValueId x = float_rows(c);
  const Dim& xf = c.type_of(x).dims[1];
  if (xf.is_static() && xf.static_value() != f) c.invalid("X has ", xf.static_value(), " features; the model has ", f);
  return x;
}

ValueId transpose_last(NodeContext& c, ValueId m) {
  return c.op("transpose", {m}, {{"axis_1", int64_t{1}}, {"axis_2", int64_t{2}}});
}

// ---- libsvm's multiclass_probability, one while_loop over every row ----

enum CoupleSlot : size_t { kRound, kRounds, kGoOn, kP, kQ, kSlots };

// One round for every row: the rows whose error is below eps keep their p.
std::vector<ValueId> couple_round(NodeContext& b, const std::vector<ValueId>& in, int64_t classes) {
  const DType t = DType::kFloat32;
  const ValueId p = in[kP], q = in[kQ];  // [N, C], [N, C, C]
  auto col = [&](ValueId m, int64_t k) {
    return b.op("slice_tensor", {m}, {{"starts", std::vector<Dim>{0, k}}, {"stops", std::vector<Dim>{INT64_MAX, k + 1}}});
  };
  auto row_sum = [&](ValueId m) { return b.op("sum", {m}, {{"axis", int64_t{-1}}}); };
  const ValueId qp0 = b.op("squeeze", {row_sum(b.op("mul", {q, b.op("unsqueeze", {p}, {{"axis", int64_t{1}}})}))}, {{"axis", int64_t{-1}}});
  const ValueId pqp0 = row_sum(b.op("mul", {p, qp0}));  // [N, 1]
  const ValueId error = b.op("max", {b.op("abs", {b.op("sub", {qp0, pqp0})})}, {{"axis", int64_t{-1}}});
  const ValueId done = b.op("less", {error, b.scalar(t, 0.005 / static_cast<double>(classes))});  // [N, 1]
  ValueId pn = p, qp = qp0, pqp = pqp0;
  const ValueId one = b.scalar(t, 1);
  for (int64_t i = 0; i < classes; ++i) {
    const ValueId q_row = b.op("slice_tensor", {q}, {{"starts", std::vector<Dim>{0, i, 0}},
                                                     {"stops", std::vector<Dim>{INT64_MAX, i + 1, INT64_MAX}},
                                                     {"squeeze_axes", std::vector<int64_t>{1}}});  // [N, C]
    const ValueId q_ii = col(q_row, i), qp_i = col(qp, i);
    const ValueId diff = b.op("div", {b.op("sub", {pqp, qp_i}), q_ii});
    std::vector<double> unit(static_cast<size_t>(classes), 0.0);
    unit[static_cast<size_t>(i)] = 1;
    pn = b.op("add", {pn, b.op("mul", {diff, f32(b, {classes}, unit)})});
    const ValueId grow = b.op("add", {one, diff});
    const ValueId change = b.op("mul", {diff, b.op("add", {b.op("mul", {diff, q_ii}), b.op("mul", {b.scalar(t, 2), qp_i})})});
    pqp = b.op("div", {b.op("div", {b.op("add", {pqp, change}), grow}), grow});
    qp = b.op("div", {b.op("add", {qp, b.op("mul", {diff, q_row})}), grow});
    pn = b.op("div", {pn, grow});
  }
  std::vector<ValueId> out = in;
  out[kRound] = b.op("add", {in[kRound], b.scalar(DType::kInt64, 1)});
  out[kP] = b.op("where", {done, p, pn});
  const Dim n = b.type_of(done).dims[0];
  const ValueId open = b.cast(b.reshape(b.op("logical_not", {done}), {n}), DType::kInt32);
  out[kGoOn] = b.reshape(b.op("greater", {b.op("sum", {open}, {{"axis", int64_t{0}}}), b.scalar(DType::kInt32, 0)}), {});
  return out;
}

// Class probabilities [N, C] from the pairwise ones r [N, C, C] (r[i][j]: i over j).
ValueId couple(NodeContext& c, ValueId r, int64_t classes) {
  const DType t = DType::kFloat32;
  const Dim n = c.type_of(r).dims[0];
  // Q[i][i] = sum_j r[j][i]^2, Q[i][j] = -r[j][i] r[i][j].
  const ValueId rt = transpose_last(c, r);
  std::vector<double> off(static_cast<size_t>(classes * classes), 1.0), eye(off.size(), 0.0);
  for (int64_t i = 0; i < classes; ++i) off[static_cast<size_t>(i * classes + i)] = 0, eye[static_cast<size_t>(i * classes + i)] = 1;
  const ValueId cross = c.op("mul", {c.op("negate", {c.op("mul", {rt, r})}), f32(c, {classes, classes}, off)});
  const ValueId diag = c.op("mul", {c.op("sum", {c.op("mul", {rt, rt})}, {{"axis", int64_t{-1}}}), f32(c, {classes, classes}, eye)});
  std::vector<ValueId> init(kSlots);
  init[kRound] = c.scalar(DType::kInt64, 0);
  init[kRounds] = c.scalar(DType::kInt64, 100);
  init[kGoOn] = c.scalar(DType::kBool, 1);
  init[kP] = c.op("broadcast_to", {c.scalar(t, 1.0 / static_cast<double>(classes))}, {{"shape", std::vector<Dim>{n, Dim(classes)}}});
  init[kQ] = c.op("add", {cross, diag});

  Graph body(str_cat("svm_", c.index(), "_coupling"));
  std::vector<ValueId> in;
  for (size_t k = 0; k < init.size(); ++k) in.push_back(body.add_input(str_cat("v", k), c.type_of(init[k])));
  ValueTable scope(body);
  NodeContext b(c.node(), c.index(), c.opset(), scope, body);
  const std::vector<ValueId> out = couple_round(b, in, classes);
  std::vector<NamedValue> named;
  for (size_t k = 0; k < out.size(); ++k) named.push_back({str_cat("v", k), carried_next(b, in[k], out[k], "a coupling value")});
  body.set_outputs(std::move(named));
  const GraphRef predicate = add_predicate(c, body, kRound, kRounds, kGoOn);
  const GraphRef body_ref{c.graph().add_subgraph(std::move(body))};
  return c.ops("while_loop", init, {{"predicate", predicate}, {"body", body_ref}})[kP];
}

// ---- SVMClassifier ----

struct Pairs {
  std::vector<std::pair<int64_t, int64_t>> list;  // (i, j), i < j, in onnxruntime's order
};

Pairs class_pairs(int64_t classes) {
  Pairs p;
  for (int64_t i = 0; i + 1 < classes; ++i)
    for (int64_t j = i + 1; j < classes; ++j) p.list.push_back({i, j});
  return p;
}

void import_svc(NodeContext& c, const std::vector<int64_t>& labels, const std::vector<int64_t>& per_class,
                const std::vector<double>& coef, const KernelSpec& k) {
  const int64_t classes = static_cast<int64_t>(labels.size());
  if (classes < 2) c.unsupported("a one-vs-one classifier of ", classes, " class (two or more only)");
  if (static_cast<int64_t>(per_class.size()) != classes)
    c.invalid("vectors_per_class has ", per_class.size(), " entries for ", classes, " classes");
  std::vector<int64_t> first(per_class.size(), 0);
  int64_t v = 0;
  for (size_t i = 0; i < per_class.size(); ++i) {
    if (per_class[i] < 0) c.invalid("vectors_per_class[", i, "] is ", per_class[i]);
    first[i] = v;
    v += per_class[i];
  }
  const std::vector<double> vectors = floats_attr(c, "support_vectors");
  if (vectors.empty() || vectors.size() % static_cast<size_t>(v) != 0)
    c.invalid("support_vectors has ", vectors.size(), " values, not a multiple of the ", v, " vectors");
  const int64_t f = static_cast<int64_t>(vectors.size()) / v;
  const Pairs pairs = class_pairs(classes);
  const int64_t np = static_cast<int64_t>(pairs.list.size());
  if (static_cast<int64_t>(coef.size()) < (classes - 1) * v)
    c.invalid("coefficients has ", coef.size(), " values; ", classes - 1, " x ", v, " are needed");
  const std::vector<double> rho = floats_attr(c, "rho");
  if (static_cast<int64_t>(rho.size()) < np) c.invalid("rho has ", rho.size(), " values for ", np, " class pairs");
  const std::vector<double> prob_a = floats_attr(c, "prob_a"), prob_b = floats_attr(c, "prob_b");
  if (prob_a.size() != prob_b.size()) c.invalid("prob_a and prob_b differ in length");
  const bool proba = !prob_a.empty();
  if (proba && static_cast<int64_t>(prob_a.size()) < np) c.invalid("prob_a has ", prob_a.size(), " values for ", np, " class pairs");
  const PostTransform t = post_transform(c);

  const ValueId kx = kernel(c, svm_features(c, f), vectors, v, f, k);  // [N, V]
  const Dim n = c.type_of(kx).dims[0];
  // Each pair's score as one [V, P] matmul, in float64 as onnxruntime accumulates it.
  std::vector<double> w(static_cast<size_t>(v * np), 0.0), inv_i(static_cast<size_t>(np * classes), 0.0), inv_j(inv_i);
  for (int64_t p = 0; p < np; ++p) {
    const auto [i, j] = pairs.list[static_cast<size_t>(p)];
    for (int64_t s = 0; s < per_class[static_cast<size_t>(i)]; ++s) {
      const int64_t sv = first[static_cast<size_t>(i)] + s;
      w[static_cast<size_t>(sv * np + p)] = static_cast<float>(coef[static_cast<size_t>((j - 1) * v + sv)]);
    }
    for (int64_t s = 0; s < per_class[static_cast<size_t>(j)]; ++s) {
      const int64_t sv = first[static_cast<size_t>(j)] + s;
      w[static_cast<size_t>(sv * np + p)] = static_cast<float>(coef[static_cast<size_t>(i * v + sv)]);
    }
    inv_i[static_cast<size_t>(p * classes + i)] = 1;
    inv_j[static_cast<size_t>(p * classes + j)] = 1;
  }
  const ValueId sums = c.op("matmul", {c.cast(kx, DType::kFloat64), c.constant(KnownValue::from_doubles(DType::kFloat64, {v, np}, w))});
  std::vector<double> rho_p(rho.begin(), rho.begin() + np);
  for (double& r : rho_p) r = static_cast<float>(r);
  const ValueId scores = c.cast(c.op("add", {sums, c.constant(KnownValue::from_doubles(DType::kFloat64, {np}, rho_p))}), DType::kFloat32);

  // Votes [N, C]: a pair votes i when its score is > 0, else j.
  const ValueId for_i = c.cast(c.op("greater", {scores, c.scalar(DType::kFloat32, 0)}), DType::kFloat32);
  const ValueId for_j = c.op("sub", {c.scalar(DType::kFloat32, 1), for_i});
  const ValueId votes = c.op("add", {c.op("matmul", {for_i, f32(c, {np, classes}, inv_i)}),
                                     c.op("matmul", {for_j, f32(c, {np, classes}, inv_j)})});
  const ValueId best = c.op("squeeze", {c.op("argmax", {votes}, {{"axis", int64_t{1}}})}, {{"axis", int64_t{1}}});
  c.set_output(0, pick_labels(c, labels, best));

  if (!proba) {
    if (np > 1) return c.set_output(1, transform_scores(c, scores, t));
    if (t == PostTransform::kProbit)
      c.unsupported("post_transform PROBIT with two classes (onnxruntime leaves the second column unset)");
    return c.set_output(1, two_columns(c, scores, t == PostTransform::kNone ? SecondClass::kNegation : SecondClass::kComplement, t));
  }
  // Pairwise probabilities r [N, C, C]: r[i][j] = clamp(1 - logistic(s A + B)), r[j][i] = 1 - r[i][j].
  std::vector<double> a(prob_a.begin(), prob_a.begin() + np), bb(prob_b.begin(), prob_b.begin() + np);
  const ValueId z = c.op("add", {c.op("mul", {scores, f32(c, {np}, a)}), f32(c, {np}, bb)});
  ValueId pij = c.op("sub", {c.scalar(DType::kFloat32, 1), c.op("sigmoid", {z})});
  pij = c.op("min", {c.op("max", {pij, c.scalar(DType::kFloat32, 1e-7)}), c.scalar(DType::kFloat32, 1 - 1e-7)});
  const ValueId pji = c.op("sub", {c.scalar(DType::kFloat32, 1), pij});
  std::vector<double> at_ij(static_cast<size_t>(np * classes * classes), 0.0), at_ji(at_ij);
  for (int64_t p = 0; p < np; ++p) {
    const auto [i, j] = pairs.list[static_cast<size_t>(p)];
    at_ij[static_cast<size_t>(p * classes * classes + i * classes + j)] = 1;
    at_ji[static_cast<size_t>(p * classes * classes + j * classes + i)] = 1;
  }
  const ValueId r = c.reshape(c.op("add", {c.op("matmul", {pij, f32(c, {np, classes * classes}, at_ij)}),
                                           c.op("matmul", {pji, f32(c, {np, classes * classes}, at_ji)})}),
                              {n, Dim(classes), Dim(classes)});
  c.set_output(1, transform_scores(c, couple(c, r, classes), t));
}

void import_svm_linear(NodeContext& c, const std::vector<int64_t>& labels, const std::vector<double>& coef) {
  const int64_t classes = std::max<int64_t>(static_cast<int64_t>(labels.size()), 1);
  if (coef.empty() || coef.size() % static_cast<size_t>(classes) != 0)
    c.invalid("coefficients has ", coef.size(), " values, not a multiple of the ", classes, " classes");
  const int64_t f = static_cast<int64_t>(coef.size()) / classes;
  const std::vector<double> rho = floats_attr(c, "rho");
  if (rho.empty()) c.invalid("attribute 'rho' is required");
  const ValueId raw = kernel(c, svm_features(c, f), coef, classes, f, KernelSpec{});
  const ValueId scores = c.op("add", {raw, c.scalar(DType::kFloat32, rho[0])});  // [N, C]
  const Dim n = c.type_of(scores).dims[0];
  const ValueId best = c.op("squeeze", {c.op("argmax", {scores}, {{"axis", int64_t{1}}})}, {{"axis", int64_t{1}}});
  ValueId label = pick_labels(c, labels, best);
  if (labels.size() == 2 && c.attr_floats("prob_a").value_or(std::vector<float>{}).empty()) {
    const bool all_positive = std::all_of(coef.begin(), coef.end(), [](double x) { return x >= 0; });
    const ValueId top = c.reshape(c.op("max", {scores}, {{"axis", int64_t{1}}}), {n});
    const ValueId second = all_positive ? c.op("greater_equal", {top, c.scalar(DType::kFloat32, 0.5)})
                                        : c.op("greater", {top, c.scalar(DType::kFloat32, 0)});
    label = c.op("where", {second, pick_labels(c, labels, c.scalar(DType::kInt64, 1)), label});
  }
  c.set_output(0, label);
  const PostTransform t = post_transform(c);
  c.set_output(1, classes > 1 ? transform_scores(c, scores, t) : t == PostTransform::kProbit ? probit(c, scores) : scores);
}

void import_svm_classifier(NodeContext& c) {
  const std::vector<int64_t> labels = int_class_labels(c, "classlabels_ints", "classlabels_strings");
  if (labels.empty()) c.invalid("attribute 'classlabels_ints' (or 'classlabels_strings') is required");
  const std::vector<double> coef = floats_attr(c, "coefficients");
  if (coef.empty()) c.invalid("attribute 'coefficients' is required");
  const std::vector<int64_t> per_class = c.attr_ints("vectors_per_class").value_or(std::vector<int64_t>{});
  int64_t vectors = 0;
  for (int64_t k : per_class) vectors += std::max<int64_t>(k, 0);
  if (vectors > 0) return import_svc(c, labels, per_class, coef, kernel_spec(c));
  import_svm_linear(c, labels, coef);
}

// ---- SVMRegressor ----

void import_svm_regressor(NodeContext& c) {
  const std::vector<double> coef = floats_attr(c, "coefficients");
  if (coef.empty()) c.invalid("attribute 'coefficients' is required");
  const std::vector<double> rho = floats_attr(c, "rho");
  if (rho.empty()) c.invalid("attribute 'rho' is required");
  const int64_t v = c.attr_int("n_supports", 0);
  ValueId y;
  if (v > 0) {
    const std::vector<double> vectors = floats_attr(c, "support_vectors");
    if (static_cast<int64_t>(coef.size()) != v) c.invalid("coefficients has ", coef.size(), " values for ", v, " support vectors");
    if (vectors.empty() || vectors.size() % static_cast<size_t>(v) != 0)
      c.invalid("support_vectors has ", vectors.size(), " values, not a multiple of the ", v, " vectors");
    const int64_t f = static_cast<int64_t>(vectors.size()) / v;
    const ValueId kx = kernel(c, svm_features(c, f), vectors, v, f, kernel_spec(c));
    y = c.op("matmul", {kx, f32(c, {v, 1}, coef)});
  } else {
    const int64_t f = static_cast<int64_t>(coef.size());
    y = kernel(c, svm_features(c, f), coef, 1, f, KernelSpec{});
  }
  y = c.op("add", {y, c.scalar(DType::kFloat32, rho[0])});
  if (c.attr_int("one_class", 0) != 0)
    y = c.op("where", {c.op("greater", {y, c.scalar(DType::kFloat32, 0)}), c.scalar(DType::kFloat32, 1), c.scalar(DType::kFloat32, -1)});
  c.set_output(0, y);
}

}  // namespace

void register_ml_svm_importers(ImportTable& t) {
  t["ai.onnx.ml.SVMClassifier"] = import_svm_classifier;
  t["ai.onnx.ml.SVMRegressor"] = import_svm_regressor;
}

}  // namespace maxc::onnx

// Loss operators: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (which is the former
// over LogSoftmax along the class axis). The input is [N, C, d1, ...] and the target
// [N, d1, ...]; each element's class is picked with a one-hot select over the C classes
// (exact: one value plus zeros), which also gives each element's weight. An element whose
// target is ignore_index has loss 0 and weight 0; "mean" divides by the summed weights.
#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

struct Picked {
  ValueId loss;                   // -input[n, target, ...] (* weight), target's shape
  std::optional<ValueId> weight;  // per-element weight when weights or ignore_index apply
};

ValueId reduce_all(NodeContext& c, const char* op, ValueId v) {
  for (int64_t a = 0; a < c.type_of(v).rank(); ++a) v = c.op(op, {v}, {{"axis", a}});
  return c.reshape(v, {});
}

ValueId sum_all(NodeContext& c, ValueId v) { return reduce_all(c, "sum", v); }

// [N, d...] -> [N, 1, d...], to broadcast against the class axis.
ValueId with_class_axis(NodeContext& c, ValueId v) {
  std::vector<Dim> d = c.type_of(v).dims;
  d.insert(d.begin() + 1, Dim(1));
  return c.reshape(v, d);
}

// [1, C, 1, ...] of rank r: how class ids and class weights broadcast against [N, C, d...].
std::vector<int64_t> class_shape(int64_t classes, int64_t r) {
  std::vector<int64_t> d(static_cast<size_t>(r), 1);
  d[1] = classes;
  return d;
}

// hit[n, c, d...] = target[n, d...] == c.
ValueId one_hot(NodeContext& c, ValueId target, int64_t classes, int64_t r) {
  std::vector<double> ids(static_cast<size_t>(bounded_elements(c, {classes}, "the class range")));
  for (int64_t i = 0; i < classes; ++i) ids[static_cast<size_t>(i)] = static_cast<double>(i);
  ValueId class_ids = c.constant(KnownValue::from_doubles(DType::kInt64, class_shape(classes, r), ids));
  return c.op("equal", {with_class_axis(c, target), class_ids});
}

// The class axis' values at each element's target, summed from a one-hot select.
ValueId pick(NodeContext& c, ValueId hit, ValueId values, std::vector<Dim> target_dims) {
  ValueId zero = c.scalar(c.type_of(values).dtype, 0);
  return c.reshape(c.op("sum", {c.op("where", {hit, values, zero})}, {{"axis", int64_t{1}}}), target_dims);
}

// Weights the loss by weight[target] (input `weight_input`, when given) and zeroes the
// elements whose target is ignore_index.
void apply_weights(NodeContext& c, Picked& p, ValueId hit, ValueId target, size_t weight_input, int64_t r) {
  DType dt = c.type_of(p.loss).dtype;
  if (c.has_input(weight_input)) {
    std::vector<int64_t> shape = class_shape(c.type_of(hit).dims[1].static_value(), r);
    ValueId w = c.reshape(c.cast(c.input(weight_input), dt), std::vector<Dim>(shape.begin(), shape.end()));
    p.weight = pick(c, hit, w, c.type_of(target).dims);
    p.loss = c.op("mul", {p.loss, *p.weight});
  }
  if (!c.attr("ignore_index")) return;
  ValueId ignore = c.scalar(DType::kInt64, static_cast<double>(c.attr_int("ignore_index", 0)));
  ValueId valid = c.op("not_equal", {target, ignore});
  ValueId zero = c.scalar(dt, 0);
  p.loss = c.op("where", {valid, p.loss, zero});
  p.weight = c.op("where", {valid, p.weight ? *p.weight : c.scalar(dt, 1), zero});
}

Picked negative_log_likelihood(NodeContext& c, ValueId log_prob, size_t target_input, size_t weight_input) {
  const TensorType x = c.type_of(log_prob);  // a copy: adding ops moves the graph's types
  if (x.rank() < 2) c.invalid("the input must have rank >= 2 ([N, C, ...]), got rank ", x.rank());
  if (c.rank(target_input) != x.rank() - 1)
    c.invalid("the target must have rank ", x.rank() - 1, " (the input's without C), got ", c.rank(target_input));
  if (!x.dims[1].is_static()) c.unsupported("the class count C must be static, got ", x.dims[1]);
  ValueId target = c.cast(c.input(target_input), DType::kInt64);
  ValueId hit = one_hot(c, target, x.dims[1].static_value(), x.rank());
  Picked out{c.op("negate", {pick(c, hit, log_prob, c.type_of(target).dims)}), std::nullopt};
  apply_weights(c, out, hit, target, weight_input, x.rank());
  return out;
}

ValueId reduce_loss(NodeContext& c, const Picked& p) {
  std::string reduction = c.attr_string("reduction", "mean");
  if (reduction == "none") return p.loss;
  if (reduction == "sum") return sum_all(c, p.loss);
  if (reduction != "mean") c.invalid("reduction \"", reduction, "\" (expected none, sum or mean)");
  if (!p.weight) return reduce_all(c, "mean", p.loss);
  return c.op("div", {sum_all(c, p.loss), sum_all(c, *p.weight)});  // both have the target's shape
}

void import_nll_loss(NodeContext& c) {
  c.set_output(0, reduce_loss(c, negative_log_likelihood(c, c.input(0), 1, 2)));
}

void import_softmax_cross_entropy(NodeContext& c) {
  if (c.rank(0) < 2) c.invalid("the scores must have rank >= 2 ([N, C, ...]), got rank ", c.rank(0));
  ValueId log_prob = c.op("logsoftmax", {c.input(0)}, {{"axis", int64_t{1}}});
  c.set_output(0, reduce_loss(c, negative_log_likelihood(c, log_prob, 1, 2)));
  c.set_output(1, log_prob);
}

}  // namespace

void register_loss_importers(ImportTable& t) {
  t["NegativeLogLikelihoodLoss"] = import_nll_loss;
  t["SoftmaxCrossEntropyLoss"] = import_softmax_cross_entropy;
}

}  // namespace maxc::onnx

// Scan, as a while_loop carrying (iteration, iteration count, scan length, states...,
// scan inputs..., captured outer values..., scan-output accumulators...). Each iteration
// gathers its slice of every scan input (from the far end for a reverse direction), runs
// the body, and writes each scan output's row into its accumulator (full length from the
// start, zeros until written), which is moved to its scan_output_axis after the loop.
//
// Opset 8's Scan has a batch axis in front of every state and scan input, each batch row
// scanned on its own: one iteration per (row, step), the body reading and writing row `row`
// of the states. Its sequence_lens is supported only where it says every sequence is whole.
#include "onnx/loop_parts.h"
#include "onnx/subgraph.h"

namespace maxc::onnx {
namespace {

struct ScanShape {
  bool batched = false;    // opset 8
  size_t first_state = 0;  // 1 after opset 8's sequence_lens
  size_t states = 0, inputs = 0, outputs = 0;
  std::vector<int64_t> input_axes, output_axes;  // output axes as the attribute says (may be negative)
  std::vector<bool> input_reverse, output_reverse;
  Dim batch{1}, length{0};  // batch rows (opset 8) and steps per row
};

std::vector<int64_t> ints_or(NodeContext& c, std::string_view attr, size_t n, int64_t fill) {
  std::vector<int64_t> v = c.attr_ints(attr).value_or(std::vector<int64_t>(n, fill));
  if (v.size() != n) c.invalid("attribute '", attr, "' must have ", n, " entries, it has ", v.size());
  return v;
}

std::vector<bool> directions(NodeContext& c, std::string_view attr, size_t n) {
  std::vector<bool> reverse;
  for (int64_t d : ints_or(c, attr, n, 0)) {
    if (d != 0 && d != 1) c.invalid("attribute '", attr, "' holds ", d, "; directions are 0 (forward) or 1 (reverse)");
    reverse.push_back(d == 1);
  }
  return reverse;
}

// Checks `d` against `shared`, the dim every scan input must have alike (the first sets it).
void agree_on(NodeContext& c, Dim& shared, const Dim& d, bool first, std::string_view what) {
  if (first) {
    shared = d;
    return;
  }
  if (d == shared) return;
  if (d.is_static() && shared.is_static()) c.invalid("the scan inputs' ", what, " differ: ", shared, " and ", d);
  c.unsupported("the scan inputs' ", what, " are ", shared, " and ", d, ", which max_c cannot tell equal");
}

void check_sequence_lens(NodeContext& c, const ScanShape& s) {
  if (!c.has_input(0)) return;
  const KnownValue* k = c.known(0);
  std::optional<std::vector<int64_t>> lens = k ? k->static_ints() : std::nullopt;
  bool whole = lens && s.length.is_static();
  for (size_t i = 0; whole && i < lens->size(); ++i) whole = (*lens)[i] == s.length.static_value();
  if (!whole) c.unsupported("sequence_lens must be known at import and equal to the scan length ", s.length);
}

ScanShape scan_shape(NodeContext& c, const GraphProto& g) {
  ScanShape s;
  s.batched = c.opset() < 9;
  s.first_state = s.batched ? 1 : 0;
  const int64_t m = c.attr_int("num_scan_inputs", 0);
  if (m < 1) c.invalid("attribute 'num_scan_inputs' must be at least 1, it is ", m);
  s.inputs = static_cast<size_t>(m);
  if (c.num_inputs() < s.first_state + s.inputs)
    c.invalid("it has ", c.num_inputs(), " inputs, fewer than its ", s.inputs, " scan inputs");
  s.states = c.num_inputs() - s.first_state - s.inputs;
  if (c.num_outputs() < s.states) c.invalid("it has ", s.states, " states but only ", c.num_outputs(), " outputs");
  s.outputs = c.num_outputs() - s.states;
  if (g.inputs.size() != s.states + s.inputs || g.outputs.size() != s.states + s.outputs)
    c.invalid("body '", g.name, "' must take ", s.states + s.inputs, " inputs and give ", s.states + s.outputs,
              " outputs; it takes ", g.inputs.size(), " and gives ", g.outputs.size());
  s.input_reverse = directions(c, s.batched ? "directions" : "scan_input_directions", s.inputs);
  s.output_reverse = s.batched ? std::vector<bool>(s.outputs, false) : directions(c, "scan_output_directions", s.outputs);
  s.input_axes = s.batched ? std::vector<int64_t>(s.inputs, 1) : ints_or(c, "scan_input_axes", s.inputs, 0);
  s.output_axes = ints_or(c, "scan_output_axes", s.outputs, 0);
  for (size_t j = 0; j < s.inputs; ++j) {
    const size_t at = s.first_state + s.states + j;
    const int64_t rank = c.rank(at);
    if (s.batched && rank < 2) c.invalid("scan input ", j, " must have a batch and a sequence axis, its rank is ", rank);
    s.input_axes[j] = c.axis(s.input_axes[j], rank, "scan_input_axes entry");
    agree_on(c, s.length, c.type(at).dims[static_cast<size_t>(s.input_axes[j])], j == 0, "scan lengths");
    if (s.batched) agree_on(c, s.batch, c.type(at).dims[0], j == 0, "batch sizes");
  }
  for (size_t k = 0; s.batched && k < s.states; ++k) {
    if (c.rank(s.first_state + k) < 1) c.invalid("state ", k, " must have a batch axis");
    agree_on(c, s.batch, c.type(s.first_state + k).dims[0], false, "batch sizes");
  }
  if (s.batched) check_sequence_lens(c, s);
  return s;
}

// Where iteration k is: the batch row (opset 8) and the step within it.
struct Step {
  std::optional<ValueId> row;
  ValueId t;
};

Step step_of(NodeContext& b, const ScanShape& s, ValueId k, ValueId length) {
  if (!s.batched) return {std::nullopt, k};
  ValueId t = b.op("mod", {k, length});
  // (k - t) / length is a whole number: exact in float64 for any count a loop can run.
  ValueId whole = b.op("div", {b.cast(b.op("sub", {k, t}), DType::kFloat64), b.cast(length, DType::kFloat64)});
  return {b.cast(whole, DType::kInt64), t};
}

// The step in a direction: t forward, length - 1 - t reverse.
ValueId directed(NodeContext& b, ValueId t, bool reverse, ValueId length) {
  if (!reverse) return t;
  return b.op("sub", {b.op("sub", {length, b.scalar(DType::kInt64, 1)}), t});
}

ValueId at_step(NodeContext& b, const ScanShape& s, const Step& step, ValueId x, size_t j, ValueId length) {
  int64_t axis = s.input_axes[j];
  if (s.batched) {
    x = b.op("gather", {x, *step.row}, {{"axis", int64_t{0}}});
    axis -= 1;
  }
  return b.op("gather", {x, directed(b, step.t, s.input_reverse[j], length)}, {{"axis", axis}});
}

// Where a row lands: [row, step] (opset 8) or [step], as int64 [k].
ValueId row_position(NodeContext& b, const Step& step, ValueId t) {
  ValueId at = b.reshape(t, {Dim(1)});
  if (!step.row) return at;
  return b.op("concat", {b.reshape(*step.row, {Dim(1)}), at}, {{"axis", int64_t{0}}});
}

// A scan output moved from axis 0 to `axis`.
ValueId to_output_axis(NodeContext& c, ValueId y, int64_t axis) {
  const int64_t rank = c.type_of(y).rank();
  const int64_t a = c.axis(axis, rank, "scan_output_axes entry");
  if (a == 0) return y;
  std::vector<int64_t> perm;
  for (int64_t d = 1; d < rank; ++d) {
    if (static_cast<int64_t>(perm.size()) == a) perm.push_back(0);
    perm.push_back(d);
  }
  if (static_cast<int64_t>(perm.size()) == a) perm.push_back(0);
  return c.op("permute", {y}, {{"dims", perm}});
}

// Where the while_loop's values are among the body's inputs.
struct Carried {
  ValueId iteration = 0, length = 0;  // the body's input values
  size_t total = 0;                   // position of the iteration count
  size_t first_state = 0;             // position of the first state
  std::vector<ValueId> states, scanned;  // the body's input values
};

Carried carry_inputs(NodeContext& c, const ScanShape& s, Subgraph& body) {
  const GraphProto& g = body.proto();
  Carried at;
  at.iteration = body.add_input("iteration", c.scalar(DType::kInt64, 0));
  at.total = body.operands().size();
  body.add_input("iterations", count_value(c, s.batch * s.length));
  at.length = body.add_input("scan_length", count_value(c, s.length));
  at.first_state = body.operands().size();
  for (size_t i = 0; i < s.states; ++i) at.states.push_back(body.add_input(g.inputs[i].name, c.input(s.first_state + i)));
  for (size_t j = 0; j < s.inputs; ++j)
    at.scanned.push_back(body.add_input(g.inputs[s.states + j].name, c.input(s.first_state + s.states + j)));
  return at;
}

// The body's outputs, one per input (each unchanged unless set here), then the scan
// outputs' accumulators, added as inputs too. `states_now` are the states the body saw.
std::vector<ValueId> body_outputs(NodeContext& c, const ScanShape& s, Subgraph& body, const Carried& at,
                                  const Step& step, const std::vector<ValueId>& states_now) {
  NodeContext& b = body.ctx();
  std::vector<ValueId> next;
  for (const NamedValue& in : body.graph().inputs()) next.push_back(in.value);
  next[0] = b.op("add", {at.iteration, b.scalar(DType::kInt64, 1)});
  for (size_t i = 0; i < s.states; ++i) {
    ValueId out = carried_next(b, states_now[i], body.output_value(i),
                               str_cat("state ", i, " '", body.proto().inputs[i].name, "'"));
    next[at.first_state + i] = s.batched ? write_row(b, at.states[i], out, b.reshape(*step.row, {Dim(1)})) : out;
  }
  for (size_t o = 0; o < s.outputs; ++o) {
    ValueId row = body.output_value(s.states + o);
    std::vector<Dim> lead{s.length};
    if (s.batched) lead.insert(lead.begin(), s.batch);
    ValueId acc = body.add_input(str_cat("scan_output_", o), zero_rows(c, b.type_of(row), lead));
    ValueId t = directed(b, step.t, s.output_reverse[o], at.length);
    next.push_back(write_row(b, acc, row, row_position(b, step, t)));
  }
  return next;
}

void import_scan(NodeContext& c) {
  Subgraph body(c, "body");
  const ScanShape s = scan_shape(c, body.proto());
  NodeContext& b = body.ctx();
  const Carried at = carry_inputs(c, s, body);
  body.capture(outer_names(body.proto()));
  const Step step = step_of(b, s, at.iteration, at.length);
  std::vector<ValueId> states_now;  // opset 8: the batch row's
  for (size_t i = 0; i < s.states; ++i) {
    states_now.push_back(s.batched ? b.op("gather", {at.states[i], *step.row}, {{"axis", int64_t{0}}}) : at.states[i]);
    body.define_input(i, states_now.back());
  }
  for (size_t j = 0; j < s.inputs; ++j) body.define_input(s.states + j, at_step(b, s, step, at.scanned[j], j, at.length));
  body.import();
  const size_t first_output = body.operands().size();
  const std::vector<ValueId> next = body_outputs(c, s, body, at, step, states_now);
  const GraphRef predicate = add_predicate(c, body.graph(), 0, at.total, std::nullopt);
  const std::vector<ValueId> operands = body.operands();
  const GraphRef body_ref = body.attach(next);
  const std::vector<ValueId> out = c.ops("while_loop", operands, {{"predicate", predicate}, {"body", body_ref}});
  for (size_t i = 0; i < s.states; ++i) c.set_output(i, out[at.first_state + i]);
  for (size_t o = 0; o < s.outputs; ++o) {
    ValueId y = out[first_output + o];
    c.set_output(s.states + o, s.batched ? y : to_output_axis(c, y, s.output_axes[o]));
  }
}

}  // namespace

void register_scan_importers(ImportTable& t) { t["Scan"] = import_scan; }

}  // namespace maxc::onnx

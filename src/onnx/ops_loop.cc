// Loop, lowered one of two ways:
//   unrolled   when the trip count and the condition are known at import and the body is
//              small enough: each iteration's body is imported in place with its iteration
//              number known, so a body that slices at the iteration number (a Slice's starts
//              must be known) imports, and what is known about the carried values stays known;
//   while_loop otherwise, carrying (iteration, [condition], [trip count], v..., captured
//              outer values..., scan-output accumulators...), the predicate
//              "iteration < trip count and condition".
// Scan outputs need the iteration count at import (an accumulator has a static length): the
// trip count must be known and the loop unable to stop early, that is without a condition,
// or with one the body passes on unchanged or sets to a constant true, from a known initial
// value. A trip count or condition computed from graph inputs asks for those inputs' values
// (InputValuesNeeded), so the model compiles per set of them.
#include <algorithm>

#include "onnx/loop_parts.h"
#include "onnx/size_limits.h"
#include "onnx/subgraph.h"

namespace maxc::onnx {
namespace {

// At most this many node imports (trip count * body nodes) are unrolled.
constexpr int64_t kMaxUnrolledNodes = 1024;

struct LoopShape {
  const GraphProto* body = nullptr;
  size_t carried = 0;  // loop-carried values (inputs 2...)
  size_t scanned = 0;  // scan outputs (after the final carried values)
  bool has_trip_count = false, has_condition = false;
  std::optional<int64_t> trip_count;  // known at import
  std::optional<bool> condition;      // the initial condition, known at import
};

LoopShape loop_shape(NodeContext& c) {
  LoopShape s;
  s.body = &graph_attr(c, "body");
  if (c.num_inputs() < 2) c.invalid("Loop takes the inputs (M, cond, v...), it has ", c.num_inputs());
  s.carried = c.num_inputs() - 2;
  if (c.num_outputs() < s.carried)
    c.invalid("it carries ", s.carried, " values but has only ", c.num_outputs(), " outputs");
  s.scanned = c.num_outputs() - s.carried;
  const GraphProto& g = *s.body;
  if (g.inputs.size() != 2 + s.carried || g.outputs.size() != 1 + s.carried + s.scanned)
    c.invalid("body '", g.name, "' must take ", 2 + s.carried, " inputs and give ", 1 + s.carried + s.scanned,
              " outputs (the node carries ", s.carried, " values and scans ", s.scanned, "); it takes ",
              g.inputs.size(), " and gives ", g.outputs.size());
  for (size_t k = 0; k < s.carried; ++k)
    if (!c.has_input(2 + k)) c.invalid("loop-carried input ", 2 + k, " is missing");
  s.has_trip_count = c.has_input(0);
  s.has_condition = c.has_input(1);
  if (s.has_trip_count) {
    if (c.dtype(0) != DType::kInt64) c.invalid("the trip count must be int64, it is ", dtype_name(c.dtype(0)));
    const KnownValue* m = c.known(0);
    std::optional<std::vector<int64_t>> v = m ? m->static_ints() : std::nullopt;
    if (v && v->size() == 1) s.trip_count = std::max<int64_t>(0, (*v)[0]);
  }
  if (s.has_condition) {
    if (c.dtype(1) != DType::kBool) c.invalid("the condition must be bool, it is ", dtype_name(c.dtype(1)));
    const KnownValue* k = c.known(1);
    std::optional<std::vector<double>> v = k ? k->doubles() : std::nullopt;
    if (v && v->size() == 1) s.condition = (*v)[0] != 0;
  }
  return s;
}

Operand known_operand(KnownValue k) {
  Operand op;
  op.type = TensorType{k.dtype, {k.shape.begin(), k.shape.end()}, DeviceRef::cpu()};
  op.known = std::make_shared<KnownValue>(std::move(k));
  return op;
}

Operand known_scalar(DType dtype, double v) { return known_operand(KnownValue::from_doubles(dtype, {}, {v})); }

// ---- unrolled ----

struct Unrolled {
  std::vector<Operand> carried;            // the values the next iteration takes
  std::vector<std::vector<ValueId>> rows;  // per scan output, one row per iteration
  bool go_on = true;                       // the condition after the last iteration
};

// Imports iteration i of the body in place. False when its condition out is known only at
// run time (the loop cannot be unrolled).
bool unroll_iteration(NodeContext& c, const LoopShape& s, int64_t i, Unrolled& u) {
  const GraphProto& g = *s.body;
  const std::string where = str_cat("body '", g.name, "' (iteration ", i, ")");
  ValueTable scope(c.values());
  define_formal_input(c, g, 0, scope, known_scalar(DType::kInt64, static_cast<double>(i)));
  define_formal_input(c, g, 1, scope, known_scalar(DType::kBool, 1));  // an iteration runs while it holds
  for (size_t k = 0; k < s.carried; ++k) define_formal_input(c, g, 2 + k, scope, u.carried[k]);
  import_inline(c, g, where, scope);
  const std::string user = str_cat(c.label(), " ", where);
  if (s.has_condition) {
    const Operand& cond = scope.get(g.outputs[0].name, user);
    std::optional<std::vector<double>> v = cond.known ? cond.known->doubles() : std::nullopt;
    if (!v) return false;
    if (v->size() != 1) c.invalid(where, ": the condition output must hold one element, it holds ", v->size());
    u.go_on = (*v)[0] != 0;
  }
  for (size_t k = 0; k < s.carried; ++k) u.carried[k] = scope.as_operand(g.outputs[1 + k].name, user);
  for (size_t k = 0; k < s.scanned; ++k) u.rows[k].push_back(scope.value(g.outputs[1 + s.carried + k].name, user));
  return true;
}

// The scan outputs of a loop that ran no iteration: empty, with the rows' types an
// iteration would give (one imported for its types only; the compiler drops its ops).
std::vector<ValueId> empty_scan_outputs(NodeContext& c, const LoopShape& s, const std::vector<Operand>& initial) {
  Unrolled probe{initial, std::vector<std::vector<ValueId>>(s.scanned), true};
  LoopShape no_condition = s;
  no_condition.has_condition = false;
  unroll_iteration(c, no_condition, 0, probe);
  std::vector<ValueId> out;
  for (const std::vector<ValueId>& rows : probe.rows) out.push_back(zero_rows(c, c.type_of(rows[0]), {Dim(0)}));
  return out;
}

bool unrollable(const LoopShape& s) {
  if (!s.trip_count || (s.has_condition && !s.condition)) return false;
  const int64_t nodes = std::max<int64_t>(1, static_cast<int64_t>(s.body->nodes.size()));
  return *s.trip_count <= kMaxUnrolledNodes / nodes;
}

// False (the ops it added being dead) when an iteration's condition is known only at run time.
bool try_unroll(NodeContext& c, const LoopShape& s) {
  Unrolled u;
  for (size_t k = 0; k < s.carried; ++k) u.carried.push_back(c.values().as_operand(c.node().inputs[2 + k], c.label()));
  const std::vector<Operand> initial = u.carried;
  u.rows.resize(s.scanned);
  u.go_on = s.condition.value_or(true);
  int64_t ran = 0;
  for (; ran < *s.trip_count && u.go_on; ++ran)
    if (!unroll_iteration(c, s, ran, u)) return false;
  std::vector<ValueId> scanned;
  if (ran == 0 && s.scanned) scanned = empty_scan_outputs(c, s, initial);
  for (std::vector<ValueId>& rows : u.rows)
    if (!rows.empty()) scanned.push_back(c.op("stack", rows, {{"axis", int64_t{0}}}));
  for (size_t k = 0; k < s.carried; ++k) c.set_output_from(k, u.carried[k]);
  for (size_t k = 0; k < s.scanned; ++k) c.set_output(s.carried + k, scanned[k]);
  return true;
}

// ---- while_loop ----

// Whether the body's condition out may turn false: anything but cond_in passed on or a
// constant true.
bool may_stop_early(Subgraph& body, ValueId cond_in) {
  const Operand& out = body.output(0);
  if (out.value && *out.value == cond_in) return false;
  std::optional<std::vector<double>> v = out.known ? out.known->doubles() : std::nullopt;
  return !v || std::any_of(v->begin(), v->end(), [](double x) { return x == 0; });
}

[[noreturn]] void needs_iteration_count(NodeContext& c, const LoopShape& s) {
  if (!s.has_trip_count)
    c.unsupported("its scan outputs need the iteration count at import, and it has no trip count");
  c.needs_known({0, 1}, "the trip count", s.has_condition ? " and the initial condition" : "",
                " must be known when the model is imported: the scan outputs' length is the iteration count");
}

// The iteration count, which scan outputs need at import.
int64_t scan_length(NodeContext& c, const LoopShape& s, Subgraph& body, std::optional<ValueId> cond_in) {
  if (cond_in && may_stop_early(body, *cond_in))
    c.unsupported("its scan outputs need the iteration count at import, but the body computes the condition, so "
                  "the loop may stop early");
  if (!s.trip_count || (s.has_condition && !s.condition)) needs_iteration_count(c, s);
  return s.condition.value_or(true) ? *s.trip_count : 0;
}

// A scan output is one accumulator of every iteration's row, allocated before the loop runs:
// its size is bounded here, where the trip count is known, rather than left to overflow a
// shape or ask for petabytes at run time.
void check_scan_size(NodeContext& c, int64_t iterations, const TensorType& row, size_t k) {
  std::vector<int64_t> dims = {iterations};
  for (const Dim& d : row.dims)
    if (d.is_static()) dims.push_back(d.static_value());
  bounded_elements(c, dims, str_cat("scan output ", k, " (iterations x row)"), kMaxScanElements);
}

// Where the while_loop's values are among the body's inputs.
struct Carried {
  ValueId iteration = 0;                   // the body's input value (position 0)
  std::optional<size_t> condition, limit;  // positions
  std::optional<ValueId> condition_in;     // the body's input value
  size_t first_value = 0;                  // of the loop-carried values
  std::vector<ValueId> values_in;          // their body input values
};

// The body's inputs, with the initial values the while_loop takes, and its formal inputs.
Carried carry_inputs(NodeContext& c, const LoopShape& s, Subgraph& body) {
  const GraphProto& g = body.proto();
  Carried at;
  at.iteration = body.add_input(g.inputs[0].name, c.scalar(DType::kInt64, 0));
  body.define_input(0, at.iteration);
  if (s.has_condition) {
    at.condition = body.operands().size();
    at.condition_in = body.add_input(g.inputs[1].name, as_scalar(c, c.input(1), "the condition"));
    body.define_input(1, *at.condition_in);
  } else {
    body.define_input(1, known_scalar(DType::kBool, 1));  // ONNX gives it, and ignores what comes out
  }
  if (s.has_trip_count) {
    at.limit = body.operands().size();
    body.add_input("trip_count", as_scalar(c, c.input(0), "the trip count"));
  }
  at.first_value = body.operands().size();
  for (size_t k = 0; k < s.carried; ++k) {
    at.values_in.push_back(body.add_input(g.inputs[2 + k].name, c.input(2 + k)));
    body.define_input(2 + k, at.values_in.back());
  }
  return at;
}

// The body's outputs, one per input (each unchanged unless set here), then the scan
// outputs' accumulators, added as inputs too.
std::vector<ValueId> body_outputs(NodeContext& c, const LoopShape& s, Subgraph& body, const Carried& at) {
  NodeContext& b = body.ctx();
  std::vector<ValueId> next;
  for (const NamedValue& in : body.graph().inputs()) next.push_back(in.value);
  next[0] = b.op("add", {at.iteration, b.scalar(DType::kInt64, 1)});
  if (at.condition) {
    ValueId cond_out = body.output_value(0);
    if (b.type_of(cond_out).dtype != DType::kBool) b.invalid("the body's condition output must be bool");
    next[*at.condition] = as_scalar(b, cond_out, "the body's condition output");
  }
  for (size_t k = 0; k < s.carried; ++k)
    next[at.first_value + k] = carried_next(b, at.values_in[k], body.output_value(1 + k),
                                            str_cat("loop-carried value ", k, " '", body.proto().inputs[2 + k].name, "'"));
  if (!s.scanned) return next;
  const int64_t n = scan_length(c, s, body, at.condition_in);
  for (size_t k = 0; k < s.scanned; ++k) {
    ValueId row = body.output_value(1 + s.carried + k);
    check_scan_size(c, n, b.type_of(row), k);
    ValueId acc = body.add_input(str_cat("scan_output_", k), zero_rows(c, b.type_of(row), {Dim(n)}));
    next.push_back(write_row(b, acc, row, b.reshape(at.iteration, {Dim(1)})));
  }
  return next;
}

void loop_as_while(NodeContext& c, const LoopShape& s) {
  if (!s.has_trip_count && !s.has_condition)
    c.unsupported("it has neither a trip count nor a condition, so it would never end");
  if (s.scanned && (!s.trip_count || (s.has_condition && !s.condition)))
    needs_iteration_count(c, s);  // asked before the body, whose import may need them too
  Subgraph body(c, "body");
  const Carried at = carry_inputs(c, s, body);
  body.capture(outer_names(body.proto()));
  body.import();
  const size_t first_scanned = body.operands().size();
  const std::vector<ValueId> next = body_outputs(c, s, body, at);
  const GraphRef predicate = add_predicate(c, body.graph(), 0, at.limit, at.condition);
  const std::vector<ValueId> operands = body.operands();
  const GraphRef body_ref = body.attach(next);
  const std::vector<ValueId> out = c.ops("while_loop", operands, {{"predicate", predicate}, {"body", body_ref}});
  for (size_t k = 0; k < s.carried; ++k) c.set_output(k, out[at.first_value + k]);
  for (size_t k = 0; k < s.scanned; ++k) c.set_output(s.carried + k, out[first_scanned + k]);
}

void import_loop(NodeContext& c) {
  const LoopShape s = loop_shape(c);
  if (unrollable(s) && try_unroll(c, s)) return;
  loop_as_while(c, s);
}

}  // namespace

void register_loop_importers(ImportTable& t) { t["Loop"] = import_loop; }

}  // namespace maxc::onnx

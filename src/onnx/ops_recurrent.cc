// Recurrent operators RNN, GRU and LSTM, as our matmuls and elementwise ops, one cell per
// time step: unrolled at import over a short static sequence length, else (a symbolic or
// long one) a while_loop per direction that runs the cell once an iteration. The input
// projection X·Wᵀ (+ the biases) does not depend on the state, so it is one matmul over all
// time steps and directions; each step then adds only H·Rᵀ and the gate activations.
// Gate orders are ONNX's: GRU z, r, h; LSTM i, o, f, c; peepholes i, o, f.
// An absent initial state is zero, and the terms it would feed are left out rather than
// multiplied by a zero tensor. sequence_lens shorter than the input masks each step: a batch
// entry past its length keeps its state and outputs zeros (so the final state is the one at
// its last step, and a reverse pass starts at that step); an empty one ends in zeros.
#include <algorithm>
#include <cctype>
#include <optional>

#include "base/checked_math.h"
#include "onnx/dim_agreement.h"
#include "onnx/loop_parts.h"
#include "onnx/node_context.h"
#include "onnx/size_limits.h"
#include "onnx/value_table.h"

namespace maxc::onnx {
namespace {

// Unrolled, every step is a cell of a few ops and its output stays alive until Y
// concatenates them: planning that many live buffers grows as the square of the steps (1024
// steps compile in under a second, 4096 in 7 s). The loop form pays per iteration for the
// predicate, the gather of the step's input and the write of Y's row (a scatter into the
// whole [S, B, H] accumulator), so unrolled runs faster at every length up to this one
// (LSTM, hidden 64, batch 1, one thread: 512 steps 10 ms unrolled vs 21 ms looped, 1024
// steps 20 vs 72 ms); longer and symbolic sequences run as a loop.
constexpr int64_t kMaxUnrolledSteps = 1024;

enum Input : size_t { kX = 0, kW, kR, kB, kSeqLens, kInitialH, kInitialC, kP };
enum class Cell { kRnn, kGru, kLstm };

struct Activation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;
};

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// ONNX's defaults for the activations that take alpha/beta; `uses` says how many they take.
struct ActivationDefaults {
  int uses;
  double alpha, beta;
};

std::optional<ActivationDefaults> defaults_of(const std::string& name) {
  if (name == "relu" || name == "tanh" || name == "sigmoid" || name == "softsign" || name == "softplus")
    return ActivationDefaults{0, 0, 0};
  if (name == "leakyrelu") return ActivationDefaults{1, 0.01, 0};
  if (name == "thresholdedrelu" || name == "elu") return ActivationDefaults{1, 1.0, 0};
  if (name == "affine") return ActivationDefaults{2, 1.0, 0};
  if (name == "scaledtanh") return ActivationDefaults{2, 1.0, 1.0};
  if (name == "hardsigmoid") return ActivationDefaults{2, 0.2, 0.5};
  return std::nullopt;
}

class RecurrentImport {
 public:
  RecurrentImport(NodeContext& c, Cell cell) : c_(c), cell_(cell) {}

  void run() {
    read_attributes();
    read_sequence_lens();
    std::vector<ValueId> projections = project_inputs();
    std::vector<ValueId> ys, hs, cs;
    for (int64_t d = 0; d < dirs_; ++d) {
      ValueId projection = projections[static_cast<size_t>(d)];
      const bool reverse = d == 1 || direction_ == "reverse";
      Direction dir = direction_weights(d, projection);
      if (unrolled()) {
        run_direction(dir, reverse);
        if (c_.wants_output(0)) ys.push_back(c_.op("stack", dir.outputs, {{"axis", int64_t{0}}}));  // [S, B, H]
      } else {
        ValueId y = run_loop(dir, projection, reverse);
        if (c_.wants_output(0)) ys.push_back(y);
      }
      hs.push_back(*dir.h);
      if (dir.c) cs.push_back(*dir.c);
    }
    set_outputs(ys, hs, cs);
  }

 private:
  // The per-direction operands, and the state as the time loop carries it.
  struct Direction {
    std::vector<ValueId> steps;  // the projected input of each time step, [B, G*H]
    ValueId rt = 0;              // Rᵀ, [H, G*H]
    std::optional<ValueId> rt_zr, rt_h, rb_h;  // GRU: Rᵀ of z|r and of h, and h's recurrent bias
    std::optional<ValueId> p_i, p_o, p_f;      // LSTM peepholes, [H]
    std::optional<ValueId> h, c;               // the state; nullopt while it is zero
    std::vector<ValueId> outputs;              // H after each time step, in input time order
    std::vector<Activation> acts;
  };

  // ---- attributes ----

  int64_t gates() const { return cell_ == Cell::kRnn ? 1 : cell_ == Cell::kGru ? 3 : 4; }

  std::vector<std::string> default_activations() const {
    if (cell_ == Cell::kRnn) return {"tanh"};
    if (cell_ == Cell::kGru) return {"sigmoid", "tanh"};
    return {"sigmoid", "tanh", "tanh"};
  }

  void read_attributes() {
    direction_ = c_.attr_string("direction", "forward");
    if (direction_ != "forward" && direction_ != "reverse" && direction_ != "bidirectional")
      c_.invalid("direction \"", direction_, "\" (expected forward, reverse or bidirectional)");
    dirs_ = direction_ == "bidirectional" ? 2 : 1;
    layout_ = c_.attr_int("layout", 0);
    if (layout_ != 0 && layout_ != 1) c_.invalid("layout ", layout_, " (expected 0 or 1)");
    if (c_.rank(kX) != 3 || c_.rank(kW) != 3 || c_.rank(kR) != 3)
      c_.invalid("X, W and R must have rank 3, got ", c_.rank(kX), ", ", c_.rank(kW), " and ", c_.rank(kR));
    dt_ = c_.dtype(kX);
    hidden_ = c_.attr("hidden_size") ? c_.attr_int("hidden_size", 0) : static_dim(c_.type(kR).dims[2], "R's last dim");
    if (hidden_ <= 0) c_.invalid("hidden_size must be positive, got ", hidden_);
    // Gates x directions x hidden (at most 4 x 2 x hidden) must stay a count a tensor can have.
    if (hidden_ > kMaxElements / 8) c_.invalid("hidden_size ", hidden_, " is larger than any tensor can hold");
    if (static_dim(c_.type(kW).dims[0], "W's direction dim") != dirs_)
      c_.invalid("W has ", c_.type(kW).dims[0], " directions but direction \"", direction_, "\" needs ", dirs_);
    seq_ = c_.type(kX).dims[static_cast<size_t>(layout_)];
    if (seq_.is_static() && seq_.static_value() <= 0) c_.unsupported("an empty sequence");
    clip_ = c_.attr("clip") ? std::optional<double>(c_.attr_float("clip", 0)) : std::nullopt;
    if (clip_ && *clip_ < 0) c_.invalid("clip must be >= 0, got ", *clip_);
    linear_before_reset_ = cell_ == Cell::kGru && c_.attr_int("linear_before_reset", 0) != 0;
    if (cell_ == Cell::kLstm && c_.attr_int("input_forget", 0) != 0) c_.unsupported("input_forget = 1");
    read_activations();
  }

  int64_t static_dim(const Dim& d, std::string_view what) {
    if (!d.is_static()) c_.unsupported(what, " is the symbolic dim ", d, "; it must be static");
    return d.static_value();
  }

  // activations lists the cell's functions once per direction; activation_alpha/beta are
  // consumed in that order by the functions that take them.
  void read_activations() {
    std::vector<std::string> names;
    if (const AttributeProto* a = c_.attr("activations")) {
      for (const std::string& s : a->strings) names.push_back(lower(s));
    } else {
      for (int64_t d = 0; d < dirs_; ++d)
        for (const std::string& s : default_activations()) names.push_back(s);
    }
    size_t per_dir = default_activations().size();
    if (names.size() != per_dir * static_cast<size_t>(dirs_))
      c_.invalid("activations lists ", names.size(), " functions; expected ", per_dir * static_cast<size_t>(dirs_));
    std::vector<float> alphas = c_.attr_floats("activation_alpha").value_or(std::vector<float>{});
    std::vector<float> betas = c_.attr_floats("activation_beta").value_or(std::vector<float>{});
    size_t next_alpha = 0, next_beta = 0;
    for (const std::string& n : names) {
      std::optional<ActivationDefaults> def = defaults_of(n);
      if (!def) c_.unsupported("activation \"", n, "\"");
      Activation act{n, def->alpha, def->beta};
      if (def->uses >= 1 && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
      if (def->uses >= 2 && next_beta < betas.size()) act.beta = betas[next_beta++];
      acts_.push_back(act);
    }
  }

  // The lengths as a [B, 1] int64 column to compare each step's time against; none when
  // every sequence is known to run the full length.
  void read_sequence_lens() {
    if (!c_.has_input(kSeqLens)) return;
    if (c_.rank(kSeqLens) != 1) c_.invalid("sequence_lens must have rank 1, got ", c_.rank(kSeqLens));
    const KnownValue* k = c_.known(kSeqLens);
    if (std::optional<std::vector<int64_t>> known = k ? k->static_ints() : std::nullopt) {
      const std::optional<int64_t> s = static_seq();
      for (int64_t n : *known)
        if (n < 0 || (s && n > *s)) c_.invalid("sequence_lens holds ", n, "; lengths must be in [0, ", seq_, "]");
      if (s && std::all_of(known->begin(), known->end(), [&](int64_t n) { return n == *s; })) return;
    }
    lens_ = c_.reshape(c_.cast(c_.input(kSeqLens), DType::kInt64), {c_.type(kSeqLens).dims[0], Dim(1)});
  }

  // ---- operand plumbing ----

  ValueId in(size_t i) { return c_.cast(c_.input(i), dt_); }

  ValueId permute(ValueId v, std::vector<int64_t> dims) { return c_.op("permute", {v}, {{"dims", std::move(dims)}}); }

  std::vector<ValueId> split(ValueId v, std::vector<int64_t> sizes, int64_t axis) {
    if (sizes.size() == 1) return {v};
    std::vector<Dim> d(sizes.begin(), sizes.end());
    return g().ops("split", {v}, {{"split_sizes", d}, {"axis", axis}});
  }

  // The slice of a [D, ...] operand for direction d, without the direction axis.
  std::vector<ValueId> per_direction(ValueId v) {
    std::vector<ValueId> parts = split(v, std::vector<int64_t>(static_cast<size_t>(dirs_), 1), 0);
    for (ValueId& p : parts) {
      std::vector<Dim> d = c_.type_of(p).dims;
      d.erase(d.begin());
      p = c_.reshape(p, d);
    }
    return parts;
  }

  // The biases added once to the projection, [D * G*H]: Wb + Rb, except GRU's h-gate Rb
  // under linear_before_reset, which the reset gate multiplies at each step.
  std::optional<ValueId> projection_bias() {
    if (!c_.has_input(kB)) return std::nullopt;
    int64_t gh = gates() * hidden_;
    std::vector<ValueId> wr = split(in(kB), {gh, gh}, 1);
    ValueId rb = wr[1];
    if (linear_before_reset_) {
      rb = split(rb, {2 * hidden_, hidden_}, 1)[0];
      rb = c_.op("pad", {rb}, {{"paddings", std::vector<int64_t>{0, 0, 0, hidden_}}, {"value", 0.0}});
    }
    return c_.reshape(c_.op("add", {wr[0], rb}), {Dim(dirs_ * gh)});
  }

  // X·Wᵀ + bias for every time step and direction in one matmul; per direction [S, B, G*H].
  std::vector<ValueId> project_inputs() {
    ValueId x = in(kX);
    if (layout_ == 1) x = permute(x, {1, 0, 2});
    const std::vector<Dim> xd = c_.type_of(x).dims;  // [S, B, I]
    int64_t gh = gates() * hidden_;
    ValueId w = c_.reshape(in(kW), {Dim(dirs_ * gh), xd[2]});
    ValueId p = c_.op("matmul", {c_.reshape(x, {xd[0] * xd[1], xd[2]}), permute(w, {1, 0})});
    if (std::optional<ValueId> b = projection_bias()) p = c_.op("add", {p, *b});
    p = c_.reshape(p, {xd[0], xd[1], Dim(dirs_ * gh)});
    return split(p, std::vector<int64_t>(static_cast<size_t>(dirs_), gh), 2);
  }

  // The initial state of input i, [B, H] per direction (nullopt when absent: zero). Its
  // batch must be X's: a file that names the two dims apart (or leaves both unnamed) has it
  // checked when the model runs (dim_agreement.h), as ONNX Runtime does.
  std::optional<ValueId> initial_state(size_t i, int64_t d) {
    if (!c_.has_input(i)) return std::nullopt;
    ValueId s = in(i);
    if (layout_ == 1) s = permute(s, {1, 0, 2});
    std::vector<Dim> want = c_.type_of(s).dims;  // [D, B, H]
    const std::vector<Dim> x = c_.type(kX).dims;
    if (want.size() == 3 && x.size() == 3) want[1] = x[layout_ == 1 ? 0 : 1];
    s = assert_dims(c_, s, want, str_cat("input ", i, " (the initial state)"));
    return per_direction(s)[static_cast<size_t>(d)];
  }

  Direction direction_weights(int64_t d, ValueId projection) {
    Direction dir;
    size_t di = static_cast<size_t>(d);
    for (ValueId s : unrolled() ? split(projection, std::vector<int64_t>(static_cast<size_t>(*static_seq()), 1), 0)
                                : std::vector<ValueId>{}) {
      std::vector<Dim> sd = c_.type_of(s).dims;
      dir.steps.push_back(c_.reshape(s, {sd[1], sd[2]}));
    }
    dir.rt = permute(per_direction(in(kR))[di], {1, 0});
    if (cell_ == Cell::kGru && !linear_before_reset_) {
      std::vector<ValueId> parts = split(dir.rt, {2 * hidden_, hidden_}, 1);
      dir.rt_zr = parts[0], dir.rt_h = parts[1];
    }
    if (linear_before_reset_ && c_.has_input(kB)) {
      ValueId rb = split(per_direction(in(kB))[di], {3 * hidden_, 3 * hidden_}, 0)[1];
      dir.rb_h = split(rb, {2 * hidden_, hidden_}, 0)[1];
    }
    if (cell_ == Cell::kLstm && c_.has_input(kP)) {
      std::vector<ValueId> p = split(per_direction(in(kP))[di], {hidden_, hidden_, hidden_}, 0);
      dir.p_i = p[0], dir.p_o = p[1], dir.p_f = p[2];
    }
    dir.h = initial_state(kInitialH, d);
    if (cell_ == Cell::kLstm) dir.c = initial_state(kInitialC, d);
    size_t per_dir = default_activations().size();
    dir.acts.assign(acts_.begin() + static_cast<std::ptrdiff_t>(di * per_dir),
                    acts_.begin() + static_cast<std::ptrdiff_t>((di + 1) * per_dir));
    return dir;
  }

  // ---- the cells ----

  ValueId add(ValueId a, std::optional<ValueId> b) { return b ? g().op("add", {a, *b}) : a; }
  ValueId mul(ValueId a, ValueId b) { return g().op("mul", {a, b}); }
  ValueId scalar(double v) { return g().scalar(dt_, v); }

  ValueId activate(const Activation& a, ValueId x) {
    if (clip_) x = g().op("clamp", {x}, {{"min", -*clip_}, {"max", *clip_}});
    const std::string& n = a.name;
    if (n == "sigmoid") return g().op("sigmoid", {x});
    if (n == "tanh") return g().op("tanh", {x});
    if (n == "relu") return g().op("relu", {x});
    if (n == "affine") return g().op("add", {mul(x, scalar(a.alpha)), scalar(a.beta)});
    if (n == "scaledtanh") return mul(g().op("tanh", {mul(x, scalar(a.beta))}), scalar(a.alpha));
    if (n == "hardsigmoid")
      return g().op("clamp", {g().op("add", {mul(x, scalar(a.alpha)), scalar(a.beta)})}, {{"min", 0.0}, {"max", 1.0}});
    if (n == "softsign") return g().op("div", {x, g().op("add", {g().op("abs", {x}), scalar(1)})});
    if (n == "softplus") return g().op("log1p", {g().op("exp", {x})});
    ValueId positive = g().op("greater_equal", {x, scalar(0)});
    if (n == "leakyrelu") return g().op("where", {positive, x, mul(x, scalar(a.alpha))});
    if (n == "elu") {
      ValueId neg = mul(g().op("sub", {g().op("exp", {x}), scalar(1)}), scalar(a.alpha));
      return g().op("where", {positive, x, neg});
    }
    // thresholdedrelu
    return g().op("where", {g().op("greater", {x, scalar(a.alpha)}), x, scalar(0)});
  }

  std::optional<ValueId> recurrent(const Direction& dir, ValueId rt) {
    if (!dir.h) return std::nullopt;
    return g().op("matmul", {*dir.h, rt});
  }

  // Ht = f(Xt·Wᵀ + Ht-1·Rᵀ + Wb + Rb)
  void rnn_step(Direction& dir, ValueId xt) { dir.h = activate(dir.acts[0], add(xt, recurrent(dir, dir.rt))); }

  // z, r = f(..); h~ = g(Xt·Whᵀ + (r ⊙ Ht-1)·Rhᵀ + ..) or, with linear_before_reset,
  // g(Xt·Whᵀ + r ⊙ (Ht-1·Rhᵀ + Rbh) + ..); Ht = (1 - z) ⊙ h~ + z ⊙ Ht-1.
  void gru_step(Direction& dir, ValueId xt) {
    std::vector<ValueId> x = split(xt, {hidden_, hidden_, hidden_}, 1);
    std::optional<ValueId> hz, hr, hh;
    if (std::optional<ValueId> rec = recurrent(dir, linear_before_reset_ ? dir.rt : *dir.rt_zr)) {
      std::vector<ValueId> parts = split(*rec, linear_before_reset_ ? std::vector<int64_t>{hidden_, hidden_, hidden_}
                                                                    : std::vector<int64_t>{hidden_, hidden_},
                                         1);
      hz = parts[0], hr = parts[1];
      if (linear_before_reset_) hh = parts[2];
    }
    ValueId z = activate(dir.acts[0], add(x[0], hz));
    ValueId r = activate(dir.acts[0], add(x[1], hr));
    std::optional<ValueId> reset;
    if (linear_before_reset_) {
      std::optional<ValueId> lin = hh ? std::optional<ValueId>(add(*hh, dir.rb_h)) : dir.rb_h;
      if (lin) reset = mul(r, *lin);
    } else if (dir.h) {
      reset = g().op("matmul", {mul(r, *dir.h), *dir.rt_h});
    }
    ValueId candidate = activate(dir.acts[1], add(x[2], reset));
    ValueId keep_new = mul(g().op("sub", {scalar(1), z}), candidate);
    dir.h = dir.h ? g().op("add", {keep_new, mul(z, *dir.h)}) : keep_new;
  }

  // i, f = f(.. + P ⊙ Ct-1); c~ = g(..); Ct = f ⊙ Ct-1 + i ⊙ c~; o = f(.. + Po ⊙ Ct);
  // Ht = o ⊙ h(Ct).
  void lstm_step(Direction& dir, ValueId xt) {
    std::vector<ValueId> gate = split(add(xt, recurrent(dir, dir.rt)), {hidden_, hidden_, hidden_, hidden_}, 1);
    auto peephole = [&](const std::optional<ValueId>& p, const std::optional<ValueId>& state) -> std::optional<ValueId> {
      if (!p || !state) return std::nullopt;
      return mul(*p, *state);
    };
    ValueId i = activate(dir.acts[0], add(gate[0], peephole(dir.p_i, dir.c)));
    ValueId f = activate(dir.acts[0], add(gate[2], peephole(dir.p_f, dir.c)));
    ValueId cand = activate(dir.acts[1], gate[3]);
    ValueId c = mul(i, cand);
    if (dir.c) c = g().op("add", {mul(f, *dir.c), c});
    dir.c = c;
    ValueId o = activate(dir.acts[0], add(gate[1], peephole(dir.p_o, dir.c)));
    dir.h = mul(o, activate(dir.acts[2], c));
  }

  // `updated` where the step is within the entry's sequence, else `kept` (zero when absent).
  ValueId within(ValueId mask, ValueId updated, std::optional<ValueId> kept) {
    return g().op("where", {mask, updated, kept ? *kept : scalar(0)});
  }

  // Past an entry's length, the step at `time` (int64, rank 0) keeps the state it started
  // from (h, cell); it returns the step's output, 0 there.
  ValueId mask_step(Direction& dir, ValueId time, std::optional<ValueId> h, std::optional<ValueId> cell) {
    ValueId mask = g().op("less", {time, *lens_});  // [B, 1]
    ValueId out = within(mask, *dir.h, std::nullopt);
    dir.h = within(mask, *dir.h, h);
    if (dir.c) dir.c = within(mask, *dir.c, cell);
    return out;
  }

  // An empty sequence ends in a zero state, not its initial one (as ONNX Runtime has it).
  void zero_empty(Direction& dir) {
    ValueId ran = g().op("greater", {*lens_, g().scalar(DType::kInt64, 0)});
    dir.h = within(ran, *dir.h, std::nullopt);
    if (dir.c) dir.c = within(ran, *dir.c, std::nullopt);
  }

  // One time step of the cell on xt [B, G*H]; returns the step's output.
  ValueId step(Direction& dir, ValueId xt, ValueId time) {
    const std::optional<ValueId> h = dir.h, cell = dir.c;
    if (cell_ == Cell::kRnn) rnn_step(dir, xt);
    else if (cell_ == Cell::kGru) gru_step(dir, xt);
    else lstm_step(dir, xt);
    return lens_ ? mask_step(dir, time, h, cell) : *dir.h;
  }

  void run_direction(Direction& dir, bool reverse) {
    const int64_t n = *static_seq();
    dir.outputs.assign(static_cast<size_t>(n), 0);
    for (int64_t k = 0; k < n; ++k) {
      size_t t = static_cast<size_t>(reverse ? n - 1 - k : k);
      dir.outputs[t] = step(dir, dir.steps[t], g().scalar(DType::kInt64, static_cast<double>(t)));
    }
    if (lens_) zero_empty(dir);
  }

  // ---- the loop form ----

  // The while_loop's body: a graph of its own that sees only its inputs, each an operand
  // the loop passes (the outer graph's value it starts from).
  struct Body {
    Graph graph;
    ValueTable values{graph};
    std::vector<ValueId> operands;

    explicit Body(std::string name) : graph(std::move(name)) {}
    ValueId carry(NodeContext& outer, std::string name, ValueId start) {
      operands.push_back(start);
      return graph.add_input(std::move(name), outer.type_of(start));
    }
  };

  // Y is one accumulator, allocated before the loop runs and written a row per step: its
  // size is bounded here where the length is known, as a Loop's scan outputs are.
  void check_y_size(const std::vector<Dim>& pd) {
    if (!static_seq()) return;
    std::vector<int64_t> dims = {*static_seq(), hidden_};
    if (pd[1].is_static()) dims.push_back(pd[1].static_value());
    bounded_elements(c_, dims, str_cat("Y over a sequence of ", *static_seq(), " steps (steps x hidden x batch)"),
                     kMaxScanElements);
  }

  // The direction's recurrence as a while_loop over the time steps, carrying (iteration,
  // steps, h, [c], [Y], projection, weights..., [lengths]); dir.h and dir.c become the
  // final state. Returns Y [S, B, H] (when wanted).
  ValueId run_loop(Direction& dir, ValueId projection, bool reverse) {
    const std::vector<Dim> pd = c_.type_of(projection).dims;  // [S, B, G*H]
    // A state the file leaves out is zero, which the loop carries as a tensor.
    const ValueId zero_state = c_.op("broadcast_to", {scalar(0)}, {{"shape", std::vector<Dim>{pd[1], Dim(hidden_)}}});
    Body body(str_cat(c_.node().name.empty() ? "recurrence" : c_.node().name, "_steps"));
    NodeContext b(c_.node(), c_.index(), c_.opset(), body.values, body.graph);
    Direction in = dir;  // the body's values
    const ValueId k = body.carry(c_, "iteration", c_.scalar(DType::kInt64, 0));
    const ValueId steps = body.carry(c_, "steps", count_value(c_, seq_));
    const size_t at_h = body.operands.size();
    in.h = body.carry(c_, "h", dir.h.value_or(zero_state));
    if (cell_ == Cell::kLstm) in.c = body.carry(c_, "c", dir.c.value_or(zero_state));
    const size_t at_y = body.operands.size();
    const bool wants_y = c_.wants_output(0);
    if (wants_y) check_y_size(pd);
    const ValueId y = wants_y ? body.carry(c_, "y", zero_rows(c_, c_.type_of(zero_state), {seq_})) : 0;
    const ValueId xs = body.carry(c_, "projection", projection);
    in.rt = body.carry(c_, "rt", dir.rt);
    auto carry_opt = [&](std::optional<ValueId>& v, const char* name) {
      if (v) v = body.carry(c_, name, *v);
    };
    carry_opt(in.rt_zr, "rt_zr"), carry_opt(in.rt_h, "rt_h"), carry_opt(in.rb_h, "rb_h");
    carry_opt(in.p_i, "p_i"), carry_opt(in.p_o, "p_o"), carry_opt(in.p_f, "p_f");
    const std::optional<ValueId> outer_lens = lens_;
    carry_opt(lens_, "lengths");

    std::vector<ValueId> next;
    for (const NamedValue& v : body.graph.inputs()) next.push_back(v.value);
    g_ = &b;
    const ValueId one = b.scalar(DType::kInt64, 1);
    const ValueId time = reverse ? b.op("sub", {b.op("sub", {steps, one}), k}) : k;
    const ValueId row = step(in, b.op("gather", {xs, time}, {{"axis", int64_t{0}}}), time);
    next[0] = b.op("add", {k, one});
    next[at_h] = carried_next(b, next[at_h], *in.h, "the hidden state");
    if (in.c) next[at_h + 1] = carried_next(b, next[at_h + 1], *in.c, "the cell state");
    if (wants_y) next[at_y] = write_row(b, y, row, b.reshape(time, {Dim(1)}));
    g_ = &c_;
    lens_ = outer_lens;

    const GraphRef predicate = add_predicate(c_, body.graph, 0, 1, std::nullopt);
    std::vector<NamedValue> outputs;
    for (ValueId v : next) outputs.push_back({"", v});
    body.graph.set_outputs(std::move(outputs));
    const GraphRef body_ref{c_.graph().add_subgraph(std::move(body.graph))};
    const std::vector<ValueId> out =
        c_.ops("while_loop", body.operands, {{"predicate", predicate}, {"body", body_ref}});
    dir.h = out[at_h];
    if (cell_ == Cell::kLstm) dir.c = out[at_h + 1];
    if (lens_) zero_empty(dir);
    return wants_y ? out[at_y] : 0;
  }

  // Y [S, D, B, H], Y_h and Y_c [D, B, H]; layout 1 puts the batch first.
  void set_outputs(const std::vector<ValueId>& ys, const std::vector<ValueId>& hs, const std::vector<ValueId>& cs) {
    if (c_.wants_output(0)) {
      ValueId y = c_.op("stack", ys, {{"axis", int64_t{1}}});
      c_.set_output(0, layout_ == 1 ? permute(y, {2, 0, 1, 3}) : y);
    }
    auto final_state = [&](const std::vector<ValueId>& s) {
      ValueId v = c_.op("stack", s, {{"axis", int64_t{0}}});
      return layout_ == 1 ? permute(v, {1, 0, 2}) : v;
    };
    if (c_.wants_output(1)) c_.set_output(1, final_state(hs));
    if (cell_ == Cell::kLstm && c_.wants_output(2)) c_.set_output(2, final_state(cs));
  }

  std::optional<int64_t> static_seq() const {
    return seq_.is_static() ? std::optional<int64_t>(seq_.static_value()) : std::nullopt;
  }
  bool unrolled() const { return static_seq() && *static_seq() <= kMaxUnrolledSteps; }

  NodeContext& g() { return *g_; }  // where the cells build: the node's graph or a loop body

  NodeContext& c_;
  NodeContext* g_ = &c_;
  Cell cell_;
  std::string direction_;
  int64_t dirs_ = 1, layout_ = 0, hidden_ = 0;
  Dim seq_{0};  // X's sequence length, [S, B, I] after layout
  DType dt_ = DType::kInvalid;
  std::optional<double> clip_;
  std::optional<ValueId> lens_;  // [B, 1] int64, when a sequence may end early
  bool linear_before_reset_ = false;
  std::vector<Activation> acts_;
};

}  // namespace

void register_recurrent_importers(ImportTable& t) {
  t["RNN"] = [](NodeContext& c) { RecurrentImport(c, Cell::kRnn).run(); };
  t["GRU"] = [](NodeContext& c) { RecurrentImport(c, Cell::kGru).run(); };
  t["LSTM"] = [](NodeContext& c) { RecurrentImport(c, Cell::kLstm).run(); };
}

}  // namespace maxc::onnx

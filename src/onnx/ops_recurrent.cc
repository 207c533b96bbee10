// Recurrent operators RNN, GRU and LSTM, unrolled over a static sequence length into our
// matmuls and elementwise ops (we have no loop op to run them step by step). The input
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
#include "onnx/node_context.h"

namespace maxc::onnx {
namespace {

// The recurrence is unrolled at import, a cell of a few ops per step, and every step's output
// stays alive until Y concatenates them: planning that many live buffers grows as the square
// of the steps (1024 steps compile in half a second, 4096 in 7 s, 16384 in minutes). Longer
// sequences wait for a recurrence that runs as a loop instead.
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
      Direction dir = direction_weights(d, projections[static_cast<size_t>(d)]);
      run_direction(dir, d == 1 || direction_ == "reverse");
      if (c_.wants_output(0)) ys.push_back(c_.op("stack", dir.outputs, {{"axis", int64_t{0}}}));  // [S, B, H]
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
    seq_ = static_dim(c_.type(kX).dims[static_cast<size_t>(layout_)], "the sequence length");
    if (seq_ <= 0) c_.unsupported("an empty sequence");
    if (seq_ > kMaxUnrolledSteps)
      c_.exhausted("a sequence of ", seq_, " steps (the recurrence is unrolled, one cell per step, at most ",
                   kMaxUnrolledSteps, ")");
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
      for (int64_t n : *known)
        if (n < 0 || n > seq_) c_.invalid("sequence_lens holds ", n, "; lengths must be in [0, ", seq_, "]");
      if (std::all_of(known->begin(), known->end(), [&](int64_t n) { return n == seq_; })) return;
    }
    lens_ = c_.reshape(c_.cast(c_.input(kSeqLens), DType::kInt64), {c_.type(kSeqLens).dims[0], Dim(1)});
  }

  // ---- operand plumbing ----

  ValueId in(size_t i) { return c_.cast(c_.input(i), dt_); }

  ValueId permute(ValueId v, std::vector<int64_t> dims) { return c_.op("permute", {v}, {{"dims", std::move(dims)}}); }

  std::vector<ValueId> split(ValueId v, std::vector<int64_t> sizes, int64_t axis) {
    if (sizes.size() == 1) return {v};
    std::vector<Dim> d(sizes.begin(), sizes.end());
    return c_.ops("split", {v}, {{"split_sizes", d}, {"axis", axis}});
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
    for (ValueId s : split(projection, std::vector<int64_t>(static_cast<size_t>(seq_), 1), 0)) {
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

  ValueId add(ValueId a, std::optional<ValueId> b) { return b ? c_.op("add", {a, *b}) : a; }
  ValueId mul(ValueId a, ValueId b) { return c_.op("mul", {a, b}); }
  ValueId scalar(double v) { return c_.scalar(dt_, v); }

  ValueId activate(const Activation& a, ValueId x) {
    if (clip_) x = c_.op("clamp", {x}, {{"min", -*clip_}, {"max", *clip_}});
    const std::string& n = a.name;
    if (n == "sigmoid") return c_.op("sigmoid", {x});
    if (n == "tanh") return c_.op("tanh", {x});
    if (n == "relu") return c_.op("relu", {x});
    if (n == "affine") return c_.op("add", {mul(x, scalar(a.alpha)), scalar(a.beta)});
    if (n == "scaledtanh") return mul(c_.op("tanh", {mul(x, scalar(a.beta))}), scalar(a.alpha));
    if (n == "hardsigmoid")
      return c_.op("clamp", {c_.op("add", {mul(x, scalar(a.alpha)), scalar(a.beta)})}, {{"min", 0.0}, {"max", 1.0}});
    if (n == "softsign") return c_.op("div", {x, c_.op("add", {c_.op("abs", {x}), scalar(1)})});
    if (n == "softplus") return c_.op("log1p", {c_.op("exp", {x})});
    ValueId positive = c_.op("greater_equal", {x, scalar(0)});
    if (n == "leakyrelu") return c_.op("where", {positive, x, mul(x, scalar(a.alpha))});
    if (n == "elu") {
      ValueId neg = mul(c_.op("sub", {c_.op("exp", {x}), scalar(1)}), scalar(a.alpha));
      return c_.op("where", {positive, x, neg});
    }
    // thresholdedrelu
    return c_.op("where", {c_.op("greater", {x, scalar(a.alpha)}), x, scalar(0)});
  }

  std::optional<ValueId> recurrent(const Direction& dir, ValueId rt) {
    if (!dir.h) return std::nullopt;
    return c_.op("matmul", {*dir.h, rt});
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
      reset = c_.op("matmul", {mul(r, *dir.h), *dir.rt_h});
    }
    ValueId candidate = activate(dir.acts[1], add(x[2], reset));
    ValueId keep_new = mul(c_.op("sub", {scalar(1), z}), candidate);
    dir.h = dir.h ? c_.op("add", {keep_new, mul(z, *dir.h)}) : keep_new;
  }

  // i, f = f(.. + P ⊙ Ct-1); c~ = g(..); Ct = f ⊙ Ct-1 + i ⊙ c~; o = f(.. + Po ⊙ Ct);
  // Ht = o ⊙ h(Ct).
  void lstm_step(Direction& dir, ValueId xt) {
    std::vector<ValueId> g = split(add(xt, recurrent(dir, dir.rt)), {hidden_, hidden_, hidden_, hidden_}, 1);
    auto peephole = [&](const std::optional<ValueId>& p, const std::optional<ValueId>& state) -> std::optional<ValueId> {
      if (!p || !state) return std::nullopt;
      return mul(*p, *state);
    };
    ValueId i = activate(dir.acts[0], add(g[0], peephole(dir.p_i, dir.c)));
    ValueId f = activate(dir.acts[0], add(g[2], peephole(dir.p_f, dir.c)));
    ValueId cand = activate(dir.acts[1], g[3]);
    ValueId c = mul(i, cand);
    if (dir.c) c = c_.op("add", {mul(f, *dir.c), c});
    dir.c = c;
    ValueId o = activate(dir.acts[0], add(g[1], peephole(dir.p_o, dir.c)));
    dir.h = mul(o, activate(dir.acts[2], c));
  }

  // `updated` where the step is within the entry's sequence, else `kept` (zero when absent).
  ValueId within(ValueId mask, ValueId updated, std::optional<ValueId> kept) {
    return c_.op("where", {mask, updated, kept ? *kept : scalar(0)});
  }

  // Past an entry's length, step t keeps the state it started from (h, cell) and outputs 0.
  void mask_step(Direction& dir, size_t t, std::optional<ValueId> h, std::optional<ValueId> cell) {
    ValueId mask = c_.op("less", {c_.scalar(DType::kInt64, static_cast<double>(t)), *lens_});  // [B, 1]
    dir.outputs[t] = within(mask, *dir.h, std::nullopt);
    dir.h = within(mask, *dir.h, h);
    if (dir.c) dir.c = within(mask, *dir.c, cell);
  }

  // An empty sequence ends in a zero state, not its initial one (as ONNX Runtime has it).
  void zero_empty(Direction& dir) {
    ValueId ran = c_.op("greater", {*lens_, c_.scalar(DType::kInt64, 0)});
    dir.h = within(ran, *dir.h, std::nullopt);
    if (dir.c) dir.c = within(ran, *dir.c, std::nullopt);
  }

  void run_direction(Direction& dir, bool reverse) {
    dir.outputs.assign(static_cast<size_t>(seq_), 0);
    for (int64_t k = 0; k < seq_; ++k) {
      size_t t = static_cast<size_t>(reverse ? seq_ - 1 - k : k);
      const std::optional<ValueId> h = dir.h, cell = dir.c;
      if (cell_ == Cell::kRnn) rnn_step(dir, dir.steps[t]);
      else if (cell_ == Cell::kGru) gru_step(dir, dir.steps[t]);
      else lstm_step(dir, dir.steps[t]);
      dir.outputs[t] = *dir.h;
      if (lens_) mask_step(dir, t, h, cell);
    }
    if (lens_) zero_empty(dir);
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

  NodeContext& c_;
  Cell cell_;
  std::string direction_;
  int64_t dirs_ = 1, layout_ = 0, hidden_ = 0, seq_ = 0;
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

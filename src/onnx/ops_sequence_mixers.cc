// The token mixers of recent ONNX opsets, composed from our ops: SwiGLU (opset 28),
// CausalConvWithState and LinearAttention (opset 27), FlexAttention (ai.onnx.preview, whose
// score_mod/prob_mod subgraphs are imported in place); and RoiAlign, whose sampling grid is
// static once sampling_ratio is given.
#include <cmath>
#include <climits>
#include <memory>
#include <optional>

#include "onnx/dtypes.h"
#include "onnx/node_context.h"
#include "onnx/size_limits.h"
#include "onnx/tensor_data.h"
#include "onnx/value_table.h"

namespace maxc::onnx {
namespace {

constexpr int64_t kOpen = INT64_MAX;  // slice_tensor's open start/stop

int64_t static_dim(const NodeContext& c, const Dim& d, std::string_view what) {
  if (!d.is_static()) c.unsupported(what, " is the symbolic dim ", d, "; it must be static");
  return d.static_value();
}

ValueId permute(NodeContext& c, ValueId v, std::vector<int64_t> dims) {
  return c.op("permute", {v}, {{"dims", std::move(dims)}});
}

// Swaps the last two axes.
ValueId transpose_last(NodeContext& c, ValueId v) {
  int64_t r = c.type_of(v).rank();
  return c.op("transpose", {v}, {{"axis_1", r - 2}, {"axis_2", r - 1}});
}

// ---- SwiGLU ----

// Y = A ⊙ sigmoid(alpha·A) ⊙ B, each step in the input type, as ONNX's Swish and Mul are.
void import_swiglu(NodeContext& c) {
  const TensorType a = c.type(0), b = c.type(1);
  if (a.dtype != b.dtype)
    c.invalid("A and B must have one dtype, got ", dtype_name(a.dtype), " and ", dtype_name(b.dtype));
  bool clash = a.rank() != b.rank();
  for (size_t i = 0; !clash && i < a.dims.size(); ++i)
    clash = a.dims[i].is_static() && b.dims[i].is_static() && a.dims[i] != b.dims[i];
  if (clash)
    c.invalid("A and B must have one shape (SwiGLU does not broadcast), got ", dims_to_string(a.dims), " and ",
              dims_to_string(b.dims));
  if (!dtype_is_float(a.dtype)) c.unsupported("dtype ", dtype_name(a.dtype), "; only float types are supported");
  ValueId x = c.input(0);
  double alpha = c.attr_float("alpha", 1.f);
  ValueId gate = alpha == 1 ? x : c.op("mul", {x, c.scalar(a.dtype, alpha)});
  ValueId swish = c.op("mul", {x, c.op("sigmoid", {gate})});
  c.set_output(0, c.op("mul", {swish, c.input(1)}));
}

// ---- CausalConvWithState ----

// A depthwise conv1d over the input after its k-1 predecessors (past_state, or zeros): one
// grouped conv2d with a unit height. present_state is the window's last k-1 positions.
class CausalConvImport {
 public:
  explicit CausalConvImport(NodeContext& c) : c_(c) {}

  void run() {
    check();
    ValueId window = causal_window();
    ValueId y = depthwise_conv(window);
    // The reference rounds the conv to the input type, then applies SiLU in float32.
    if (activation_ != "none") y = c_.cast(c_.op("silu", {c_.cast(y, DType::kFloat32)}), dt_);
    c_.set_output(0, y);
    const Dim length = c_.type(kInput).dims[2];
    std::vector<Dim> starts = {Dim(0), Dim(0), length}, stops(3, Dim(kOpen));
    c_.set_output(1, c_.op("slice_tensor", {window}, {{"starts", starts}, {"stops", stops}}));
  }

 private:
  enum Input : size_t { kInput = 0, kWeight, kBias, kPastState };

  void check() {
    if (c_.rank(kInput) != 3 || c_.rank(kWeight) != 3)
      c_.invalid("input and weight must have rank 3, got ", c_.rank(kInput), " and ", c_.rank(kWeight));
    activation_ = c_.attr_string("activation", "none");
    if (activation_ != "none" && activation_ != "silu" && activation_ != "swish")
      c_.invalid("activation \"", activation_, "\" (expected none, silu or swish)");
    dt_ = c_.dtype(kInput);
    if (!dtype_is_float(dt_)) c_.unsupported("dtype ", dtype_name(dt_), "; only float types are supported");
    const std::vector<Dim> in = c_.type(kInput).dims, w = c_.type(kWeight).dims;
    kernel_ = static_dim(c_, w[2], "the kernel size");
    if (kernel_ < 1) c_.invalid("the kernel size must be >= 1, got ", kernel_);
    if (w[1] != Dim(1)) c_.invalid("weight must be [channels, 1, k] (depthwise), got ", dims_to_string(w));
    // conv2d's group count is an attribute, so the channels must be known here.
    channels_ = in[1].is_static() ? in[1].static_value() : static_dim(c_, w[0], "the channel count");
    if (w[0].is_static() && w[0] != Dim(channels_))
      c_.invalid("weight has ", w[0], " filters but the input has ", channels_, " channels (one filter per channel)");
  }

  ValueId causal_window() {
    ValueId x = c_.input(kInput);
    if (c_.has_input(kPastState)) {
      const std::vector<Dim> p = c_.type(kPastState).dims;
      if (p.size() != 3 || (p[2].is_static() && p[2] != Dim(kernel_ - 1)))
        c_.invalid("past_state must be [batch, channels, k - 1 = ", kernel_ - 1, "], got ", dims_to_string(p));
      if (kernel_ == 1) return x;
      return c_.op("concat", {c_.cast(c_.input(kPastState), dt_), x}, {{"axis", int64_t{2}}});
    }
    if (kernel_ == 1) return x;
    return c_.op("pad", {x}, {{"paddings", std::vector<int64_t>{0, 0, 0, 0, kernel_ - 1, 0}}, {"value", 0.0}});
  }

  ValueId depthwise_conv(ValueId window) {
    const std::vector<Dim> d = c_.type_of(window).dims, w = c_.type(kWeight).dims;
    ValueId x = c_.reshape(window, {d[0], d[1], Dim(1), d[2]});
    std::vector<ValueId> ins = {x, c_.reshape(c_.cast(c_.input(kWeight), dt_), {w[0], w[1], Dim(1), w[2]})};
    if (c_.has_input(kBias)) ins.push_back(c_.cast(c_.input(kBias), dt_));
    ValueId y = c_.op("conv2d", ins,
                      {{"groups", channels_},
                       {"input_layout", std::string("NCHW")},
                       {"filter_layout", std::string("FCRS")}});
    const std::vector<Dim> yd = c_.type_of(y).dims;
    return c_.reshape(y, {yd[0], yd[1], yd[3]});
  }

  NodeContext& c_;
  std::string activation_;
  DType dt_ = DType::kInvalid;
  int64_t kernel_ = 0, channels_ = 0;
};

// ---- LinearAttention ----

// The recurrence over a state S [d_k, d_v] per KV head, in float32 as the reference keeps it:
//   gated: S ← exp(g_t)·S;  delta: u_t = β_t·(v_t - Sᵀk_t), else u_t = v_t;
//   S ← S + k_t ⊗ u_t;  o_t = scale · q_t S  (query head h reads KV head h / (H_q / H_kv)).
// Without the delta correction the sum has a closed form, a causally masked matmul like
// attention's, which needs no static T: o_t / scale = Σ_{s≤t} w(t,s)·(q_t·k_s)·v_s +
// exp(G_t)·q_t S_0 with w(t,s) = exp(G_t - G_s), G the cumulative decay (0 ungated). A
// per-key-dim decay would need w per key dim, a [T, T, d_k] tensor per head, so it is
// unrolled like the delta rules: one small step per token.
class LinearAttentionImport {
 public:
  explicit LinearAttentionImport(NodeContext& c) : c_(c) {}

  void run() {
    read_attributes();
    to_heads();
    read_gates();
    if (c_.has_input(kPastState)) state_ = past_state();
    bool closed_form = rule_ == "linear" || (rule_ == "gated" && per_head_decay_);
    finish(closed_form ? run_closed_form() : run_unrolled());
  }

 private:
  enum Input : size_t { kQuery = 0, kKey, kValue, kPastState, kDecay, kBeta };

  // ---- attributes and operands ----

  void read_attributes() {
    rule_ = c_.attr_string("update_rule", "gated_delta");
    if (rule_ != "linear" && rule_ != "gated" && rule_ != "delta" && rule_ != "gated_delta")
      c_.invalid("update_rule \"", rule_, "\" (expected linear, gated, delta or gated_delta)");
    gated_ = rule_ == "gated" || rule_ == "gated_delta";
    delta_ = rule_ == "delta" || rule_ == "gated_delta";
    require_input(kDecay, gated_, "decay");
    require_input(kBeta, delta_, "beta");
    if (!c_.attr("q_num_heads") || !c_.attr("kv_num_heads"))
      c_.invalid("the attributes q_num_heads and kv_num_heads are required");
    q_heads_ = c_.attr_int("q_num_heads", 0), kv_heads_ = c_.attr_int("kv_num_heads", 0);
    if (q_heads_ <= 0 || kv_heads_ <= 0 || q_heads_ % kv_heads_ != 0)
      c_.invalid("q_num_heads (", q_heads_, ") must be a positive multiple of kv_num_heads (", kv_heads_, ")");
    for (size_t i : {kQuery, kKey, kValue})
      if (c_.rank(i) != 3)
        c_.invalid("query, key and value must have rank 3 [B, T, H*D]; input ", i, " has rank ", c_.rank(i));
    dt_ = c_.dtype(kQuery);
    if (!dtype_is_float(dt_)) c_.unsupported("dtype ", dtype_name(dt_), "; only float types are supported");
    d_k_ = head_size(kQuery, q_heads_, "query");
    if (head_size(kKey, kv_heads_, "key") != d_k_) c_.invalid("query and key have different head sizes");
    d_v_ = head_size(kValue, kv_heads_, "value");
    seq_ = c_.type(kQuery).dims[1];
    if (seq_ == Dim(0)) c_.unsupported("an empty sequence (T = 0)");
  }

  void require_input(size_t i, bool needed, const char* name) {
    if (needed && !c_.has_input(i)) c_.invalid("update_rule \"", rule_, "\" needs the input ", name);
    if (!needed && c_.has_input(i)) c_.invalid("update_rule \"", rule_, "\" takes no input ", name);
  }

  int64_t head_size(size_t i, int64_t heads, std::string_view name) {
    int64_t hidden = static_dim(c_, c_.type(i).dims[2], std::string(name) + "'s hidden size");
    if (hidden % heads != 0) c_.invalid(name, "'s hidden size ", hidden, " is not a multiple of ", heads, " heads");
    return hidden / heads;
  }

  ValueId f32(size_t i) { return c_.cast(c_.input(i), DType::kFloat32); }

  // [B, T, heads*width] -> [B, heads, T, width].
  ValueId per_head(ValueId x, int64_t heads, int64_t width) {
    const std::vector<Dim> d = c_.type_of(x).dims;
    return permute(c_, c_.reshape(x, {d[0], d[1], Dim(heads), Dim(width)}), {0, 2, 1, 3});
  }

  // query as [B, H_kv, g, T, d_k]: its g = H_q / H_kv heads per KV head side by side, so one
  // batched matmul reads each KV head's state for all of them.
  void to_heads() {
    ValueId q = f32(kQuery);
    const std::vector<Dim> d = c_.type_of(q).dims;
    int64_t group = q_heads_ / kv_heads_;
    q = c_.reshape(q, {d[0], d[1], Dim(kv_heads_), Dim(group), Dim(d_k_)});
    q_ = permute(c_, q, {0, 2, 3, 1, 4});
    k_ = per_head(f32(kKey), kv_heads_, d_k_);
    v_ = per_head(f32(kValue), kv_heads_, d_v_);
  }

  // decay [B, T, H_kv] or [B, T, H_kv*d_k] -> [B, H_kv, T, 1 | d_k];
  // beta [B, T, H_kv | 1] -> [B, H_kv | 1, T, 1].
  void read_gates() {
    if (gated_) {
      int64_t last = gate_width(kDecay, "decay");
      per_head_decay_ = last == kv_heads_;
      if (!per_head_decay_ && last != kv_heads_ * d_k_)
        c_.invalid("decay's last dim ", last, " must be kv_num_heads (", kv_heads_, ") or kv_num_heads*d_k (",
                   kv_heads_ * d_k_, ")");
      decay_ = per_head(f32(kDecay), kv_heads_, per_head_decay_ ? 1 : d_k_);
    }
    if (delta_) {
      int64_t last = gate_width(kBeta, "beta");
      if (last != kv_heads_ && last != 1)
        c_.invalid("beta's last dim ", last, " must be kv_num_heads (", kv_heads_, ") or 1");
      beta_ = per_head(f32(kBeta), last, 1);
    }
  }

  int64_t gate_width(size_t i, std::string_view name) {
    if (c_.rank(i) != 3) c_.invalid(name, " must have rank 3, got ", c_.rank(i));
    return static_dim(c_, c_.type(i).dims[2], std::string(name) + "'s last dim");
  }

  ValueId past_state() {
    const std::vector<Dim> d = c_.type(kPastState).dims;
    bool ok = d.size() == 4;
    const int64_t want[] = {kv_heads_, d_k_, d_v_};
    for (size_t i = 1; ok && i < 4; ++i) ok = !d[i].is_static() || d[i] == Dim(want[i - 1]);
    if (!ok)
      c_.invalid("past_state must be [B, ", kv_heads_, ", ", d_k_, ", ", d_v_, "], got ", dims_to_string(d));
    return f32(kPastState);
  }

  // ---- building ----

  ValueId mul(ValueId a, ValueId b) { return c_.op("mul", {a, b}); }
  ValueId matmul(ValueId a, ValueId b) { return c_.op("matmul", {a, b}); }
  ValueId exp(ValueId a) { return c_.op("exp", {a}); }
  ValueId unsqueeze(ValueId v, int64_t axis) { return c_.op("unsqueeze", {v}, {{"axis", axis}}); }

  // The T slices of v along `axis`, each keeping the axis (size 1).
  std::vector<ValueId> steps_of(ValueId v, int64_t axis, int64_t steps) {
    if (steps == 1) return {v};
    std::vector<Dim> sizes(static_cast<size_t>(steps), Dim(1));
    return c_.ops("split", {v}, {{"split_sizes", sizes}, {"axis", axis}});
  }

  // [B, H, 1, n] -> [B, H, n, 1].
  ValueId column(ValueId row) {
    std::vector<Dim> d = c_.type_of(row).dims;
    std::swap(d[2], d[3]);
    return c_.reshape(row, d);
  }

  // ---- the unrolled recurrence ----

  ValueId run_unrolled() {
    int64_t steps = static_dim(c_, seq_, "the sequence length T (update_rule \"" + rule_ + "\" is unrolled over it)");
    std::vector<ValueId> q = steps_of(q_, 3, steps), k = steps_of(k_, 2, steps), v = steps_of(v_, 2, steps);
    std::vector<ValueId> decay, beta;
    if (gated_) decay = steps_of(exp(*decay_), 2, steps);
    if (delta_) beta = steps_of(*beta_, 2, steps);
    std::vector<ValueId> outs;
    for (size_t t = 0; t < static_cast<size_t>(steps); ++t) {
      step(k[t], v[t], gated_ ? std::optional<ValueId>(decay[t]) : std::nullopt,
           delta_ ? std::optional<ValueId>(beta[t]) : std::nullopt);
      std::vector<Dim> qd = c_.type_of(q[t]).dims;
      qd.erase(qd.begin() + 3);
      outs.push_back(matmul(c_.reshape(q[t], qd), *state_));  // [B, H_kv, g, d_v]
    }
    return steps == 1 ? unsqueeze(outs[0], 1) : c_.op("stack", outs, {{"axis", int64_t{1}}});
  }

  // k, v: [B, H_kv, 1, d] rows; decay: exp(g_t) [B, H_kv, 1, 1 | d_k]; beta [B, H_kv | 1, 1, 1].
  // An absent state is zero: the terms it would feed are left out.
  void step(ValueId k, ValueId v, std::optional<ValueId> decay, std::optional<ValueId> beta) {
    if (state_ && decay) state_ = mul(*state_, column(*decay));
    if (beta) {
      if (state_) v = c_.op("sub", {v, matmul(k, *state_)});
      v = mul(*beta, v);
    }
    ValueId write = mul(column(k), v);
    state_ = state_ ? c_.op("add", {*state_, write}) : write;
  }

  // ---- the closed form (linear, and gated with one decay per head) ----

  ValueId run_closed_form() {
    std::optional<ValueId> cum;  // G, [B, H_kv, T, 1]
    if (gated_) cum = c_.op("cumsum", {*decay_}, {{"axis", int64_t{2}}});
    ValueId k5 = unsqueeze(k_, 2);
    ValueId scores = matmul(q_, transpose_last(c_, k5));  // [B, H_kv, g, T, T]
    ValueId causal = gated_ ? mul(scores, unsqueeze(lower(exp(c_.op("sub", {*cum, transpose_last(c_, *cum)}))), 2))
                            : lower(scores);
    ValueId o = matmul(causal, unsqueeze(v_, 2));  // [B, H_kv, g, T, d_v]
    if (state_) {
      ValueId q = cum ? mul(q_, unsqueeze(exp(*cum), 2)) : q_;
      o = c_.op("add", {o, matmul(q, unsqueeze(*state_, 2))});
    }
    state_ = final_state(cum);
    return permute(c_, o, {0, 3, 1, 2, 4});
  }

  // Keeps s <= t. The exp of a masked-out G_t - G_s may overflow; band_part replaces it with 0.
  ValueId lower(ValueId v) { return c_.op("band_part", {v}, {{"num_upper", int64_t{0}}}); }

  // S_T = exp(G_T)·S_0 + Σ_s exp(G_T - G_s)·k_s ⊗ v_s.
  ValueId final_state(std::optional<ValueId> cum) {
    ValueId k = k_;
    std::optional<ValueId> carried = state_;
    if (cum) {
      std::vector<Dim> open(3, Dim(kOpen)), starts = {Dim(0), Dim(0), Dim(-1)};
      ValueId total = c_.op("slice_tensor", {*cum}, {{"starts", starts}, {"stops", open}});  // [B, H_kv, 1, 1]
      k = mul(k, exp(c_.op("sub", {total, *cum})));
      if (carried) carried = mul(*carried, exp(total));
    }
    ValueId write = matmul(transpose_last(c_, k), v_);
    return carried ? c_.op("add", {*carried, write}) : write;
  }

  // ---- outputs ----

  double scale() const {
    double s = c_.attr_float("scale", 0.f);
    return s != 0 ? s : 1.0 / std::sqrt(static_cast<double>(d_k_));
  }

  // o: [B, T, H_kv, g, d_v].
  void finish(ValueId o) {
    const std::vector<Dim> d = c_.type_of(o).dims;
    ValueId y = c_.reshape(o, {d[0], d[1], Dim(q_heads_ * d_v_)});
    y = mul(y, c_.scalar(DType::kFloat32, scale()));
    c_.set_output(0, c_.cast(y, dt_));
    c_.set_output(1, c_.cast(*state_, c_.has_input(kPastState) ? c_.dtype(kPastState) : dt_));
  }

  NodeContext& c_;
  std::string rule_;
  bool gated_ = false, delta_ = false, per_head_decay_ = false;
  int64_t q_heads_ = 0, kv_heads_ = 0, d_k_ = 0, d_v_ = 0;
  Dim seq_;
  DType dt_ = DType::kInvalid;
  ValueId q_ = 0, k_ = 0, v_ = 0;
  std::optional<ValueId> decay_, beta_, state_;
};

// ---- FlexAttention (ai.onnx.preview) ----

// A modifier subgraph (one input, one output, nodes of the default domain) imported in place
// on `x`, in a scope of its own: its names cannot clash with the main graph's or another
// node's modifier. Values of the enclosing graph are not in that scope.
class ModifierInliner {
 public:
  ModifierInliner(NodeContext& c, std::string_view attr) : c_(c), attr_(attr), scope_(c.graph()) {}

  ValueId run(const GraphProto& g, ValueId x) {
    if (g.inputs.size() != 1 || g.outputs.size() != 1)
      c_.invalid(attr_, " must have one input and one output, got ", g.inputs.size(), " and ", g.outputs.size());
    if (g.sparse_initializer_count) c_.unsupported(attr_, " has sparse initializers");
    Operand in;
    in.value = x;
    in.type = c_.type_of(x);
    scope_.define(g.inputs[0].name, std::move(in), attr_ + "'s input");
    for (const TensorProto& t : g.initializers) define_initializer(t);
    for (size_t i = 0; i < g.nodes.size(); ++i) import(g.nodes[i], i);
    return scope_.value(g.outputs[0].name, attr_ + "'s output");
  }

 private:
  // A constant (known value), not a weight: the model binds only the main graph's weights.
  void define_initializer(const TensorProto& t) {
    std::string what = attr_ + " initializer '" + t.name + "'";
    Ref<Tensor> data = tensor_from_proto(t, what, "", nullptr);
    Operand k;
    k.type = TensorType{data->dtype(), std::vector<Dim>(data->dims().begin(), data->dims().end()), DeviceRef::cpu()};
    k.known = std::make_shared<KnownValue>(KnownValue::from_tensor(data));
    scope_.define(t.name, std::move(k), what);
  }

  void import(const NodeProto& node, size_t index) {
    if (!node.domain.empty() && node.domain != "ai.onnx")
      c_.unsupported(attr_, " uses operator domain '", node.domain, "'");
    auto it = import_table().find(node.op_type);
    if (it == import_table().end())
      c_.unsupported(attr_, " uses operator '", node.op_type, "', which is not supported");
    for (const std::string& name : node.inputs)
      if (!name.empty() && !scope_.has(name))
        c_.unsupported(attr_, " uses '", name,
                       "', which it does not define (values of the enclosing graph are not supported)");
    NodeContext sub(node, index, c_.opset(), scope_, c_.graph());
    try {
      it->second(sub);
    } catch (const Error& e) {
      std::string msg = e.what();
      if (msg.rfind("onnx: ", 0) == 0) msg.erase(0, 6);
      throw Error(e.code(), "onnx: " + c_.label() + ": " + attr_ + ": " + msg);
    }
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty() && !scope_.has(node.outputs[i])) {
        Operand missing;
        missing.missing = "output " + std::to_string(i) + " of " + attr_ + "'s " + sub.label() + " is not supported";
        scope_.define(node.outputs[i], std::move(missing), sub.label());
      }
  }

  NodeContext& c_;
  std::string attr_;
  ValueTable scope_;
};

// softmax((Q·√s)(K·√s)ᵀ, in softmax_precision, through score_mod) through prob_mod, @ V;
// K/V heads shared by consecutive query heads (GQA), as the ONNX function body does.
class FlexAttentionImport {
 public:
  explicit FlexAttentionImport(NodeContext& c) : c_(c) {}

  void run() {
    for (size_t i = 0; i < 3; ++i)
      if (c_.rank(i) != 4) c_.invalid("Q, K and V must have rank 4; input ", i, " has rank ", c_.rank(i));
    dt_ = c_.dtype(0);
    if (!dtype_is_float(dt_)) c_.unsupported("dtype ", dtype_name(dt_), "; only float types are supported");
    sp_ = dt_ == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
    if (c_.attr("softmax_precision"))
      sp_ = to_dtype(static_cast<int32_t>(c_.attr_int("softmax_precision", 1)), c_.label() + " softmax_precision");
    ValueId s = c_.scalar(dt_, sqrt_scale());
    ValueId q = c_.op("mul", {c_.input(0), s}), k = c_.op("mul", {repeat_kv(c_.input(1)), s});
    ValueId scores = c_.cast(c_.op("matmul", {q, transpose_last(c_, k)}), sp_);
    ValueId probs = modify("prob_mod", softmax_in_type(c_, modify("score_mod", scores), -1));
    ValueId y = c_.op("matmul", {probs, c_.cast(repeat_kv(c_.input(2)), sp_)});
    c_.set_output(0, c_.cast(y, dt_));
  }

 private:
  // √scale in float32, as the function body computes it.
  double sqrt_scale() {
    if (c_.attr("scale")) return std::sqrt(c_.attr_float("scale", 1.f));
    float head = static_cast<float>(static_dim(c_, c_.type(0).dims[3], "Q's head size"));
    return std::sqrt(1.f / std::sqrt(head));
  }

  ValueId repeat_kv(ValueId x) {
    int64_t q_heads = static_dim(c_, c_.type(0).dims[1], "Q's head count");
    int64_t kv_heads = static_dim(c_, c_.type_of(x).dims[1], "K/V's head count");
    if (q_heads == kv_heads) return x;
    if (kv_heads == 0 || q_heads % kv_heads != 0)
      c_.invalid("Q's head count (", q_heads, ") must be a multiple of K/V's (", kv_heads, ")");
    return c_.op("repeat_interleave", {x}, {{"repeats", q_heads / kv_heads}, {"axis", int64_t{1}}});
  }

  ValueId modify(std::string_view name, ValueId x) {
    const AttributeProto* a = c_.attr(name);
    if (!a) return x;
    if (!a->g) c_.invalid("attribute '", name, "' must be a graph");
    return ModifierInliner(c_, name).run(*a->g, x);
  }

  NodeContext& c_;
  DType dt_ = DType::kInvalid, sp_ = DType::kInvalid;
};

// ---- RoiAlign ----

// The average (or max) of bilinear samples on a sampling_ratio × sampling_ratio grid in each
// output cell of each ROI, as the ONNX reference computes them (op_roi_align.py). The sample
// positions depend on the ROI values, so they are computed in the graph one axis at a time:
// a sample's four taps are products of a y and an x weight, and a sample outside
// [-1, H] × [-1, W] gets zero weights. The taps are gathered from X as rows [N*H*W, C].
// sampling_ratio 0 (a grid that grows with each ROI) has no static shape.
class RoiAlignImport {
 public:
  explicit RoiAlignImport(NodeContext& c) : c_(c) {}

  void run() {
    read_attributes();
    ValueId rois = c_.op("mul", {c_.cast(c_.input(1), DType::kFloat32), f(scale_)});
    if (half_pixel_) rois = c_.op("sub", {rois, f(0.5)});
    std::vector<Dim> columns(4, Dim(1));
    std::vector<ValueId> box = c_.ops("split", {rois}, {{"split_sizes", columns}, {"axis", int64_t{1}}});
    Axis y = sample_axis(box[1], box[3], out_h_, height_);
    Axis x = sample_axis(box[0], box[2], out_w_, width_);
    c_.set_output(0, c_.cast(pool(taps(y, x)), c_.dtype(0)));
  }

 private:
  // Per ROI and sample position along one axis, [R, bins * grid]: the two tap indices (int64)
  // and their weights.
  struct Axis {
    ValueId low, high, w_low, w_high;
  };

  void read_attributes() {
    if (c_.rank(0) != 4) c_.invalid("X must have rank 4, got ", c_.rank(0));
    const std::vector<Dim> r = c_.type(1).dims;
    if (r.size() != 2 || static_dim(c_, r[1], "rois' column count") != 4)
      c_.invalid("rois must be [num_rois, 4], got ", dims_to_string(r));
    if (c_.rank(2) != 1) c_.invalid("batch_indices must have rank 1, got ", c_.rank(2));
    if (!dtype_is_float(c_.dtype(0)))
      c_.unsupported("dtype ", dtype_name(c_.dtype(0)), "; only float types are supported");
    // Before opset 16 there was no attribute, and the behaviour was output_half_pixel.
    std::string ctm =
        c_.attr_string("coordinate_transformation_mode", c_.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      c_.invalid("coordinate_transformation_mode \"", ctm, "\" (expected half_pixel or output_half_pixel)");
    half_pixel_ = ctm == "half_pixel";
    std::string mode = c_.attr_string("mode", "avg");
    if (mode != "avg" && mode != "max") c_.invalid("mode \"", mode, "\" (expected avg or max)");
    max_ = mode == "max";
    out_h_ = c_.attr_int("output_height", 1), out_w_ = c_.attr_int("output_width", 1);
    if (out_h_ < 1 || out_w_ < 1)
      c_.invalid("output_height and output_width must be >= 1, got ", out_h_, " and ", out_w_);
    grid_ = c_.attr_int("sampling_ratio", 0);
    if (grid_ < 0) c_.invalid("sampling_ratio must be >= 0, got ", grid_);
    bounded_elements(c_, {std::max(out_h_, out_w_), grid_}, "the sample offsets (bins x sampling_ratio)");
    if (grid_ == 0)
      c_.unsupported("sampling_ratio 0 (a sampling grid that depends on each ROI's size); only a fixed "
                     "sampling_ratio is supported");
    scale_ = c_.attr_float("spatial_scale", 1.f);
    const std::vector<Dim> x = c_.type(0).dims;
    height_ = static_dim(c_, x[2], "X's height"), width_ = static_dim(c_, x[3], "X's width");
  }

  ValueId f(double v) { return c_.scalar(DType::kFloat32, v); }
  ValueId i64(double v) { return c_.scalar(DType::kInt64, v); }
  ValueId where(ValueId cond, ValueId a, ValueId b) { return c_.op("where", {cond, a, b}); }

  // bin + (k + 0.5) / grid for each bin and grid step k: the sample offsets in bin sizes.
  ValueId offsets(int64_t bins) {
    std::vector<double> v;
    for (int64_t b = 0; b < bins; ++b)
      for (int64_t k = 0; k < grid_; ++k)
        v.push_back(static_cast<double>(b) + (static_cast<double>(k) + 0.5) / static_cast<double>(grid_));
    return c_.constant(KnownValue::from_doubles(DType::kFloat32, {1, bins * grid_}, v));
  }

  // start, end: [R, 1] ROI bounds along the axis, in input pixels.
  Axis sample_axis(ValueId start, ValueId end, int64_t bins, int64_t size) {
    ValueId extent = c_.op("sub", {end, start});
    if (!half_pixel_) extent = c_.op("max", {extent, f(1)});  // malformed ROIs become 1 pixel
    ValueId bin = c_.op("div", {extent, f(static_cast<double>(bins))});
    ValueId pos = c_.op("add", {start, c_.op("mul", {bin, offsets(bins)})});
    ValueId valid = c_.op("logical_and", {c_.op("greater_equal", {pos, f(-1)}),
                                           c_.op("less_equal", {pos, f(static_cast<double>(size))})});
    pos = c_.op("max", {pos, f(0)});
    ValueId low = c_.op("floor", {pos});
    ValueId at_edge = c_.op("greater_equal", {low, f(static_cast<double>(size - 1))});
    ValueId last = f(static_cast<double>(size - 1));
    low = where(at_edge, last, low);
    ValueId high = where(at_edge, last, c_.op("add", {low, f(1)}));
    pos = where(at_edge, low, pos);
    ValueId w_high = c_.op("sub", {pos, low});
    ValueId w_low = c_.op("sub", {f(1), w_high});
    return {c_.cast(low, DType::kInt64), c_.cast(high, DType::kInt64), where(valid, w_low, f(0)),
            where(valid, w_high, f(0))};
  }

  ValueId unsqueeze(ValueId v, int64_t axis) { return c_.op("unsqueeze", {v}, {{"axis", axis}}); }

  // The weighted taps combined per sample, [R, out_h*grid, out_w*grid, C]: their sum, or for
  // mode max their maximum.
  ValueId taps(const Axis& y, const Axis& x) {
    const std::vector<Dim> d = c_.type(0).dims;
    ValueId rows = permute(c_, c_.cast(c_.input(0), DType::kFloat32), {0, 2, 3, 1});
    rows = c_.reshape(rows, {d[0] * d[2] * d[3], d[1]});
    ValueId base = c_.op("mul", {c_.cast(c_.input(2), DType::kInt64), i64(static_cast<double>(height_ * width_))});
    base = unsqueeze(unsqueeze(base, 1), 2);  // [R, 1, 1]
    std::optional<ValueId> acc;
    for (auto [yi, wy] : {std::pair{y.low, y.w_low}, std::pair{y.high, y.w_high}})
      for (auto [xi, wx] : {std::pair{x.low, x.w_low}, std::pair{x.high, x.w_high}}) {
        ValueId at = c_.op("mul", {unsqueeze(yi, 2), i64(static_cast<double>(width_))});
        at = c_.op("add", {c_.op("add", {base, at}), unsqueeze(xi, 1)});  // [R, Py, Px]
        ValueId w = c_.op("mul", {unsqueeze(unsqueeze(wy, 2), 3), unsqueeze(unsqueeze(wx, 1), 3)});
        ValueId tap = c_.op("mul", {w, c_.op("gather", {rows, at}, {{"axis", int64_t{0}}})});
        acc = !acc ? tap : c_.op(max_ ? "max" : "add", {*acc, tap});
      }
    return *acc;
  }

  // [R, out_h*grid, out_w*grid, C] -> [R, C, out_h, out_w].
  ValueId pool(ValueId samples) {
    const std::vector<Dim> d = c_.type_of(samples).dims;
    ValueId v = c_.reshape(samples, {d[0], Dim(out_h_), Dim(grid_), Dim(out_w_), Dim(grid_), d[3]});
    const char* reduce = max_ ? "max" : "sum";
    v = c_.op(reduce, {c_.op(reduce, {v}, {{"axis", int64_t{2}}})}, {{"axis", int64_t{4}}});
    if (!max_) v = c_.op("div", {v, f(static_cast<double>(grid_ * grid_))});
    v = c_.reshape(v, {d[0], Dim(out_h_), Dim(out_w_), d[3]});
    return permute(c_, v, {0, 3, 1, 2});
  }

  NodeContext& c_;
  bool half_pixel_ = true, max_ = false;
  int64_t out_h_ = 1, out_w_ = 1, grid_ = 0, height_ = 0, width_ = 0;
  double scale_ = 1;
};

}  // namespace

void register_sequence_mixer_importers(ImportTable& t) {
  t["SwiGLU"] = import_swiglu;
  t["CausalConvWithState"] = [](NodeContext& c) { CausalConvImport(c).run(); };
  t["LinearAttention"] = [](NodeContext& c) { LinearAttentionImport(c).run(); };
  t["ai.onnx.preview.FlexAttention"] = [](NodeContext& c) { FlexAttentionImport(c).run(); };
  t["RoiAlign"] = [](NodeContext& c) { RoiAlignImport(c).run(); };
}

}  // namespace maxc::onnx

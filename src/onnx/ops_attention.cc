// Attention and RotaryEmbedding (opset 23+). Attention: scaled dot-product attention composed from our ops, following the
// ONNX reference (onnx/reference/ops/op_attention.py):
//   3-D inputs [B, S, H*D] are split into heads [B, H, S, D] (q_num_heads, kv_num_heads);
//   past_key/past_value are concatenated before K/V (the present outputs);
//   Q and K are each scaled by sqrt(scale), so Q @ Kᵀ carries `scale` without overflowing;
//   softcap, then an additive bias of 0 / -inf: the mask, the causal frontier and the
//   sliding window (offset by the past length, or per batch by nonpad_kv_seqlen - S_q);
//   softmax, with a query row that the bias masks entirely set to zero; @ V.
// In float32, without softcap, qk_matmul_output or the row guard (there when the bias can
// mask a whole row), this is the softmax(q @ kᵀ (+ mask)) @ v pattern the compiler fuses
// (compiler/fuse_attention.cc).
#include <algorithm>
#include <cmath>
#include <limits>

#include "onnx/dtypes.h"
#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

enum Input : size_t { kQ = 0, kK, kV, kMask, kPastKey, kPastValue, kNonpad };
enum QkMode : int64_t { kRawScores = 0, kSoftcapped = 1, kWithBias = 2, kSoftmaxed = 3 };

class AttentionImport {
 public:
  explicit AttentionImport(NodeContext& c) : c_(c) {}

  void run() {
    check_attributes();
    to_heads();
    append_past();
    bias_ = build_bias();
    ValueId scores = scores_of();
    ValueId probs = softmax_of(scores);
    ValueId y = c_.op("matmul", {c_.cast(probs, dt_), repeat_kv(v_)});
    c_.set_output(0, was_3d_ ? merge_heads(y) : y);
    c_.set_output(1, k_);
    c_.set_output(2, v_);
  }

 private:
  // ---- attributes and shapes ----

  void check_attributes() {
    if (c_.rank(kQ) != c_.rank(kK) || c_.rank(kQ) != c_.rank(kV))
      c_.invalid("Q, K and V must have one rank, got ", c_.rank(kQ), ", ", c_.rank(kK), " and ", c_.rank(kV));
    if (c_.rank(kQ) != 3 && c_.rank(kQ) != 4) c_.invalid("Q, K and V must have rank 3 or 4, got ", c_.rank(kQ));
    if (c_.has_input(kPastKey) != c_.has_input(kPastValue))
      c_.invalid("past_key and past_value must be given together");
    if (c_.has_input(kNonpad) && c_.has_input(kPastKey))
      c_.invalid("nonpad_kv_seqlen cannot be combined with past_key/past_value");
    for (size_t i : {kPastKey, kPastValue})
      if (c_.has_input(i) && c_.rank(i) != 4)
        c_.invalid("input ", i, " (past key/value) must have rank 4, got ", c_.rank(i));
    mode_ = c_.attr_int("qk_matmul_output_mode", kRawScores);
    if (mode_ < kRawScores || mode_ > kSoftmaxed) c_.invalid("qk_matmul_output_mode ", mode_, " (expected 0 to 3)");
    softcap_ = c_.attr_float("softcap", 0.f);
    causal_ = c_.attr_int("is_causal", 0) != 0;
    left_ = c_.attr_int("left_window_size", -1);
    right_ = c_.attr_int("right_window_size", -1);
    if (left_ < -1 || right_ < -1) c_.invalid("window sizes must be -1 or >= 0, got ", left_, " and ", right_);
    dt_ = c_.dtype(kQ);
    if (!dtype_is_float(dt_)) c_.unsupported("Q has dtype ", dtype_name(dt_), "; only float types are supported");
    softmax_dt_ = dt_;
    if (c_.attr("softmax_precision"))
      softmax_dt_ = to_dtype(static_cast<int32_t>(c_.attr_int("softmax_precision", 1)),
                             c_.label() + " attribute 'softmax_precision'");
  }

  int64_t static_dim(ValueId v, size_t axis, std::string_view what) {
    const Dim d = c_.type_of(v).dims[axis];
    if (!d.is_static()) c_.unsupported(what, " is the symbolic dim ", d, "; it must be static here");
    return d.static_value();
  }

  // [B, S, H*D] -> [B, H, S, D].
  ValueId split_heads(ValueId x, int64_t heads, std::string_view what) {
    int64_t hidden = static_dim(x, 2, what);
    if (heads <= 0 || hidden % heads != 0)
      c_.invalid(what, "'s hidden size ", hidden, " is not a multiple of ", heads, " heads");
    const std::vector<Dim> d = c_.type_of(x).dims;
    x = c_.reshape(x, {d[0], d[1], Dim(heads), Dim(hidden / heads)});
    return c_.op("permute", {x}, {{"dims", std::vector<int64_t>{0, 2, 1, 3}}});
  }

  // [B, H, S, Dv] -> [B, S, H*Dv].
  ValueId merge_heads(ValueId y) {
    y = c_.op("permute", {y}, {{"dims", std::vector<int64_t>{0, 2, 1, 3}}});
    const std::vector<Dim> d = c_.type_of(y).dims;
    return c_.reshape(y, {d[0], d[1], d[2] * d[3]});
  }

  void to_heads() {
    q_ = c_.input(kQ), k_ = c_.input(kK), v_ = c_.input(kV);
    was_3d_ = c_.rank(kQ) == 3;
    if (!was_3d_) return;
    if (!c_.attr("q_num_heads") || !c_.attr("kv_num_heads"))
      c_.invalid("3-D inputs need the attributes q_num_heads and kv_num_heads");
    int64_t kv_heads = c_.attr_int("kv_num_heads", 0);
    q_ = split_heads(q_, c_.attr_int("q_num_heads", 0), "Q");
    k_ = split_heads(k_, kv_heads, "K");
    v_ = split_heads(v_, kv_heads, "V");
  }

  void append_past() {
    if (!c_.has_input(kPastKey)) return;
    past_len_ = static_dim(c_.input(kPastKey), 2, "past_key's sequence length");
    k_ = c_.op("concat", {c_.cast(c_.input(kPastKey), dt_), k_}, {{"axis", int64_t{2}}});
    v_ = c_.op("concat", {c_.cast(c_.input(kPastValue), dt_), v_}, {{"axis", int64_t{2}}});
  }

  // Grouped-query attention: each K/V head serves q_heads / kv_heads query heads in a row.
  ValueId repeat_kv(ValueId x) {
    int64_t q_heads = static_dim(q_, 1, "Q's head count"), kv_heads = static_dim(x, 1, "K/V's head count");
    if (q_heads == kv_heads) return x;
    if (kv_heads == 0 || q_heads % kv_heads != 0)
      c_.invalid("q heads (", q_heads, ") must be a multiple of kv heads (", kv_heads, ")");
    return c_.op("repeat_interleave", {x}, {{"repeats", q_heads / kv_heads}, {"axis", int64_t{1}}});
  }

  // ---- scores ----

  double scale() {
    if (c_.attr("scale")) return c_.attr_float("scale", 1.f);
    return 1.0 / std::sqrt(static_cast<double>(static_dim(q_, 3, "Q's head size")));
  }

  // softcap, mask and the qk_matmul_output the mode asks for, in that order.
  ValueId scores_of() {
    ValueId s = c_.scalar(dt_, std::sqrt(scale()));
    ValueId k = c_.op("mul", {repeat_kv(k_), s});
    ValueId kt = c_.op("transpose", {k}, {{"axis_1", int64_t{2}}, {"axis_2", int64_t{3}}});
    ValueId qk = c_.op("matmul", {c_.op("mul", {q_, s}), kt});
    if (mode_ == kRawScores) c_.set_output(3, qk);
    if (softcap_ > 0) {
      ValueId cap = c_.scalar(dt_, softcap_);
      qk = c_.op("mul", {c_.op("tanh", {c_.op("div", {qk, cap})}), cap});
    }
    if (mode_ == kSoftcapped) c_.set_output(3, qk);
    if (bias_) qk = c_.op("add", {qk, *bias_});
    if (mode_ == kWithBias) c_.set_output(3, qk);
    return qk;
  }

  // Softmax in softmax_precision (the input's by default). A row the bias masks entirely is
  // zero, not NaN.
  ValueId softmax_of(ValueId scores) {
    ValueId p = softmax_in_type(c_, c_.cast(scores, softmax_dt_), -1);
    if (bias_ && may_mask_rows_) {
      ValueId row_max = c_.op("max", {*bias_}, {{"axis", int64_t{-1}}});
      ValueId masked = c_.op("equal", {row_max, c_.scalar(c_.type_of(*bias_).dtype, kNegInf)});
      p = c_.op("where", {masked, c_.scalar(softmax_dt_, 0), p});
    }
    if (mode_ == kSoftmaxed) c_.set_output(3, c_.cast(p, dt_));
    return p;
  }

  // ---- the additive bias: the mask, the causal/window frontier, the key padding ----

  std::optional<ValueId> build_bias() {
    q_len_ = c_.type_of(q_).dims[2];
    kv_len_ = c_.type_of(k_).dims[2];
    std::optional<ValueId> bias = mask_term();
    may_mask_rows_ = bias.has_value();
    bool frontier = causal_ || left_ >= 0 || right_ >= 0;
    if (!frontier && !c_.has_input(kNonpad)) return bias;
    auto [q, kv] = static_lengths();
    ValueId diff = c_.op("sub", {iota(kv, {1, kv}), iota(q, {q, 1})});  // j - i, [S_q, S_kv]
    ValueId offset = 0;  // the valid keys before the query block: a scalar, or per batch [B, 1, 1, 1]
    std::optional<ValueId> ok;
    if (c_.has_input(kNonpad)) {
      ValueId n = c_.cast(c_.input(kNonpad), DType::kInt64);
      n = c_.reshape(n, {c_.type_of(n).num_elements(), Dim(1), Dim(1), Dim(1)});
      ok = c_.op("less", {iota(kv, {1, 1, 1, kv}), n});  // keys past nonpad_kv_seqlen are padding
      offset = c_.op("sub", {n, int_scalar(q)});
      may_mask_rows_ = true;
    } else {
      offset = int_scalar(past_len_);
      may_mask_rows_ = may_mask_rows_ || frontier_masks_a_row(q, kv);
    }
    auto limit = [&](const char* cmp, int64_t shift) {
      ValueId bound = shift == 0 ? offset : c_.op("add", {offset, int_scalar(shift)});
      ValueId cond = c_.op(cmp, {diff, bound});
      ok = ok ? c_.op("logical_and", {*ok, cond}) : cond;
    };
    if (causal_) limit("less_equal", 0);             // j <= i + offset
    if (left_ >= 0) limit("greater_equal", -left_);  // i + offset - j <= left
    if (right_ >= 0) limit("less_equal", right_);    // j - i - offset <= right
    return add_term(bias, zero_or_neg_inf(*ok));
  }

  std::optional<ValueId> add_term(std::optional<ValueId> a, ValueId b) {
    if (!a) return b;
    return c_.op("add", {*a, b});
  }

  ValueId zero_or_neg_inf(ValueId allowed) {
    return c_.op("where", {allowed, c_.scalar(dt_, 0), c_.scalar(dt_, kNegInf)});
  }

  ValueId int_scalar(int64_t v) { return c_.scalar(DType::kInt64, static_cast<double>(v)); }

  // 0 .. n-1 as int64, shaped `shape` (n elements).
  ValueId iota(int64_t n, std::vector<int64_t> shape) {
    std::vector<double> v(static_cast<size_t>(bounded_elements(c_, {n}, "a position range")));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i);
    return c_.constant(KnownValue::from_doubles(DType::kInt64, std::move(shape), v));
  }

  // attn_mask as 0 / -inf (bool) or as given (float), padded with -inf up to the keys.
  std::optional<ValueId> mask_term() {
    if (!c_.has_input(kMask)) return std::nullopt;
    ValueId m = c_.input(kMask);
    m = c_.dtype(kMask) == DType::kBool ? zero_or_neg_inf(m) : c_.cast(m, dt_);
    const std::vector<Dim> d = c_.type_of(m).dims;
    if (d.empty()) c_.invalid("attn_mask must have rank >= 1");
    if (d.back() == kv_len_) return m;
    int64_t have = static_dim(m, d.size() - 1, "attn_mask's last dim");
    int64_t want = kv_len_.is_static() ? kv_len_.static_value() : -1;
    if (want < have) c_.invalid("attn_mask has ", have, " keys but K has ", kv_len_);
    std::vector<int64_t> pads(2 * d.size(), 0);
    pads.back() = want - have;
    return c_.op("pad", {m}, {{"paddings", pads}, {"value", kNegInf}});
  }

  std::pair<int64_t, int64_t> static_lengths() {
    if (!q_len_.is_static() || !kv_len_.is_static())
      c_.unsupported("is_causal, windows and nonpad_kv_seqlen need static sequence lengths, got ", q_len_, " and ",
                     kv_len_);
    // Each is a position range built here, and the query rows are walked once.
    bounded_elements(c_, {q_len_.static_value()}, "the query positions");
    bounded_elements(c_, {kv_len_.static_value()}, "the key positions");
    return {q_len_.static_value(), kv_len_.static_value()};
  }

  // Whether the frontier at the past length leaves some query row no key (then the row
  // guard is needed): row i may attend keys max(0, i + off - left) .. min(kv - 1, i + off
  // [+ right]).
  bool frontier_masks_a_row(int64_t q, int64_t kv) const {
    for (int64_t i = 0; i < q; ++i) {
      int64_t at = i + past_len_, lo = 0, hi = kv - 1;
      if (causal_) hi = std::min(hi, at);
      if (left_ >= 0) lo = std::max(lo, at - left_);
      if (right_ >= 0) hi = std::min(hi, at + right_);
      if (lo > hi) return true;
    }
    return false;
  }

  NodeContext& c_;
  DType dt_ = DType::kInvalid, softmax_dt_ = DType::kInvalid;
  int64_t mode_ = kRawScores, left_ = -1, right_ = -1, past_len_ = 0;
  double softcap_ = 0;
  bool causal_ = false, was_3d_ = false, may_mask_rows_ = false;
  ValueId q_ = 0, k_ = 0, v_ = 0;
  Dim q_len_, kv_len_;
  std::optional<ValueId> bias_;
};

// ---- RotaryEmbedding (opset 23) ----

// Rotates the first rotary_embedding_dim features of each head by the position's angle:
// (x1, x2) -> (cos·x1 - sin·x2, sin·x1 + cos·x2), the pairs being the two halves or, when
// interleaved, the even and odd features. 4-D input is [B, H, S, D]; 3-D [B, S, H*D] is
// worked on as [B, S, H, D], so only where the cos/sin rows broadcast from differs.
class RotaryImport {
 public:
  explicit RotaryImport(NodeContext& c) : c_(c) {}

  void run() {
    ValueId x = c_.input(0);
    const std::vector<Dim> in = c_.type_of(x).dims;
    if (in.size() != 3 && in.size() != 4) c_.invalid("input must have rank 3 or 4, got ", in.size());
    bool is_3d = in.size() == 3;
    if (is_3d) x = c_.reshape(x, split_heads(in));
    int64_t head = static_dim(c_.type_of(x).dims[3], "the head size");
    int64_t rot = c_.attr_int("rotary_embedding_dim", 0);
    if (rot == 0) rot = head;
    if (rot <= 0 || rot > head || rot % 2 != 0)
      c_.invalid("rotary_embedding_dim ", rot, " must be even and at most the head size ", head);
    dt_ = c_.type_of(x).dtype;
    ValueId cos = cache(1, is_3d, rot / 2), sin = cache(2, is_3d, rot / 2);
    std::vector<ValueId> parts = rot == head ? std::vector<ValueId>{x} : split(x, {rot, head - rot}, 3);
    parts[0] = c_.attr_int("interleaved", 0) != 0 ? rotate_interleaved(parts[0], cos, sin, rot)
                                                   : rotate_halves(parts[0], cos, sin, rot);
    ValueId y = parts.size() == 1 ? parts[0] : c_.op("concat", parts, {{"axis", int64_t{3}}});
    c_.set_output(0, is_3d ? c_.reshape(y, in) : y);
  }

 private:
  std::vector<Dim> split_heads(const std::vector<Dim>& in) {
    int64_t heads = c_.attr_int("num_heads", 0);
    int64_t hidden = static_dim(in[2], "the hidden size");
    if (heads <= 0 || hidden % heads != 0)
      c_.invalid("3-D input needs num_heads dividing the hidden size ", hidden, ", got ", heads);
    return {in[0], in[1], Dim(heads), Dim(hidden / heads)};
  }

  int64_t static_dim(const Dim& d, std::string_view what) {
    if (!d.is_static()) c_.unsupported(what, " is the symbolic dim ", d, "; it must be static");
    return d.static_value();
  }

  std::vector<ValueId> split(ValueId v, std::vector<int64_t> sizes, int64_t axis) {
    return c_.ops("split", {v}, {{"split_sizes", std::vector<Dim>(sizes.begin(), sizes.end())}, {"axis", axis}});
  }

  // cos or sin rows [B, S, rot/2] (looked up by position_ids when given), with a unit axis
  // where the heads are: [B, S, 1, rot/2] for 3-D input, [B, 1, S, rot/2] for 4-D.
  ValueId cache(size_t i, bool is_3d, int64_t half) {
    ValueId v = c_.cast(c_.input(i), dt_);
    if (c_.has_input(3)) v = c_.op("gather", {v, c_.input(3)}, {{"axis", int64_t{0}}});
    std::vector<Dim> d = c_.type_of(v).dims;
    if (d.size() != 3) c_.invalid("the cos/sin rows must have rank 3 after the position lookup, got ", d.size());
    if (d[2] != Dim(half)) c_.invalid("the cos/sin caches have ", d[2], " columns; rotary_embedding_dim/2 is ", half);
    d.insert(d.begin() + (is_3d ? 2 : 1), Dim(1));
    return c_.reshape(v, d);
  }

  std::pair<ValueId, ValueId> rotate(ValueId x1, ValueId x2, ValueId cos, ValueId sin) {
    auto mul = [&](ValueId a, ValueId b) { return c_.op("mul", {a, b}); };
    return {c_.op("sub", {mul(cos, x1), mul(sin, x2)}), c_.op("add", {mul(sin, x1), mul(cos, x2)})};
  }

  ValueId rotate_halves(ValueId x, ValueId cos, ValueId sin, int64_t rot) {
    std::vector<ValueId> h = split(x, {rot / 2, rot / 2}, 3);
    auto [re, im] = rotate(h[0], h[1], cos, sin);
    return c_.op("concat", {re, im}, {{"axis", int64_t{3}}});
  }

  // Even and odd features as a trailing pair axis: [.., rot] -> [.., rot/2, 2].
  ValueId rotate_interleaved(ValueId x, ValueId cos, ValueId sin, int64_t rot) {
    std::vector<Dim> d = c_.type_of(x).dims;
    std::vector<Dim> pairs(d.begin(), d.end() - 1);
    pairs.push_back(Dim(rot / 2));
    std::vector<Dim> paired = pairs;
    paired.push_back(Dim(2));
    std::vector<ValueId> eo = split(c_.reshape(x, paired), {1, 1}, 4);
    auto [re, im] = rotate(c_.reshape(eo[0], pairs), c_.reshape(eo[1], pairs), cos, sin);
    return c_.reshape(c_.op("stack", {re, im}, {{"axis", int64_t{4}}}), d);
  }

  NodeContext& c_;
  DType dt_ = DType::kInvalid;
};

}  // namespace

void register_attention_importers(ImportTable& t) {
  t["Attention"] = [](NodeContext& c) { AttentionImport(c).run(); };
  t["RotaryEmbedding"] = [](NodeContext& c) { RotaryImport(c).run(); };
}

}  // namespace maxc::onnx

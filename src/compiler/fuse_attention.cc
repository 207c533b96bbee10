// Pattern fusion of scaled dot-product attention (DESIGN §4):
//   softmax(scale · q @ kᵀ (+ mask), axis = -1) @ v
// becomes one node whose kernel (kernels/cpu/attention.h) works through blocks of query rows
// and never holds the whole score matrix.
//
// The fused node:
//   op      "attention"
//   inputs  (q, k, v) or (q, k, v, mask). q is [..., Lq, D]; k is [..., Lk, D], or kᵀ
//           [..., D, Lk] when k_transposed; v is [..., Lk, Dv]; all three have the same batch
//           dims and rank. The mask broadcasts to the scores [..., Lq, Lk].
//   attrs   scale: float (1 when the graph has none; 1/c for a division by c);
//           mask_fill: float, only with a bool mask, which selects: where the mask is false
//           the score is mask_fill (a decoder's where(causal, scores, lowest));
//           k_transposed: bool (true when the graph's kᵀ is not a transpose of the last two
//           dims we can look through, e.g. a value computed already transposed);
//           layout: "bshd", only where the permutes around the pattern were absorbed (below):
//           q, k, v and the output are each stored with the two dims before the last swapped,
//           [B, L, H, D] for the [B, H, L, D] above. Absent: as above.
//   outputs (out): the output value of the final matmul, or, with layout "bshd", of the
//           permute that read it.
// Matched from the final matmul back: its lhs is a softmax over the last axis, of either
// add(scores, mask) (either operand order), where(mask, scores, fill) with a bool mask and
// a one-element constant fill, or the scores themselves; the scores are a matmul
// q @ kᵀ, optionally multiplied or divided by a one-element constant. Every intermediate is
// read only by the next op. Float32 only (the kernel's type). The node takes the final
// matmul's place: q, k, v and the mask all come before it.
//
// BERT- and GPT-style encoders project q, k and v as [B, S, H·D], reshape to [B, S, H, D] and
// permute to [B, H, S, D] (kᵀ: [B, H, D, S]), then permute the output back to [B, S, H, Dv].
// The kernels take strides, so where all four permutes are there and read by nothing else,
// the node reads and writes [B, S, H, D] itself (layout "bshd") and the permutes go: each
// was a copy of the whole tensor. Both devices' attention kernels take that layout
// (engine/lower/attention_shape.h), so the pass need not ask which one runs it.
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/passes.h"
#include "compiler/rewrite.h"

namespace maxc {
namespace {

struct Match {
  ValueId q = 0, k = 0, v = 0;
  std::optional<ValueId> mask;
  std::optional<double> mask_fill;  // a bool mask selects
  double scale = 1.0;
  bool k_transposed = false;
  std::vector<size_t> nodes;  // fused away, besides the final matmul
};

// A match's operands and output in layout "bshd": the permutes' sources and result.
struct Bshd {
  ValueId q = 0, k = 0, v = 0, out = 0;
  bool k_transposed = false;
  std::vector<size_t> permutes;  // absorbed: q's, k's, v's and the output's
};

class Matcher {
 public:
  explicit Matcher(const Program& p)
      : p_(p), producer_(producers(p)), uses_(use_counts(p)), reader_(p.types.size(), -1) {
    for (const ProgramConstant& c : p.constants) constants_[c.value] = &c.data;
    for (size_t i = 0; i < p.nodes.size(); ++i)
      for (ValueId v : p.nodes[i].inputs) reader_[v] = static_cast<int64_t>(i);
  }

  std::optional<Match> match(const Node& final_matmul) const {
    if (final_matmul.op != "matmul" || final_matmul.inputs.size() != 2) return std::nullopt;
    Match m;
    m.v = final_matmul.inputs[1];
    const Node* softmax = sole_producer(final_matmul.inputs[0], "softmax", m);
    if (!softmax || !is_last_axis_softmax(*softmax)) return std::nullopt;
    const ValueId logits = softmax->inputs[0];
    const size_t mark = m.nodes.size();
    if (!match_scores(logits, m) && !match_masked(logits, m, mark) && !match_selected(logits, m, mark))
      return std::nullopt;
    if (!shapes_fit(m)) return std::nullopt;
    return m;
  }

  // The permutes of layout "bshd" around match m, whose output is `out`: q and v read
  // through permute(x, {0, 2, 1, 3}), k through {0, 2, 3, 1} (kᵀ of a [B, S, H, D] k) or
  // {0, 2, 1, 3}, `out` read only by a permute {0, 2, 1, 3}; each read by nothing else.
  std::optional<Bshd> bshd(const Match& m, ValueId out) const {
    static const std::vector<int64_t> kSwap{0, 2, 1, 3}, kKeysLast{0, 2, 3, 1};
    Bshd b;
    b.k_transposed = m.k_transposed;
    const int64_t q = sole_permute(m.q, kSwap), v = sole_permute(m.v, kSwap);
    int64_t k = sole_permute(m.k, kSwap);
    if (k < 0 && m.k_transposed) {
      k = sole_permute(m.k, kKeysLast);
      b.k_transposed = false;
    }
    const int64_t back = uses_[out] == 1 ? reader_[out] : -1;
    if (q < 0 || k < 0 || v < 0 || back < 0 || !is_permute(p_, p_.nodes[static_cast<size_t>(back)], kSwap))
      return std::nullopt;
    b.q = p_.nodes[static_cast<size_t>(q)].inputs[0];
    b.k = p_.nodes[static_cast<size_t>(k)].inputs[0];
    b.v = p_.nodes[static_cast<size_t>(v)].inputs[0];
    b.out = p_.nodes[static_cast<size_t>(back)].outputs[0];
    b.permutes = {static_cast<size_t>(q), static_cast<size_t>(k), static_cast<size_t>(v), static_cast<size_t>(back)};
    return b;
  }

 private:
  // The node producing `v` when it is an `op` read only by the pattern; records it in m.
  const Node* sole_producer(ValueId v, std::string_view op, Match& m) const {
    if (uses_[v] != 1 || producer_[v] < 0) return nullptr;
    const Node& n = p_.nodes[static_cast<size_t>(producer_[v])];
    if (n.op != op || n.outputs.size() != 1) return nullptr;
    m.nodes.push_back(static_cast<size_t>(producer_[v]));
    return &n;
  }

  // The index of the permute by `dims` producing v, when nothing but the pattern reads v; else -1.
  int64_t sole_permute(ValueId v, const std::vector<int64_t>& dims) const {
    const int64_t n = producer_[v];
    if (uses_[v] != 1 || n < 0 || !is_permute(p_, p_.nodes[static_cast<size_t>(n)], dims)) return -1;
    return n;
  }

  bool is_last_axis_softmax(const Node& softmax) const {
    const AttrValue* axis = softmax.attrs.find("axis");
    const int64_t* a = axis ? std::get_if<int64_t>(axis) : nullptr;
    const int64_t rank = p_.types[softmax.inputs[0]].rank();
    return softmax.inputs.size() == 1 && a && (*a == -1 || *a == rank - 1);
  }

  // logits = add(scores, mask) in either order. `mark`: m.nodes before the attempt.
  bool match_masked(ValueId logits, Match& m, size_t mark) const {
    m.nodes.resize(mark);
    const Node* found = sole_producer(logits, "add", m);
    if (!found || found->inputs.size() != 2) return false;
    const Node& add = *found;
    for (int s = 0; s < 2; ++s) {
      const ValueId scores = add.inputs[s], mask = add.inputs[1 - s];
      const TensorType& sum = p_.types[add.outputs[0]];
      if (p_.types[mask].dtype != DType::kFloat32 || !(p_.types[scores].dims == sum.dims)) continue;
      const size_t before = m.nodes.size();
      if (match_scores(scores, m)) {
        m.mask = mask;
        return true;
      }
      m.nodes.resize(before);
    }
    return false;
  }

  // logits = where(mask, scores, fill): a bool mask broadcasting to the scores, a
  // one-element constant fill. `mark`: m.nodes before the attempt.
  bool match_selected(ValueId logits, Match& m, size_t mark) const {
    m.nodes.resize(mark);
    const Node* where = sole_producer(logits, "where", m);
    if (!where || where->inputs.size() != 3) return false;
    const ValueId mask = where->inputs[0], scores = where->inputs[1];
    const std::optional<double> fill = scalar_of(where->inputs[2]);
    if (!fill || p_.types[mask].dtype != DType::kBool || !(p_.types[scores].dims == p_.types[logits].dims) ||
        !match_scores(scores, m))
      return false;
    m.mask = mask;
    m.mask_fill = fill;
    return true;
  }

  // [scale ·] q @ kᵀ, the scale a one-element constant multiplying or dividing.
  bool match_scores(ValueId scores, Match& m) const {
    const size_t mark = m.nodes.size();
    if (uses_[scores] == 1 && producer_[scores] >= 0) {
      const Node& n = p_.nodes[static_cast<size_t>(producer_[scores])];
      if ((n.op == "mul" || n.op == "div") && n.inputs.size() == 2) {
        for (int side = 0; side < 2; ++side) {
          if (n.op == "div" && side == 1) break;  // c / x is no scale
          const std::optional<double> c = scalar_of(n.inputs[1 - side]);
          if (!c || !(p_.types[n.inputs[side]].dims == p_.types[scores].dims)) continue;
          m.nodes.push_back(static_cast<size_t>(producer_[scores]));
          if (match_product(n.inputs[side], m)) {
            m.scale = n.op == "div" ? 1.0 / *c : *c;
            return true;
          }
          m.nodes.resize(mark);
        }
      }
    }
    return match_product(scores, m);
  }

  // q @ kᵀ, looking through a transpose of kᵀ's last two dims read by nothing else (one
  // with other readers is computed anyway: the kernel reads its kᵀ).
  bool match_product(ValueId scores, Match& m) const {
    const size_t mark = m.nodes.size();
    const Node* mm = sole_producer(scores, "matmul", m);
    if (!mm || mm->inputs.size() != 2) {
      m.nodes.resize(mark);
      return false;
    }
    m.q = mm->inputs[0];
    m.k = mm->inputs[1];
    m.k_transposed = true;
    const Node* tr = sole_producer(m.k, "transpose", m);
    if (tr && swaps_last_two(*tr)) {
      m.k = tr->inputs[0];
      m.k_transposed = false;
    } else if (tr) {
      m.nodes.pop_back();
    }
    return true;
  }

  bool swaps_last_two(const Node& transpose) const {
    const int64_t rank = p_.types[transpose.inputs[0]].rank();
    const AttrValue* a1 = transpose.attrs.find("axis_1");
    const AttrValue* a2 = transpose.attrs.find("axis_2");
    const int64_t* x = a1 ? std::get_if<int64_t>(a1) : nullptr;
    const int64_t* y = a2 ? std::get_if<int64_t>(a2) : nullptr;
    if (!x || !y || rank < 2) return false;
    const int64_t i = *x < 0 ? *x + rank : *x, j = *y < 0 ? *y + rank : *y;
    return (i == rank - 2 && j == rank - 1) || (i == rank - 1 && j == rank - 2);
  }

  std::optional<double> scalar_of(ValueId v) const {
    auto it = constants_.find(v);
    if (it == constants_.end()) return std::nullopt;
    const Constant& c = *it->second;
    if (c.type.dtype != DType::kFloat32 && c.type.dtype != DType::kFloat64) return std::nullopt;
    return c.scalar_float();
  }

  // float32 throughout, one rank, shared batch dims, a mask that broadcasts to the scores.
  bool shapes_fit(const Match& m) const {
    const TensorType &q = p_.types[m.q], &k = p_.types[m.k], &v = p_.types[m.v];
    for (const TensorType* t : {&q, &k, &v})
      if (t->dtype != DType::kFloat32 || t->rank() != q.rank()) return false;
    if (q.rank() < 2) return false;
    const size_t batch = q.dims.size() - 2;
    for (size_t i = 0; i < batch; ++i)
      if (!(q.dims[i] == k.dims[i]) || !(q.dims[i] == v.dims[i])) return false;
    if (!m.mask) return true;
    const TensorType& mask = p_.types[*m.mask];
    return mask.rank() <= q.rank();  // the add already checked that it broadcasts
  }

  const Program& p_;
  std::vector<int64_t> producer_;
  std::vector<int32_t> uses_;
  std::vector<int64_t> reader_;  // for each value, the last node reading it, or -1
  std::map<ValueId, const Constant*> constants_;
};

}  // namespace

void fuse_attention(Program& p) {
  // Rewrites keep node indices (removal waits for the end) and value ids, and a replaced
  // node is an "attention" no later match looks for, so one matcher serves the whole walk.
  // Its producers go stale only for the values of absorbed output permutes, whose node is
  // marked removed: a later match absorbs no removed permute.
  const Matcher matcher(p);
  std::vector<bool> removed(p.nodes.size(), false);
  const auto any_removed = [&removed](const std::vector<size_t>& nodes) {
    for (size_t k : nodes)
      if (removed[k]) return true;
    return false;
  };
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    std::optional<Match> m = matcher.match(p.nodes[i]);
    if (!m || any_removed(m->nodes)) continue;
    Node fused;
    fused.op = "attention";
    fused.inputs = {m->q, m->k, m->v};
    fused.outputs = p.nodes[i].outputs;
    bool k_transposed = m->k_transposed;
    const std::optional<Bshd> b = matcher.bshd(*m, fused.outputs[0]);
    if (b && !any_removed(b->permutes)) {
      fused.inputs = {b->q, b->k, b->v};
      fused.outputs = {b->out};
      k_transposed = b->k_transposed;
      fused.attrs.set("layout", std::string("bshd"));
      for (size_t k : b->permutes) removed[k] = true;
    }
    fused.attrs.set("scale", m->scale);
    fused.attrs.set("k_transposed", k_transposed);
    if (m->mask) fused.inputs.push_back(*m->mask);
    if (m->mask_fill) fused.attrs.set("mask_fill", *m->mask_fill);
    for (size_t k : m->nodes) removed[k] = true;
    p.nodes[i] = std::move(fused);
  }
  erase_nodes(p, removed);
}

}  // namespace maxc

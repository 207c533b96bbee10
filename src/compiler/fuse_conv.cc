// Pattern fusion of a convolution's epilogue (DESIGN §4): the per-channel affine an inference
// BatchNormalization leaves after a float32 conv2d, and the ReLU after it,
//   relu(conv2d(x, f [, bias]) * scale + shift)
// become one node whose kernel applies them as oneDNN post-ops while the output is in
// registers, instead of two more passes over a CNN's largest tensors.
//
// The fused node:
//   op      "fused_conv2d"
//   inputs  (x, filter [, bias] [, scale] [, shift]): the conv's operands, then the mul's and
//           the add's other operands, each holding one value per output channel (any shape
//           that broadcasts along the channel axis only, e.g. [C, 1, 1] for NCHW).
//   attrs   the conv2d's own, plus has_bias, has_scale, has_shift: bool and activation:
//           "none" or "relu".
//   outputs (y): the output of the pattern's last op.
// Matched: conv2d [-> mul(scale)] [-> add(shift)] [-> relu], at least one of them, each
// intermediate read only by the next op.
#include <optional>
#include <string>
#include <vector>

#include "compiler/passes.h"
#include "compiler/rewrite.h"

namespace maxc {
namespace {

// The axis of conv2d output `y` that holds channels.
int64_t channel_axis(const Node& conv) {
  const std::string* layout = string_attr(conv, "input_layout");
  return layout && *layout == "NCHW" ? 1 : 3;
}

// `v` holds exactly one value per channel of y, on the channel axis, and broadcasting it
// keeps y's shape. (One value for all channels would need the kernels to broadcast it too.)
bool is_per_channel(const TensorType& v, const TensorType& y, int64_t axis) {
  if (v.dtype != y.dtype || v.rank() > y.rank()) return false;
  const int64_t offset = y.rank() - v.rank();
  if (axis < offset) return y.dims[static_cast<size_t>(axis)] == Dim(1) && v.num_elements() == Dim(1);
  for (int64_t i = 0; i < v.rank(); ++i) {
    const Dim& d = v.dims[static_cast<size_t>(i)];
    if (i + offset == axis ? !(d == y.dims[static_cast<size_t>(axis)]) : !(d == Dim(1))) return false;
  }
  return true;
}

class Matcher {
 public:
  explicit Matcher(const Program& p) : p_(p), uses_(use_counts(p)) {
    reader_.assign(p.types.size(), -1);
    for (size_t k = 0; k < p.nodes.size(); ++k)
      for (ValueId v : p.nodes[k].inputs)
        if (uses_[v] == 1) reader_[v] = static_cast<int64_t>(k);
  }

  struct Match {
    std::vector<size_t> nodes;  // after the conv
    std::optional<ValueId> scale, shift;
    bool relu = false;
    ValueId out = 0;
  };

  std::optional<Match> match(const Node& conv) const {
    if (conv.op != "conv2d" || conv.outputs.size() != 1) return std::nullopt;
    const TensorType& y = p_.types[conv.outputs[0]];
    if (y.dtype != DType::kFloat32 || y.rank() != 4) return std::nullopt;
    const int64_t axis = channel_axis(conv);
    Match m;
    m.out = conv.outputs[0];
    m.scale = step(m, "mul", axis);
    m.shift = step(m, "add", axis);
    if (const Node* relu = next(m.out, "relu"); relu && relu->inputs.size() == 1) {
      m.nodes.push_back(static_cast<size_t>(reader_[m.out]));
      m.out = relu->outputs[0];
      m.relu = true;
    }
    if (m.nodes.empty()) return std::nullopt;
    return m;
  }

 private:
  // The sole reader of v when it is an `op` with one output (and v is no program output).
  const Node* next(ValueId v, std::string_view op) const {
    if (reader_[v] < 0) return nullptr;
    const Node& n = p_.nodes[static_cast<size_t>(reader_[v])];
    return n.op == op && n.outputs.size() == 1 ? &n : nullptr;
  }

  // m.out `op` a per-channel operand: takes the node and returns the operand.
  std::optional<ValueId> step(Match& m, std::string_view op, int64_t axis) const {
    const Node* n = next(m.out, op);
    if (!n || n->inputs.size() != 2 || n->inputs[0] == n->inputs[1]) return std::nullopt;
    const ValueId other = n->inputs[0] == m.out ? n->inputs[1] : n->inputs[0];
    const TensorType &y = p_.types[m.out], &z = p_.types[n->outputs[0]];
    if (!is_per_channel(p_.types[other], y, axis) || z.dtype != y.dtype || !(z.dims == y.dims)) return std::nullopt;
    m.nodes.push_back(static_cast<size_t>(reader_[m.out]));
    m.out = n->outputs[0];
    return other;
  }

  const Program& p_;
  std::vector<int32_t> uses_;
  std::vector<int64_t> reader_;
};

}  // namespace

void fuse_conv_epilogue(Program& p) {
  const Matcher matcher(p);
  std::vector<bool> removed(p.nodes.size(), false);
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    std::optional<Matcher::Match> m = matcher.match(p.nodes[i]);
    if (!m) continue;
    Node fused = p.nodes[i];
    fused.op = "fused_conv2d";
    fused.attrs.set("has_bias", fused.inputs.size() == 3);
    fused.attrs.set("has_scale", m->scale.has_value());
    fused.attrs.set("has_shift", m->shift.has_value());
    fused.attrs.set("activation", std::string(m->relu ? "relu" : "none"));
    if (m->scale) fused.inputs.push_back(*m->scale);
    if (m->shift) fused.inputs.push_back(*m->shift);
    fused.outputs = {m->out};
    // The fused node takes the last op's place: every input it reads is defined by then.
    const size_t last = m->nodes.back();
    for (size_t k : m->nodes) removed[k] = true;
    removed[last] = false;
    removed[i] = true;
    p.nodes[last] = std::move(fused);
  }
  erase_nodes(p, removed);
}

}  // namespace maxc

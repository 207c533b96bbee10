// Pattern fusion of a matmul's epilogue (DESIGN §4): the dense layer's
// `activation(matmul(x, w) + bias)` becomes one oneDNN matmul with the bias and the activation
// as post-ops, so the result is written once instead of three times.
//
// The fused node:
//   op      "fused_matmul"
//   inputs  (lhs, rhs) or (lhs, rhs, bias): the matmul's operands, then the add's other
//           operand. The bias has the matmul's dtype and broadcasts over the last dim only:
//           rank 0, or dims all 1 but the last, which is N (the result's last dim) or 1.
//   attrs   activation: string, one of "none", "relu", "gelu" (erf), "gelu_tanh", "sigmoid",
//           "tanh", "silu"; has_bias: bool; rhs_transposed: bool, when true the rhs input
//           is a float32 matrix [N, K] read as its transpose.
//   outputs (y): the output value of the pattern's last op, so no use needs rewriting.
// Matched: matmul -> add(bias) [-> activation], and matmul -> activation. A float32 rhs that
// is the transpose of a matrix read by nothing else (torch's Linear keeps W as [out, in] and
// computes x @ W^T) is taken untransposed with rhs_transposed, so no copy of the weight is
// made per call: the kernel reads it transposed, or packs it once (engine/lower/linalg.cc);
// such a matmul is fused even with no epilogue. Each intermediate
// must be read only by the next op (and not be a graph output), and the rhs must be a matrix
// (rank >= 2), so the result's last dim is N. The node sits where the last op was; every
// input is defined before it since each came before one of the fused ops.
#include <optional>
#include <string>
#include <vector>

#include "compiler/passes.h"
#include "compiler/rewrite.h"

namespace maxc {
namespace {

// The fused name of an activation op, or nullopt when it is not one the kernel runs.
std::optional<std::string> activation_of(const Node& n) {
  if (n.inputs.size() != 1 || n.outputs.size() != 1) return std::nullopt;
  if (n.op == "relu" || n.op == "sigmoid" || n.op == "tanh" || n.op == "silu") return n.op;
  if (n.op == "gelu") {
    const std::string* text = string_attr(n, "approximate");
    if (!text || *text == "none") return std::string("gelu");
    if (*text == "tanh") return std::string("gelu_tanh");
  }
  return std::nullopt;
}

bool same_type(const TensorType& a, const TensorType& b) { return a.dtype == b.dtype && a.dims == b.dims; }

// `bias` adds to `y` one value per column (or one for all) without changing its shape.
bool is_column_bias(const TensorType& bias, const TensorType& y) {
  if (bias.dtype != y.dtype || bias.rank() > y.rank() || y.rank() < 1) return false;
  if (bias.rank() == 0) return true;
  for (size_t i = 0; i + 1 < bias.dims.size(); ++i)
    if (!(bias.dims[i] == Dim(1))) return false;
  return bias.dims.back() == y.dims.back() || bias.dims.back() == Dim(1);
}

// Whichever operand of `add` is not `y`, when it is a column bias for y and the sum keeps
// y's type.
std::optional<ValueId> bias_of(const Program& p, const Node& add, ValueId y) {
  if (add.op != "add" || add.inputs.size() != 2 || add.outputs.size() != 1) return std::nullopt;
  if (add.inputs[0] == add.inputs[1]) return std::nullopt;  // y + y is not a bias
  const ValueId other = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
  if (!same_type(p.types[add.outputs[0]], p.types[y])) return std::nullopt;
  if (!is_column_bias(p.types[other], p.types[y])) return std::nullopt;
  return other;
}

// The matrix `v` is the transpose of, when it is a float32 [K, N] made by swapping the two
// axes of an [N, K] that only this transpose reads.
std::optional<ValueId> transposed_matrix(const Program& p, ValueId v, const std::vector<int32_t>& uses,
                                         const std::vector<int64_t>& producer) {
  const TensorType& t = p.types[v];
  if (t.dtype != DType::kFloat32 || t.rank() != 2 || producer[v] < 0) return std::nullopt;
  const Node& n = p.nodes[static_cast<size_t>(producer[v])];
  if (n.inputs.size() != 1 || uses[n.inputs[0]] != 1) return std::nullopt;
  bool swaps = false;
  if (n.op == "transpose") {
    const int64_t a = n.attrs.get<int64_t>("axis_1", "transpose"), b = n.attrs.get<int64_t>("axis_2", "transpose");
    swaps = ((a % 2) + 2) % 2 != ((b % 2) + 2) % 2;  // axes of a matrix: {0, 1} or {-2, -1}
  } else if (n.op == "permute") {
    const auto& dims = n.attrs.get<std::vector<int64_t>>("dims", "permute");
    swaps = dims.size() == 2 && ((dims[0] % 2) + 2) % 2 == 1 && ((dims[1] % 2) + 2) % 2 == 0;
  }
  if (!swaps) return std::nullopt;
  return n.inputs[0];
}

bool is_fusable_matmul(const Program& p, const Node& n) {
  if (n.op != "matmul" || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  return p.types[n.inputs[1]].rank() >= 2;
}

// For each value read by exactly one node: that node's index.
std::vector<int64_t> sole_readers(const Program& p, const std::vector<int32_t>& uses) {
  std::vector<int64_t> reader(p.types.size(), -1);
  for (size_t k = 0; k < p.nodes.size(); ++k)
    for (ValueId v : p.nodes[k].inputs)
      if (uses[v] == 1) reader[v] = static_cast<int64_t>(k);
  return reader;
}

}  // namespace

void fuse_matmul_epilogue(Program& p) {
  const std::vector<int32_t> uses = use_counts(p);
  const std::vector<int64_t> reader = sole_readers(p, uses);
  const std::vector<int64_t> producer = producers(p);
  std::vector<bool> removed(p.nodes.size(), false);
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    if (removed[i] || !is_fusable_matmul(p, p.nodes[i])) continue;
    std::vector<size_t> pattern{i};
    ValueId y = p.nodes[i].outputs[0];
    std::optional<ValueId> bias;
    std::string activation = "none";
    int64_t next = reader[y];
    if (next >= 0 && (bias = bias_of(p, p.nodes[static_cast<size_t>(next)], y))) {
      pattern.push_back(static_cast<size_t>(next));
      y = p.nodes[static_cast<size_t>(next)].outputs[0];
      next = reader[y];
    }
    if (next >= 0) {
      if (std::optional<std::string> act = activation_of(p.nodes[static_cast<size_t>(next)])) {
        activation = *act;
        pattern.push_back(static_cast<size_t>(next));
        y = p.nodes[static_cast<size_t>(next)].outputs[0];
      }
    }
    const ValueId rhs = p.nodes[i].inputs[1];
    const std::optional<ValueId> untransposed = uses[rhs] == 1 ? transposed_matrix(p, rhs, uses, producer) : std::nullopt;
    if (pattern.size() == 1 && !untransposed) continue;
    Node fused;
    fused.op = "fused_matmul";
    fused.inputs = p.nodes[i].inputs;
    if (untransposed) {
      fused.inputs[1] = *untransposed;
      removed[static_cast<size_t>(producer[rhs])] = true;
    }
    if (bias) fused.inputs.push_back(*bias);
    fused.attrs.set("activation", activation);
    fused.attrs.set("has_bias", bias.has_value());
    fused.attrs.set("rhs_transposed", untransposed.has_value());
    fused.outputs = {y};
    for (size_t k = 0; k + 1 < pattern.size(); ++k) removed[pattern[k]] = true;
    p.nodes[pattern.back()] = std::move(fused);
  }
  erase_nodes(p, removed);
}

}  // namespace maxc

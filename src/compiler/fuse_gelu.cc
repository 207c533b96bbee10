// Recognition of GELU written out in elementwise ops, as exporters emit it (torch.onnx before
// opset 20, GPT-2's "new GELU", hand-built graphs):
//   erf form    0.5 · x · (1 + erf(x / √2))
//   tanh form   0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))
// The whole expression becomes one `gelu` node (approximate "none" or "tanh"), which
// fuse_matmul then takes into a matmul's epilogue: without this, a BERT layer's FFN would
// make five passes over its widest activation instead of none.
//
// Products are matched as a whole, whatever their grouping: the walk flattens single-use
// mul nodes (and divisions by a constant) into their non-constant factors and one scalar,
// so (0.5 · x) · s, 0.5 · (x · s) and (x · s) / 2 all read as {x, s} times 0.5. Every
// intermediate must be read only by the expression, and the result must have x's type (the
// constants do not broadcast it to more dims).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/passes.h"
#include "compiler/rewrite.h"

namespace maxc {
namespace {

// The non-constant factors of a product and the product of its constant ones.
struct Product {
  std::vector<ValueId> factors;
  double scale = 1.0;
  std::vector<size_t> nodes;  // the mul/div/pow nodes walked through
};

bool near(double a, double b) { return std::fabs(a - b) <= 1e-5 * std::max(1.0, std::fabs(b)); }

class Matcher {
 public:
  explicit Matcher(const Program& p) : p_(p), producer_(producers(p)), uses_(use_counts(p)) {
    for (const ProgramConstant& c : p.constants) constants_[c.value] = &c.data;
  }

  // The gelu that node `root` ends, as (x, approximate), with the nodes it replaces.
  std::optional<std::pair<ValueId, std::string>> match(size_t root, std::vector<size_t>& nodes) const {
    const Node& n = p_.nodes[root];
    if (n.op != "mul" || n.outputs.size() != 1) return std::nullopt;
    Product outer;
    flatten_node(n, outer);
    if (outer.factors.size() != 2 || !near(outer.scale, 0.5)) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const ValueId x = outer.factors[side], s = outer.factors[1 - side];
      std::vector<size_t> inner;
      std::optional<std::string> mode = one_plus(s, x, inner);
      const TensorType &xt = p_.types[x], &yt = p_.types[n.outputs[0]];
      if (!mode || xt.dtype != yt.dtype || !(xt.dims == yt.dims)) continue;
      nodes = outer.nodes;
      nodes.insert(nodes.end(), inner.begin(), inner.end());
      std::erase(nodes, root);
      return std::make_pair(x, *mode);
    }
    return std::nullopt;
  }

 private:
  const Node* sole_producer(ValueId v, std::string_view op) const {
    if (uses_[v] != 1 || producer_[v] < 0) return nullptr;
    const Node& n = p_.nodes[static_cast<size_t>(producer_[v])];
    return n.op == op && n.outputs.size() == 1 ? &n : nullptr;
  }

  std::optional<double> scalar_of(ValueId v) const {
    auto it = constants_.find(v);
    if (it == constants_.end() || !dtype_is_float(it->second->type.dtype)) return std::nullopt;
    return it->second->scalar_float();
  }

  // Factors of value v into `out`, looking through single-use products.
  void flatten(ValueId v, Product& out) const {
    if (std::optional<double> c = scalar_of(v)) {
      out.scale *= *c;
      return;
    }
    for (std::string_view op : {"mul", "div", "pow"}) {
      if (const Node* n = sole_producer(v, op)) {
        if (flatten_node(*n, out)) {
          out.nodes.push_back(static_cast<size_t>(producer_[v]));
          return;
        }
      }
    }
    out.factors.push_back(v);
  }

  // False (and `out` untouched) for a div by a non-constant or a pow other than x³.
  bool flatten_node(const Node& n, Product& out) const {
    if (n.inputs.size() != 2) return false;
    if (n.op == "mul") {
      flatten(n.inputs[0], out);
      flatten(n.inputs[1], out);
      return true;
    }
    const std::optional<double> c = scalar_of(n.inputs[1]);
    if (n.op == "div" && c && *c != 0.0) {
      flatten(n.inputs[0], out);
      out.scale /= *c;
      return true;
    }
    if (n.op == "pow" && c && *c == 3.0 && !scalar_of(n.inputs[0])) {
      out.factors.insert(out.factors.end(), 3, n.inputs[0]);
      return true;
    }
    return false;
  }

  // s = 1 + erf(x / √2) -> "none"; s = 1 + tanh(√(2/π) · (x + 0.044715 · x³)) -> "tanh".
  std::optional<std::string> one_plus(ValueId s, ValueId x, std::vector<size_t>& nodes) const {
    const Node* add = sole_producer(s, "add");
    if (!add || add->inputs.size() != 2) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const std::optional<double> one = scalar_of(add->inputs[1 - side]);
      if (!one || !near(*one, 1.0)) continue;
      const ValueId f = add->inputs[side];
      std::vector<size_t> found;
      std::optional<std::string> mode;
      if (const Node* erf = sole_producer(f, "erf"); erf && scaled_x(erf->inputs[0], x, M_SQRT1_2, found)) {
        mode = "none";
      } else if (const Node* tanh = sole_producer(f, "tanh"); tanh && tanh_argument(tanh->inputs[0], x, found)) {
        mode = "tanh";
      }
      if (!mode) continue;
      nodes = std::move(found);
      nodes.push_back(static_cast<size_t>(producer_[f]));
      nodes.push_back(static_cast<size_t>(producer_[s]));
      return mode;
    }
    return std::nullopt;
  }

  // v = scale · x, with x itself, not a product, as the only factor.
  bool scaled_x(ValueId v, ValueId x, double scale, std::vector<size_t>& nodes) const {
    Product p;
    flatten(v, p);
    if (p.factors != std::vector<ValueId>{x} || !near(p.scale, scale)) return false;
    nodes.insert(nodes.end(), p.nodes.begin(), p.nodes.end());
    return true;
  }

  // v = √(2/π) · (x + 0.044715 · x³)
  bool tanh_argument(ValueId v, ValueId x, std::vector<size_t>& nodes) const {
    Product p;
    flatten(v, p);
    if (p.factors.size() != 1 || !near(p.scale, std::sqrt(2.0 / M_PI))) return false;
    const ValueId sum = p.factors[0];
    const Node* add = sole_producer(sum, "add");
    if (!add || add->inputs.size() != 2) return false;
    for (int side = 0; side < 2; ++side) {
      if (add->inputs[side] != x) continue;
      Product cube;
      flatten(add->inputs[1 - side], cube);
      if (cube.factors != std::vector<ValueId>{x, x, x} || !near(cube.scale, 0.044715)) continue;
      nodes.insert(nodes.end(), p.nodes.begin(), p.nodes.end());
      nodes.insert(nodes.end(), cube.nodes.begin(), cube.nodes.end());
      nodes.push_back(static_cast<size_t>(producer_[sum]));
      return true;
    }
    return false;
  }

  const Program& p_;
  std::vector<int64_t> producer_;
  std::vector<int32_t> uses_;
  std::map<ValueId, const Constant*> constants_;
};

}  // namespace

void fuse_gelu(Program& p) {
  const Matcher matcher(p);
  std::vector<bool> removed(p.nodes.size(), false);
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    std::vector<size_t> nodes;
    auto m = matcher.match(i, nodes);
    if (!m || std::any_of(nodes.begin(), nodes.end(), [&](size_t k) { return removed[k]; })) continue;
    Node gelu;
    gelu.op = "gelu";
    gelu.inputs = {m->first};
    gelu.outputs = p.nodes[i].outputs;
    gelu.attrs.set("approximate", m->second);
    for (size_t k : nodes) removed[k] = true;
    p.nodes[i] = std::move(gelu);
  }
  erase_nodes(p, removed);
}

}  // namespace maxc

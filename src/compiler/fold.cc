// Constant folding: a node whose inputs are all constants is run once at compile time (by
// the evaluator the engine passes in) and its outputs become constants, as long as they
// are static and within the size bound — folding a large broadcast would only trade a
// cheap kernel for resident memory.
#include <map>
#include <vector>

#include "base/checked_math.h"
#include "compiler/passes.h"

namespace maxc {

namespace {

bool foldable(const Program& p, const Node& n, const std::map<ValueId, const Constant*>& known,
              uint64_t limit) {
  // A region node could loop for as long as it likes: it runs when the model does.
  if (!n.steps.empty() || !n.regions.empty()) return false;
  // bind_dims names its input's entries; it goes when the symbol sources are added.
  if (n.op == "bind_dims") return false;
  for (ValueId v : n.inputs)
    if (!known.contains(v)) return false;
  uint64_t bytes = 0;
  for (ValueId v : n.outputs) {
    const TensorType& t = p.types[v];
    if (!t.is_static()) return false;
    std::vector<int64_t> dims;
    for (const Dim& d : t.dims) dims.push_back(d.static_value());
    std::optional<int64_t> count = checked_product(dims);
    std::optional<uint64_t> size = count ? checked_byte_size(t.dtype, static_cast<uint64_t>(*count)) : std::nullopt;
    std::optional<uint64_t> total = size ? checked_add(bytes, *size) : std::nullopt;
    if (!total || *total > limit) return false;  // too large to fold, whatever the limit
    bytes = *total;
  }
  return true;
}

}  // namespace

void fold_constants(Program& p, const CompileOptions& opts) {
  if (!opts.fold_constants || !opts.evaluate) return;
  std::map<ValueId, const Constant*> known;
  std::vector<ProgramConstant> folded;
  size_t max_folded = 0;
  for (const Node& n : p.nodes) max_folded += n.outputs.size();
  folded.reserve(max_folded);  // `known` points into it: no reallocation below
  for (const auto& c : p.constants) known[c.value] = &c.data;
  std::vector<Node> kept;
  for (Node& n : p.nodes) {
    std::vector<Constant> results;
    if (foldable(p, n, known, opts.fold_limit_bytes)) {
      std::vector<const Constant*> args;
      for (ValueId v : n.inputs) args.push_back(known[v]);
      results = opts.evaluate(n, p, args);
    }
    if (results.size() != n.outputs.size()) {
      kept.push_back(std::move(n));
      continue;
    }
    for (size_t i = 0; i < results.size(); ++i) {
      folded.push_back({n.outputs[i], std::move(results[i])});
      known[n.outputs[i]] = &folded.back().data;
    }
  }
  p.nodes = std::move(kept);
  for (auto& c : folded) p.constants.push_back(std::move(c));
}

}  // namespace maxc

// Operators whose output sizes depend on input values: NonZero and Compress, through our
// nonzero with an out_dim the engine binds at run time (data_dependent.h). Inputs known at
// import are folded instead, so that what follows keeps static shapes.
#include <cctype>
#include <set>
#include <string>

#include "onnx/data_dependent.h"

namespace maxc::onnx {

namespace {

// Our symbols are C identifiers; ONNX value names need not be.
std::string identifier(std::string_view s) {
  std::string out;
  for (char ch : s) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
  return out;
}

std::set<std::string> symbols_in(const Graph& g) {
  std::set<std::string> out;
  for (ValueId v = 0; v < g.num_values(); ++v)
    for (const Dim& d : g.type(v).dims)
      for (const std::string& s : d.symbols()) out.insert(s);
  return out;
}

}  // namespace

Dim fresh_count_symbol(NodeContext& c, std::string_view stem) {
  std::string base = str_cat(stem, "_", c.index());
  if (c.num_outputs() > 0) base += "_" + identifier(c.node().outputs[0]);
  const std::set<std::string> taken = symbols_in(c.graph());
  std::string name = base;
  for (int k = 2; taken.count(name); ++k) name = str_cat(base, "_", k);
  return Dim(std::string_view(name));
}

ValueId nonzero_positions(NodeContext& c, ValueId mask, std::string_view stem) {
  const Dim n = fresh_count_symbol(c, stem);
  ValueId idx = c.op("nonzero", {mask}, {{"out_dim", std::vector<Dim>{n}}});
  return c.reshape(idx, {n});
}

namespace {

// ---- NonZero: nonzero gives numpy's argwhere [n, rank]; ONNX wants its transpose ----

// A known input's nonzero indices, computed here: [rank, n].
bool fold_nonzero(NodeContext& c) {
  const KnownValue* k = c.known(0);
  if (!k || !k->is_static() || k->num_elements() > kMaxKnownInts) return false;
  std::optional<std::vector<double>> v = k->doubles();
  if (!v) return false;
  const size_t rank = k->shape.size();
  std::vector<std::vector<Dim>> coords(rank);
  for (size_t flat = 0; flat < v->size(); ++flat) {
    if ((*v)[flat] == 0) continue;  // NaN is nonzero, as in numpy
    size_t rest = flat;
    for (size_t a = rank; a-- > 0;) {
      const size_t d = static_cast<size_t>(k->shape[a]);
      coords[a].push_back(static_cast<int64_t>(rest % d));
      rest /= d;
    }
  }
  const int64_t n = rank == 0 ? ((*v)[0] != 0 ? 1 : 0) : static_cast<int64_t>(coords[0].size());
  std::vector<Dim> out;
  for (const std::vector<Dim>& row : coords) out.insert(out.end(), row.begin(), row.end());
  c.set_known_output(0, KnownValue::from_dims(DType::kInt64, {static_cast<int64_t>(rank), n}, std::move(out)));
  return true;
}

void import_nonzero(NodeContext& c) {
  if (fold_nonzero(c)) return;
  const Dim n = fresh_count_symbol(c, "nonzero");
  ValueId idx = c.op("nonzero", {c.input(0)}, {{"out_dim", std::vector<Dim>{n}}});
  c.set_output(0, c.op("permute", {idx}, {{"dims", std::vector<int64_t>{1, 0}}}));
}

// ---- Compress: the positions where the condition holds, gathered along the axis ----

// A condition known at import gives constant positions, so the output's size is static.
std::optional<ValueId> known_positions(NodeContext& c) {
  const KnownValue* k = c.known(1);
  if (!k || !k->is_static()) return std::nullopt;
  std::optional<std::vector<double>> v = k->doubles();
  if (!v) return std::nullopt;
  std::vector<double> at;
  for (size_t i = 0; i < v->size(); ++i)
    if ((*v)[i] != 0) at.push_back(static_cast<double>(i));
  return c.constant(KnownValue::from_doubles(DType::kInt64, {static_cast<int64_t>(at.size())}, at));
}

// A condition shorter than the axis selects among the axis' leading elements only, which
// gathering by its positions does by itself; one longer than the axis is numpy's error only
// where it holds past the end, which the gather reports when the model runs.
void import_compress(NodeContext& c) {
  if (c.rank(1) != 1) c.invalid("condition must be 1-D, got rank ", c.rank(1));
  ValueId x = c.input(0);
  int64_t axis = 0;
  if (c.attr("axis")) {
    axis = c.axis(c.attr_int("axis", 0), c.rank(0));
  } else {
    Dim n(1);
    for (const Dim& d : c.type(0).dims) n = n * d;
    x = c.reshape(x, {n});
  }
  std::optional<ValueId> at = known_positions(c);
  if (!at) at = nonzero_positions(c, c.input(1), "compress");
  c.set_output(0, c.op("gather", {x, *at}, {{"axis", axis}}));
}

}  // namespace

void register_data_dependent_importers(ImportTable& t) {
  t["NonZero"] = import_nonzero;
  t["Compress"] = import_compress;
}

}  // namespace maxc::onnx

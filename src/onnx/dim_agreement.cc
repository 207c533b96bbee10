#include "onnx/dim_agreement.h"

#include <algorithm>

namespace maxc::onnx {

bool undecided(const Dim& a, const Dim& b) { return !(a == b) && !(a.is_static() && b.is_static()); }

ValueId assert_dims(NodeContext& c, ValueId v, const std::vector<Dim>& want, const std::string& what) {
  const std::vector<Dim> have = c.type_of(v).dims;
  if (have.size() != want.size()) return v;  // a rank mismatch is the op's to refuse
  std::vector<Dim> asserted = have;
  bool any = false;
  for (size_t i = 0; i < have.size(); ++i)
    if (undecided(have[i], want[i])) asserted[i] = want[i], any = true;
  if (!any) return v;
  std::string message =
      str_cat(c.label(), ": ", what, " is ", dims_to_string(have), " where ", dims_to_string(asserted), " is needed");
  return c.op("rebind", {v}, {{"shape", asserted}, {"message", std::move(message)}});
}

ValueId assert_broadcastable(NodeContext& c, ValueId v, const std::vector<Dim>& other, const std::string& what) {
  std::vector<Dim> want = c.type_of(v).dims;
  const size_t n = std::min(want.size(), other.size());
  for (size_t k = 1; k <= n; ++k) {
    Dim& mine = want[want.size() - k];
    const Dim& theirs = other[other.size() - k];
    if (undecided(mine, theirs) && !(mine == Dim(1)) && !(theirs == Dim(1))) mine = theirs;
  }
  return assert_dims(c, v, want, what);
}

std::vector<ValueId> assert_concatenable(NodeContext& c, std::vector<ValueId> inputs, int64_t axis) {
  if (inputs.empty()) return inputs;
  const std::vector<Dim> first = c.type_of(inputs[0]).dims;
  if (axis < 0) axis += static_cast<int64_t>(first.size());
  for (size_t i = 1; i < inputs.size(); ++i) {
    std::vector<Dim> want = first;
    const std::vector<Dim> have = c.type_of(inputs[i]).dims;
    if (have.size() != want.size() || axis < 0 || axis >= static_cast<int64_t>(want.size())) continue;
    want[static_cast<size_t>(axis)] = have[static_cast<size_t>(axis)];
    inputs[i] = assert_dims(c, inputs[i], want, str_cat("input ", i));
  }
  return inputs;
}

}  // namespace maxc::onnx

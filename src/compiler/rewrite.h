// Small tools the passes share for rewriting a Program's uses.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/program.h"

namespace maxc {

// Redirects every use (node inputs, fused steps' inputs, program outputs) of value `from`
// to `to`, for each pair in `replace` (replace[from] == from means untouched).
void apply_replacements(Program& p, const std::vector<ValueId>& replace);

// Drops the nodes marked in `removed` (by node index), keeping the order of the rest.
void erase_nodes(Program& p, const std::vector<bool>& removed);

// The node's string attribute `name`, or nullptr when it has none (or one of another kind).
const std::string* string_attr(const Node& n, std::string_view name);

// Whether n is a permute of one value by `dims` (its own negative entries counting from the
// end), of a value of that rank.
bool is_permute(const Program& p, const Node& n, const std::vector<int64_t>& dims);

// Whether a node `op` with that many inputs is elementwise, a registry op fuse_elementwise
// may fuse (max and min with one input are reductions). Defined in fuse_elementwise.cc.
bool is_elementwise_op(std::string_view op, size_t num_inputs);

// identity[v] == v for every value of p.
std::vector<ValueId> identity_map(const Program& p);

}  // namespace maxc

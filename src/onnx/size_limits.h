// Bounds on the numbers the importer takes from a file before it builds anything from them:
// a hostile (or merely mistaken) model must get a status naming the node and the value, not
// an allocation of gigabytes, an overflowed size or a loop that runs for ever at import.
// Products and byte sizes are checked by base/checked_math.h, the one rule for what "too
// large" means everywhere; this file holds the importer's own, tighter bounds.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/checked_math.h"

namespace maxc::onnx {

class NodeContext;

// The most elements of a table or constant the importer fills itself from a node's sizes
// (an identity mask, a one-hot range, pad indices): larger ones are RESOURCE_EXHAUSTED.
constexpr int64_t kMaxBuiltElements = int64_t{1} << 24;

// The largest kernel, stride, dilation, pad or output size a convolution or pool may name
// (and the longest spatial input a window is computed over at import): products of two of
// them, and sums of a few such products, stay inside int64.
constexpr int64_t kMaxWindowValue = int64_t{1} << 30;

// The most elements of a Loop's scan outputs, accumulated whole while the loop runs.
constexpr int64_t kMaxScanElements = int64_t{1} << 32;

// The most a pad (or, negative, a crop) may move one end of an axis: a dim plus two of them
// stays inside int64 for any dim a tensor can have.
constexpr int64_t kMaxPadding = int64_t{1} << 40;

// The most steps of a window the importer unrolls into an op or two each (LRN's channel
// window, a 3-D convolution's depth taps).
constexpr int64_t kMaxUnrolledWindow = 1024;

// The elements of a table of `dims` the node builds: INVALID_ARGUMENT naming `what` for a
// negative dim, RESOURCE_EXHAUSTED past `limit`.
int64_t bounded_elements(const NodeContext& c, const std::vector<int64_t>& dims, std::string_view what,
                         int64_t limit = kMaxBuiltElements);

// INVALID_ARGUMENT naming attribute (or input) `what` unless every value lies in [lo, hi].
void check_values_in(const NodeContext& c, std::string_view what, const std::vector<int64_t>& values, int64_t lo,
                     int64_t hi);

}  // namespace maxc::onnx

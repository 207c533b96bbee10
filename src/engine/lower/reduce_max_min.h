// The one-input forms of max and min (reductions along `axis`): the elementwise family
// registers the op names and, for one input, lowers through this (defined in reduction.cc).
#pragma once

#include "engine/lowering.h"

namespace maxc {

Lowered lower_reduce_max_min(const LowerContext& ctx);

}  // namespace maxc

// What an "attention" node (compiler/fuse_attention.cc) computes, in the terms its kernels
// take: extents, and each operand's element strides from its stored shape and the node's
// `layout`. The CPU and GPU lowerings both start here, so they read a node alike.
#pragma once

#include "engine/lowering.h"
#include "kernels/cpu/attention.h"

namespace maxc {

// From ctx's inputs (q, k, v and an optional mask), output and attributes (k_transposed,
// layout). A mismatch is the fusion pass's bug: INTERNAL.
cpu::AttentionShape attention_shape(const LowerContext& ctx);

}  // namespace maxc

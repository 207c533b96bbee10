// The compile pipeline of DESIGN §4, one pass per file, run in this order by compile().
// Each pass rewrites the Program in place and keeps it valid: topological, typed, every
// output still produced.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "compiler/program.h"

namespace maxc {

struct CompileOptions {
  bool fuse = true;                    // pattern and elementwise fusion
  bool fold_constants = true;
  uint64_t fold_limit_bytes = 1 << 20;  // larger results stay computed at run time
  // Runs one node on constant inputs (the engine passes its CPU executor; the compiler
  // does not know kernels). Returns the outputs' data, or an empty vector to decline.
  std::function<std::vector<Constant>(const Node&, const Program&, std::span<const Constant* const>)> evaluate;
  // Whether the target device has a kernel for a fused op ("attention", "fused_matmul",
  // "add_layer_norm", "fused_conv2d", "fused_elementwise"): a pattern whose fused op it lacks
  // stays unfused, in ops it has. Empty: every fused op is available (the CPU).
  std::function<bool(std::string_view op)> has_kernel;
  // Whether float32 NCHW convolutions run channels-last (convs_to_channels_last): what
  // oneDNN's fastest kernels read. The engine sets it for the CPU only, where that was
  // measured; other devices keep the graph's layout and no permutes around it.
  bool convs_channels_last = true;
};

void eliminate_dead_code(Program& p);                         // dce.cc
void eliminate_common_subexpressions(Program& p);             // cse.cc
void fold_reshapes(Program& p);                               // canonicalize.cc: reshape∘reshape, transpose∘transpose
void fold_constants(Program& p, const CompileOptions& opts);  // fold.cc
void fuse_gelu(Program& p);                                   // fuse_gelu.cc: GELU written out -> gelu
void fuse_matmul_epilogue(Program& p);                        // fuse_matmul.cc: matmul + bias + activation
void fuse_conv_epilogue(Program& p);                          // fuse_conv.cc: conv2d * scale + shift, relu
void fuse_add_layer_norm(Program& p);                         // fuse_layer_norm.cc: residual add + layer_norm
void fuse_attention(Program& p);                              // fuse_attention.cc: softmax(scale·QKᵀ + mask)·V
void fuse_elementwise(Program& p);                            // fuse_elementwise.cc: chains into one loop
void convs_to_channels_last(Program& p);                       // channels_last.cc: CNNs in NHWC

// verify → program → canonicalize → fold: what every device's program starts from.
Program prepare_program(const Graph& graph, const CompileOptions& opts);
// Pattern and elementwise fusion into the fused ops the target has (opts.has_kernel) → DCE.
void fuse_program(Program& p, const CompileOptions& opts);
// prepare_program then fuse_program.
Program compile_program(const Graph& graph, const CompileOptions& opts);

}  // namespace maxc

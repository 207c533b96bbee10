#include "base/log.h"
#include "compiler/passes.h"

namespace maxc {

Program compile_program(const Graph& graph, const CompileOptions& opts) {
  graph.verify();
  Program p = program_from_graph(graph);
  fold_reshapes(p);
  eliminate_common_subexpressions(p);
  eliminate_dead_code(p);
  fold_constants(p, opts);
  eliminate_dead_code(p);
  if (opts.fuse) {
    fuse_gelu(p);
    fuse_attention(p);
    fuse_matmul_epilogue(p);
    fuse_conv_epilogue(p);
    fuse_add_layer_norm(p);
    fuse_elementwise(p);
    block_conv_channels(p);
    eliminate_dead_code(p);
  }
  MAXC_LOG(kDebug, "compiled graph '", graph.name(), "':\n", p.to_string());
  return p;
}

}  // namespace maxc

#include "base/log.h"
#include "compiler/passes.h"
#include "compiler/stages.h"

namespace maxc {

namespace {

void simplify(Program& p, const CompileOptions& opts) {
  fold_reshapes(p);
  eliminate_common_subexpressions(p);
  eliminate_dead_code(p);
  fold_constants(p, opts);
  eliminate_dead_code(p);
  for_each_region(p, [&opts](Program& r) { simplify(r, opts); });
}

}  // namespace

Program prepare_program(const Graph& graph, const CompileOptions& opts) {
  graph.verify();
  Program p = program_from_graph(graph);
  simplify(p, opts);
  add_symbol_sources(p);
  return p;
}

void fuse_program(Program& p, const CompileOptions& opts) {
  if (!opts.fuse) return;
  for_each_region(p, [&opts](Program& r) { fuse_program(r, opts); });
  const auto has = [&opts](std::string_view op) { return !opts.has_kernel || opts.has_kernel(op); };
  fuse_gelu(p);  // makes a registry op, which every device has
  if (has("attention")) fuse_attention(p);
  if (has("fused_matmul")) fuse_matmul_epilogue(p);
  if (has("fused_conv2d")) fuse_conv_epilogue(p);
  if (has("add_layer_norm")) fuse_add_layer_norm(p);
  if (has("fused_elementwise")) fuse_elementwise(p);
  if (opts.convs_channels_last && has("fused_conv2d")) convs_to_channels_last(p);
  eliminate_dead_code(p);
}

Program compile_program(const Graph& graph, const CompileOptions& opts) {
  Program p = prepare_program(graph, opts);
  fuse_program(p, opts);
  MAXC_LOG(kDebug, "compiled graph '", graph.name(), "':\n", p.to_string());
  return p;
}

}  // namespace maxc

// constant and constant_external (inventory §5.14).
//
// constant: the data lives in the graph's constant table (Graph::add_constant); the op holds
// only its `index` there, so the type has one source: the table entry.
// constant_external: a named weight, bound when the model is loaded. Its attributes carry
// the whole type; Graph keeps one value per name (same name and type = the same weight).
#include "graph/op_registry.h"
#include "graph/ops/ops.h"

namespace maxc {
namespace {

std::vector<TensorType> infer_constant(const InferContext& ctx) {
  int64_t index = ctx.attr<int64_t>("index");
  const Constant* c = ctx.graph_constant(index);
  if (!c) ctx.fail("attribute 'index' is ", index, " but the graph has no constant at that index");
  return {c->type};
}

std::vector<TensorType> infer_constant_external(const InferContext& ctx) {
  if (ctx.attr<std::string>("name").empty()) ctx.fail("attribute 'name' is empty; a weight needs a name");
  TensorType out{ctx.attr<DType>("dtype"), ctx.attr<std::vector<Dim>>("shape"), ctx.attr<DeviceRef>("device")};
  out.validate(str_cat(ctx.op_label(), ": weight '", ctx.attr<std::string>("name"), "'"));
  return {out};
}

}  // namespace

void register_constant_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "constant",
                 .attrs = {AttrSpec::required("index", AttrKind::kInt)},
                 .infer = infer_constant});
  r.add(OpSchema{.name = "constant_external",
                 .attrs = {AttrSpec::required("name", AttrKind::kString), AttrSpec::required("dtype", AttrKind::kDType),
                           AttrSpec::required("shape", AttrKind::kDims),
                           AttrSpec::with_default("device", DeviceRef::cpu())},
                 .infer = infer_constant_external});
}

}  // namespace maxc

// Block-quantized ops (inventory §5.9): dequantize and qmatmul. A quantized tensor is uint8
// [..., row_bytes], each row row_bytes / block_bytes blocks of the encoding that the string
// attribute "encoding" names ("q4_k", as MAX's QuantizationEncoding.name; base/quant_encoding.h).
// The bytes per row must be static: a weight's encoded width is known when the graph is built.
#include <string>

#include "base/quant_encoding.h"
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/ops/shape_checks.h"

namespace maxc {
namespace {

std::string encoding_names() {
  std::string names;
  for (QuantEncoding e : {QuantEncoding::kQ4_0, QuantEncoding::kQ4_K, QuantEncoding::kQ5_K, QuantEncoding::kQ6_K,
                          QuantEncoding::kQ8_0})
    names += (names.empty() ? "" : ", ") + std::string(quant_encoding_name(e));
  return names;
}

const QuantEncodingInfo& encoding_of(const InferContext& ctx) {
  const std::string& name = ctx.attr<std::string>("encoding");
  const std::optional<QuantEncoding> e = quant_encoding_from_name(name);
  if (!e)
    ctx.fail("attribute 'encoding' is '", name, "', which is not a quantization encoding; valid: ", encoding_names());
  return *quant_encoding_info(*e);
}

// The logical elements in one row of the quantized input `input` (its last dim in bytes).
int64_t row_elements(const InferContext& ctx, size_t input, const QuantEncodingInfo& info) {
  const TensorType& t = ctx.input(input);
  if (t.dtype != DType::kUInt8)
    ctx.fail(ctx.input_label(input), " holds ", info.name, " blocks and must be uint8, got ", dtype_name(t.dtype));
  require_min_rank(ctx, input, 1);
  const Dim& bytes = t.dims.back();
  if (!bytes.is_static())
    ctx.fail("the last dim of ", ctx.input_label(input), " (bytes per row) must be static, got ", bytes);
  const int64_t n = bytes.static_value();
  if (n % info.block_bytes != 0)
    ctx.fail("the last dim of ", ctx.input_label(input), " is ", n, " bytes, not a multiple of ", info.name,
             "'s block of ", info.block_bytes, " bytes");
  return n / info.block_bytes * info.elements_per_block;
}

// dequantize(quantized uint8 [..., row_bytes]) -> float32 [..., k].
std::vector<TensorType> infer_dequantize(const InferContext& ctx) {
  const QuantEncodingInfo& info = encoding_of(ctx);
  const int64_t k = row_elements(ctx, 0, info);
  const TensorType& in = ctx.input(0);
  return {TensorType{DType::kFloat32, with_dim(in.dims, in.rank() - 1, Dim(k)), in.device}};
}

// qmatmul(lhs float32 [..., K], rhs uint8 [N, row_bytes]) -> float32 [..., N]: the rhs is
// pre-transposed, one encoded row of K elements per output column.
std::vector<TensorType> infer_qmatmul(const InferContext& ctx) {
  const QuantEncodingInfo& info = encoding_of(ctx);
  const TensorType& lhs = ctx.input(0);
  if (lhs.dtype != DType::kFloat32) ctx.fail(ctx.input_label(0), " must be float32, got ", dtype_name(lhs.dtype));
  require_min_rank(ctx, 0, 1);
  require_rank(ctx, 1, 2);
  const DeviceRef device = common_device(ctx);
  const int64_t k = row_elements(ctx, 1, info);
  require_equal_dims(ctx, lhs.dims.back(), "the last dim (K) of " + ctx.input_label(0), Dim(k),
                     "the elements per row of " + ctx.input_label(1) + " as " + info.name);
  return {TensorType{DType::kFloat32, with_dim(lhs.dims, lhs.rank() - 1, ctx.input(1).dims[0]), device}};
}

}  // namespace

void register_quantized_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "dequantize",
                 .inputs = {{"quantized"}},
                 .attrs = {AttrSpec::required("encoding", AttrKind::kString)},
                 .infer = infer_dequantize});
  r.add(OpSchema{.name = "qmatmul",
                 .inputs = {{"lhs"}, {"rhs"}},
                 .attrs = {AttrSpec::required("encoding", AttrKind::kString)},
                 .infer = infer_qmatmul});
}

}  // namespace maxc

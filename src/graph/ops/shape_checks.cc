#include "graph/ops/shape_checks.h"

namespace maxc {

void require_rank(const InferContext& ctx, size_t input, int64_t rank) {
  const TensorType& t = ctx.input(input);
  if (t.rank() != rank)
    ctx.fail(ctx.input_label(input), " must have rank ", rank, ", got rank ", t.rank(), " ", dims_to_string(t.dims));
}

void require_min_rank(const InferContext& ctx, size_t input, int64_t min_rank) {
  const TensorType& t = ctx.input(input);
  if (t.rank() < min_rank)
    ctx.fail(ctx.input_label(input), " must have rank >= ", min_rank, ", got rank ", t.rank(), " ",
             dims_to_string(t.dims));
}

void require_equal_dims(const InferContext& ctx, const Dim& a, std::string_view what_a, const Dim& b,
                        std::string_view what_b) {
  if (!(a == b)) ctx.fail(what_a, " is ", a, " but ", what_b, " is ", b, "; they must be equal");
}

void require_shape(const InferContext& ctx, size_t input, const std::vector<Dim>& dims, std::string_view why) {
  const TensorType& t = ctx.input(input);
  if (t.dims != dims)
    ctx.fail(ctx.input_label(input), " has shape ", dims_to_string(t.dims), " but must be ", dims_to_string(dims),
             " (", why, ")");
}

const std::vector<int64_t>& ints_attr_of_size(const InferContext& ctx, std::string_view name, size_t n) {
  const auto& values = ctx.attr<std::vector<int64_t>>(name);
  if (values.size() != n)
    ctx.fail("attribute '", name, "' must have ", n, " entries, got ", values.size(), " ", ints_to_string(values));
  return values;
}

void require_ints_at_least(const InferContext& ctx, std::string_view name, const std::vector<int64_t>& values,
                           int64_t min) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < min)
      ctx.fail("attribute '", name, "' ", ints_to_string(values), " has ", values[i], " at entry ", i,
               "; entries must be >= ", min);
  }
}

void require_non_negative_dims(const InferContext& ctx, std::string_view name, const std::vector<Dim>& dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].is_static() && dims[i].static_value() < 0)
      ctx.fail("attribute '", name, "' ", dims_to_string(dims), " has the negative dim ", dims[i], " at entry ", i);
  }
}

std::optional<Dim> exact_div(const Dim& a, const Dim& b) {
  if (b == Dim(0)) return std::nullopt;
  Dim q = floordiv(a, b);
  if (q * b == a) return q;
  return std::nullopt;
}

std::vector<Dim> with_dim(const std::vector<Dim>& dims, int64_t axis, const Dim& d) {
  std::vector<Dim> out = dims;
  out[static_cast<size_t>(axis)] = d;
  return out;
}

std::string ints_to_string(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

}  // namespace maxc

// Shape checks shared by the structural op families (reductions, normalization, linalg,
// shape, indexing, conv). Like checks.h, each throws through ctx.fail, so every message starts
// with the op's name and names the input or attribute at fault.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/op_schema.h"

namespace maxc {

// "op 'matmul': input 0 'lhs' must have rank 2, got rank 1 [k]".
void require_rank(const InferContext& ctx, size_t input, int64_t rank);
// "op 'band_part': input 0 'x' must have rank >= 2, got rank 1 [n]".
void require_min_rank(const InferContext& ctx, size_t input, int64_t min_rank);

// `a` and `b` must be the same dim (structurally: the graph cannot prove anything weaker).
// "<what_a> is <a> but <what_b> is <b>; they must be equal".
void require_equal_dims(const InferContext& ctx, const Dim& a, std::string_view what_a, const Dim& b,
                        std::string_view what_b);

// Input `input` must have the shape `dims`; `why` says where the expectation comes from
// ("the last dim of input 0 'input'").
void require_shape(const InferContext& ctx, size_t input, const std::vector<Dim>& dims, std::string_view why);

// The int-list attribute `name`, which must hold exactly `n` entries.
const std::vector<int64_t>& ints_attr_of_size(const InferContext& ctx, std::string_view name, size_t n);

// Every entry of the int-list attribute `name` must be >= `min` (0 or 1).
void require_ints_at_least(const InferContext& ctx, std::string_view name, const std::vector<int64_t>& values,
                           int64_t min);

// Every static dim in `dims` (a dims attribute called `name`) must be >= 0.
void require_non_negative_dims(const InferContext& ctx, std::string_view name, const std::vector<Dim>& dims);

// a / b when the graph can prove b divides a exactly (floordiv(a, b) * b == a), else nullopt.
std::optional<Dim> exact_div(const Dim& a, const Dim& b);

// The dims of `t` with the one at `axis` replaced by `d`.
std::vector<Dim> with_dim(const std::vector<Dim>& dims, int64_t axis, const Dim& d);

std::string ints_to_string(const std::vector<int64_t>& values);  // "[1, 2]"

}  // namespace maxc

// Small shape arithmetic the lowerings share: element widths, extents of dim ranges, axes.
#pragma once

#include <algorithm>
#include <utility>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/lowering.h"

namespace maxc {

// Element width in bytes for kernels that move elements as opaque words; sub-byte dtypes
// (float4) have no such kernel.
inline int32_t element_bytes(const LowerContext& ctx, DType dtype) {
  const int32_t bits = dtype_size_in_bits(dtype);
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    ctx.unsupported("dtype ", dtype_label(dtype), " (", bits, "-bit elements)");
  return bits / 8;
}

// The product of dims[begin, end) (1 when empty).
inline int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) n *= dims[i];
  return n;
}

// An axis attribute made non-negative. The schema has checked it, so a bad one is our bug
// (INTERNAL). Rank 0 accepts axis 0 and -1.
inline int64_t axis_in(const LowerContext& ctx, int64_t axis, int64_t rank, std::string_view what = "axis") {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max<int64_t>(rank, 1))
    fail(Code::kInternal, ctx.op_label(), ": ", what, " ", axis, " is out of range for rank ", rank);
  return a;
}

// The input's dims around its `axis` attribute: [outer..., n, inner...]. INVALID_ARGUMENT for
// an axis outside the input's rank.
struct AxisSplit {
  int64_t axis = 0;
  int64_t outer = 1, n = 1, inner = 1;
};

inline AxisSplit split_at_axis(const LowerContext& ctx, const Shape& in) {
  AxisSplit s;
  s.axis = ctx.attr<int64_t>("axis");
  if (s.axis < 0) s.axis += in.rank();
  if (s.axis < 0 || s.axis >= in.rank())
    fail(Code::kInvalidArgument, ctx.op_label(), ": attribute 'axis' is ", ctx.attr<int64_t>("axis"),
         ", out of range for input ", in.to_string());
  const size_t a = static_cast<size_t>(s.axis);
  s.outer = product(in.dims, 0, a);
  s.n = in.dims[a];
  s.inner = product(in.dims, a + 1, in.dims.size());
  return s;
}

// `in` with its `axis` dim replaced by `extent`, of `dtype`.
inline Shape with_axis(const Shape& in, int64_t axis, int64_t extent, DType dtype) {
  Shape out{dtype, in.dims};
  out.dims[static_cast<size_t>(axis)] = extent;
  return out;
}

// The schema's shape inference and the lowering must agree; a mismatch is our bug (INTERNAL).
inline void expect_output(const LowerContext& ctx, size_t i, const Shape& expected) {
  if (ctx.outputs.size() <= i || ctx.outputs[i] != expected)
    fail(Code::kInternal, ctx.op_label(), ": output ", i, " is ",
         ctx.outputs.size() > i ? ctx.outputs[i].to_string() : std::string("missing"), ", expected ",
         expected.to_string());
}

// The input as [rows, d] over its last dim; every parameter input (from `first_param` on)
// must hold d elements of the input's dtype.
struct Rows {
  int64_t rows = 0, d = 0;
};

inline Rows rows_over_last_dim(const LowerContext& ctx, size_t first_param) {
  const Shape& in = ctx.inputs[0];
  if (in.rank() < 1) fail(Code::kInvalidArgument, ctx.op_label(), ": input ", in.to_string(), " has no last dim");
  Rows r;
  r.d = in.dims.back();
  r.rows = r.d == 0 ? 0 : in.num_elements() / r.d;
  for (size_t i = first_param; i < ctx.inputs.size(); ++i) {
    const Shape& p = ctx.inputs[i];
    if (p.dtype != in.dtype || p.num_elements() != r.d)
      fail(Code::kInvalidArgument, ctx.op_label(), ": input ", i, " is ", p.to_string(), " but must hold ", r.d,
           " elements of ", dtype_name(in.dtype), " (the last dim of input 0 ", in.to_string(), ")");
  }
  return r;
}

// transpose's permutation of the input's axes: the identity with axis_1 and axis_2 swapped.
inline std::vector<int64_t> transpose_permutation(const LowerContext& ctx) {
  const int64_t rank = ctx.inputs[0].rank();
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
  if (rank > 0) {
    const int64_t a = axis_in(ctx, ctx.attr<int64_t>("axis_1"), rank, "attribute 'axis_1'");
    const int64_t b = axis_in(ctx, ctx.attr<int64_t>("axis_2"), rank, "attribute 'axis_2'");
    std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  }
  return perm;
}

// top_k's `k` attribute, checked against the split axis, with the outputs' shapes checked:
// the values (in's dtype) and their int64 positions, both with k along the axis.
inline int64_t top_k_extent(const LowerContext& ctx, const Shape& in, const AxisSplit& s) {
  const int64_t k = ctx.attr<int64_t>("k");
  if (k < 0 || k > s.n)
    fail(Code::kInvalidArgument, ctx.op_label(), ": attribute 'k' is ", k, " but axis ", s.axis, " of input ",
         in.to_string(), " has ", s.n, " elements");
  expect_output(ctx, 0, with_axis(in, s.axis, k, in.dtype));
  expect_output(ctx, 1, with_axis(in, s.axis, k, DType::kInt64));
  return k;
}

// The element strides of a dense `operand` read in `target`'s shape under numpy's
// broadcasting: right-aligned, 0 where it broadcasts. The schema has checked that it does, so
// a failure is INTERNAL, naming the operand as `what` and the target as `target_name`.
inline std::vector<int64_t> broadcast_strides(const LowerContext& ctx, const Shape& operand,
                                              const std::vector<int64_t>& target, std::string_view what,
                                              std::string_view target_name) {
  const size_t rank = target.size();
  if (operand.dims.size() > rank)
    fail(Code::kInternal, ctx.op_label(), ": ", what, " ", operand.to_string(), " has more dims than ", target_name);
  std::vector<int64_t> dims(rank - operand.dims.size(), 1);
  dims.insert(dims.end(), operand.dims.begin(), operand.dims.end());
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    if (dims[i] != 1 && dims[i] != target[i])
      fail(Code::kInternal, ctx.op_label(), ": ", what, " ", operand.to_string(), " does not broadcast to ", target_name);
    strides[i] = dims[i] == 1 ? 0 : stride;
    stride *= dims[i];
  }
  return strides;
}

}  // namespace maxc

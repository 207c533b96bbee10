#include "kernels/cpu/matmul_shape.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace maxc::cpu {
namespace {

// Which operands follow the result along a batch dim (the others are broadcast there).
struct Follows {
  bool lhs, rhs;
  bool operator==(const Follows&) const = default;
};

int64_t offset_in(const std::vector<int64_t>& out, const std::vector<int64_t>& operand, int64_t b, int64_t matrix) {
  int64_t offset = 0, stride = matrix;
  for (size_t i = out.size(); i-- > 0;) {
    const int64_t index = b % out[i];
    b /= out[i];
    if (operand[i] != 1) offset += index * stride;
    stride *= operand[i];
  }
  return offset;
}

std::string dims_text(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

int64_t MatmulDims::batch_count() const {
  int64_t count = 1;
  for (int64_t d : out_batch) count *= d;
  return count;
}

int64_t MatmulDims::lhs_offset(int64_t b) const { return offset_in(out_batch, lhs_batch, b, m * k); }
int64_t MatmulDims::rhs_offset(int64_t b) const { return offset_in(out_batch, rhs_batch, b, k * n); }

MatmulDims matmul_dims(std::span<const int64_t> lhs, std::span<const int64_t> rhs) {
  if (lhs.empty() || rhs.empty())
    fail(Code::kInvalidArgument, "matmul of ", dims_text(lhs), " and ", dims_text(rhs), ": operands must have rank >= 1");
  std::vector<int64_t> a(lhs.begin(), lhs.end()), b(rhs.begin(), rhs.end());
  if (a.size() == 1) a = {1, a[0]};
  if (b.size() == 1) b = {b[0], 1};
  MatmulDims d;
  d.m = a[a.size() - 2];
  d.k = a.back();
  d.n = b.back();
  if (b[b.size() - 2] != d.k)
    fail(Code::kInvalidArgument, "matmul of ", dims_text(lhs), " and ", dims_text(rhs), ": inner dims differ");
  a.resize(a.size() - 2);
  b.resize(b.size() - 2);
  const size_t rank = std::max(a.size(), b.size());
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);

  Follows previous{false, false};
  for (size_t i = 0; i < rank; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1)
      fail(Code::kInvalidArgument, "matmul of ", dims_text(lhs), " and ", dims_text(rhs), ": batch dim ", i,
           " does not broadcast (", a[i], " vs ", b[i], ")");
    const int64_t out = a[i] == 1 ? b[i] : a[i];
    if (out == 1) continue;  // a size-1 result dim indexes nothing
    const Follows follows{a[i] == out, b[i] == out};
    if (!d.out_batch.empty() && follows == previous) {
      d.out_batch.back() *= out;
      if (follows.lhs) d.lhs_batch.back() *= out;
      if (follows.rhs) d.rhs_batch.back() *= out;
    } else {
      d.out_batch.push_back(out);
      d.lhs_batch.push_back(follows.lhs ? out : 1);
      d.rhs_batch.push_back(follows.rhs ? out : 1);
    }
    previous = follows;
  }
  // Batches over the lhs only are just more rows of one product: [B, M, K] rows are contiguous.
  if (d.out_batch.size() == 1 && d.rhs_batch[0] == 1) {
    d.m *= d.out_batch[0];
    d.out_batch.clear(), d.lhs_batch.clear(), d.rhs_batch.clear();
  }
  return d;
}

}  // namespace maxc::cpu

#include "kernels/cpu/copy.h"

#include <algorithm>
#include <cstring>

#include "base/checked_math.h"
#include "base/error.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/transpose.h"

namespace maxc::cpu {
namespace {

// The source offset of consecutive positions of an odometer over some axes: set once per
// thread chunk by division, then advanced by carries.
class Cursor {
 public:
  Cursor(std::vector<int64_t> dims, std::vector<int64_t> strides, int64_t first)
      : dims_(std::move(dims)), strides_(std::move(strides)), index_(dims_.size(), 0) {
    for (size_t i = dims_.size(); i-- > 0;) {
      index_[i] = first % dims_[i];
      first /= dims_[i];
      offset_ += index_[i] * strides_[i];
    }
  }
  int64_t offset() const { return offset_; }
  void next() {
    for (size_t i = dims_.size(); i-- > 0;) {
      offset_ += strides_[i];
      if (++index_[i] < dims_[i]) return;
      offset_ -= strides_[i] * dims_[i];
      index_[i] = 0;
    }
  }

 private:
  std::vector<int64_t> dims_, strides_, index_;
  int64_t offset_ = 0;
};

template <typename T>
void gather_row(const T* src, int64_t stride, T* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

template <typename T>
void fill_row(const T* src, T* dst, int64_t n) {
  std::fill(dst, dst + n, *src);
}

// Calls row(src_row, dst_row, row_len) for every row of the output (all axes but the last),
// in parallel chunks.
template <typename RowFn>
void for_each_row(const StridedCopy& p, const uint8_t* src, uint8_t* dst, RowFn&& row) {
  const int64_t n = p.dims.back(), w = p.elem_bytes;
  const int64_t rows = p.num_elements / n;
  std::vector<int64_t> outer_dims(p.dims.begin(), p.dims.end() - 1);
  std::vector<int64_t> outer_strides(p.src_strides.begin(), p.src_strides.end() - 1);
  parallel_for(rows, n, [&](int64_t begin, int64_t end) {
    Cursor c(outer_dims, outer_strides, begin);
    for (int64_t r = begin; r < end; ++r, c.next()) row(src + (p.src_offset + c.offset()) * w, dst + r * n * w, n);
  });
}

template <typename T>
void rows_typed(const StridedCopy& p, const uint8_t* src, uint8_t* dst) {
  const int64_t stride = p.src_strides.back();
  if (p.kind == StridedCopy::Kind::kFillRows) {
    for_each_row(p, src, dst, [](const uint8_t* s, uint8_t* d, int64_t n) {
      fill_row(reinterpret_cast<const T*>(s), reinterpret_cast<T*>(d), n);
    });
  } else {
    for_each_row(p, src, dst, [stride](const uint8_t* s, uint8_t* d, int64_t n) {
      gather_row(reinterpret_cast<const T*>(s), stride, reinterpret_cast<T*>(d), n);
    });
  }
}

void rows_by_width(const StridedCopy& p, const uint8_t* src, uint8_t* dst) {
  switch (p.elem_bytes) {
    case 1: return rows_typed<uint8_t>(p, src, dst);
    case 2: return rows_typed<uint16_t>(p, src, dst);
    case 4: return rows_typed<uint32_t>(p, src, dst);
    default: return rows_typed<uint64_t>(p, src, dst);
  }
}

// Output axes L (last, contiguous in dst) and j (contiguous in src) form the planes; every
// other axis is an outer loop. Work items are (outer position, tile row range of j).
void transpose_copy(const StridedCopy& p, const uint8_t* src, uint8_t* dst) {
  const size_t rank = p.dims.size(), j = static_cast<size_t>(p.transpose_axis), last = rank - 1;
  const std::vector<int64_t> dst_strides = dense_strides(p.dims);
  std::vector<int64_t> outer_dims, outer_src, outer_dst;
  for (size_t i = 0; i < last; ++i) {
    if (i == j) continue;
    outer_dims.push_back(p.dims[i]);
    outer_src.push_back(p.src_strides[i]);
    outer_dst.push_back(dst_strides[i]);
  }
  const int64_t na = p.dims[j], nb = p.dims[last], w = p.elem_bytes;
  const int64_t src_ld = p.src_strides[last], dst_ld = dst_strides[j];
  const int64_t tiles = (na + kTransposeTile - 1) / kTransposeTile;
  const int64_t outer = p.num_elements / (na * nb);
  // A chunk's consecutive tiles of one plane go in one call, whose strips then walk the whole
  // range: a call per 32-row tile keeps every source row of the plane in flight at once
  // (NCHW -> NHWC over 64 channels ran 2-3x slower that way).
  parallel_for(outer * tiles, kTransposeTile * nb, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end;) {
      const int64_t o = item / tiles, next = std::min(end, (o + 1) * tiles);
      const int64_t a0 = (item - o * tiles) * kTransposeTile, a1 = std::min((next - o * tiles) * kTransposeTile, na);
      int64_t so = p.src_offset, d = 0, rest = o;
      for (size_t i = outer_dims.size(); i-- > 0;) {
        const int64_t idx = rest % outer_dims[i];
        rest /= outer_dims[i];
        so += idx * outer_src[i];
        d += idx * outer_dst[i];
      }
      transpose_plane(src + (so + a0) * w, src_ld, dst + (d + a0 * dst_ld) * w, dst_ld, a1 - a0, nb, p.elem_bytes);
      item = next;
    }
  });
}

void contiguous_copy(const uint8_t* src, uint8_t* dst, int64_t bytes) {
  constexpr int64_t kChunk = 64 * 1024;  // below two chunks a second thread costs more than it saves
  const int64_t chunks = (bytes + kChunk - 1) / kChunk;
  if (chunks < 2) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return;
  }
  parallel_for(chunks, kMinWorkPerThread, [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * kChunk, hi = std::min(end * kChunk, bytes);
    std::memcpy(dst + lo, src + lo, static_cast<size_t>(hi - lo));
  });
}

}  // namespace

// Callers pass dims within the element limit (a checked_product), so no stride overflows.
std::vector<int64_t> dense_strides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

StridedCopy plan_strided_copy(int32_t elem_bytes, std::span<const int64_t> dims, std::span<const int64_t> src_strides,
                              int64_t src_offset) {
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8)
    fail(Code::kInternal, "strided copy: element width ", elem_bytes, " bytes is not 1, 2, 4 or 8");
  if (dims.size() != src_strides.size())
    fail(Code::kInternal, "strided copy: ", dims.size(), " dims but ", src_strides.size(), " strides");
  StridedCopy p;
  p.elem_bytes = elem_bytes;
  p.src_offset = src_offset;
  // The engine only plans shapes within the element limit; one past it here would wrap the
  // count and every offset computed from it.
  const std::optional<int64_t> count = checked_product(dims);
  if (!count) fail(Code::kInvalidArgument, "strided copy: output dims multiply to more than ", kMaxElements, " elements");
  p.num_elements = *count;
  if (p.num_elements == 0) return p;

  // Drop size-1 axes; merge an axis into its outer neighbour when the pair walks the source
  // like one axis (outer stride == inner stride * inner dim).
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    const std::optional<int64_t> walked = checked_mul(src_strides[i], dims[i]);
    if (!p.dims.empty() && walked && p.src_strides.back() == *walked) {
      p.dims.back() *= dims[i];
      p.src_strides.back() = src_strides[i];
    } else {
      p.dims.push_back(dims[i]);
      p.src_strides.push_back(src_strides[i]);
    }
  }
  if (p.dims.empty()) {  // one element
    p.dims = {1};
    p.src_strides = {1};
  }
  const int64_t inner = p.src_strides.back();
  if (inner == 1) {
    p.kind = p.dims.size() == 1 ? StridedCopy::Kind::kContiguous : StridedCopy::Kind::kRows;
  } else if (inner == 0) {
    p.kind = StridedCopy::Kind::kFillRows;
  } else {
    p.kind = StridedCopy::Kind::kGather;
    for (size_t i = 0; i + 1 < p.dims.size(); ++i) {
      if (p.src_strides[i] == 1) {
        p.kind = StridedCopy::Kind::kTranspose;
        p.transpose_axis = static_cast<int32_t>(i);
      }
    }
  }
  return p;
}

void strided_copy(const StridedCopy& p, const void* src_v, void* dst_v) {
  const auto* src = static_cast<const uint8_t*>(src_v);
  auto* dst = static_cast<uint8_t*>(dst_v);
  const int64_t w = p.elem_bytes;
  switch (p.kind) {
    case StridedCopy::Kind::kEmpty:
      return;
    case StridedCopy::Kind::kContiguous:
      return contiguous_copy(src + p.src_offset * w, dst, p.num_elements * w);
    case StridedCopy::Kind::kRows:
      // Short rows go element by element: a memcpy call per few bytes costs more than the copy.
      if (p.dims.back() * w < 64) return rows_by_width(p, src, dst);
      return for_each_row(p, src, dst, [w](const uint8_t* s, uint8_t* d, int64_t n) {
        std::memcpy(d, s, static_cast<size_t>(n * w));
      });
    case StridedCopy::Kind::kFillRows:
    case StridedCopy::Kind::kGather:
      return rows_by_width(p, src, dst);
    case StridedCopy::Kind::kTranspose:
      return transpose_copy(p, src, dst);
  }
}

void fill_elements(void* dst, int64_t count, int32_t elem_bytes, uint64_t pattern) {
  switch (elem_bytes) {
    case 1: {
      std::memset(dst, static_cast<int>(pattern & 0xff), static_cast<size_t>(count));
      return;
    }
    case 2: {
      auto* d = static_cast<uint16_t*>(dst);
      std::fill(d, d + count, static_cast<uint16_t>(pattern));
      return;
    }
    case 4: {
      auto* d = static_cast<uint32_t*>(dst);
      std::fill(d, d + count, static_cast<uint32_t>(pattern));
      return;
    }
    default: {
      auto* d = static_cast<uint64_t*>(dst);
      std::fill(d, d + count, pattern);
      return;
    }
  }
}

}  // namespace maxc::cpu

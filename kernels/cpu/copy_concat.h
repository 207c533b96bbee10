// concat, stack, split and chunk: along one axis, a dense tensor is `outer` rows, each the
// concatenation of every part's row (part i's row being its extent along the axis times
// everything inside). The kernels copy rows between the parts and the whole.
#pragma once

#include <cstdint>
#include <span>

namespace maxc::cpu {

// dst row r = parts[0] row r ++ parts[1] row r ++ ...; part i's rows are row_bytes[i] long.
void concat_rows(std::span<const void* const> parts, std::span<const int64_t> row_bytes, int64_t outer, void* dst);

// The inverse: part i's row r is the slice of src row r at the offset of the parts before it.
void split_rows(const void* src, int64_t outer, std::span<void* const> parts, std::span<const int64_t> row_bytes);

}  // namespace maxc::cpu

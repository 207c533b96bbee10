// The machine's memory read bandwidth, measured: every thread streams its share of an array
// far larger than the caches, which is what a memory-bound kernel (a matrix-vector product
// over weights that live in DRAM) can at most get.
#pragma once

#include <cstddef>

namespace bench {

// GB/s of `threads` threads reading `bytes` bytes together, best of `passes`.
double measured_read_gbps(int threads, size_t bytes, int passes);

}  // namespace bench

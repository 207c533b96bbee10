// The oneDNN side of the CPU kernels (DESIGN §5): one engine for the process, one stream per
// calling thread, and the translations between our types and errors and oneDNN's.
//
// Primitives are created when a node is lowered and shared by every concurrent execute of
// its plan; oneDNN allows one primitive to run on several threads at once as long as each
// call brings its own memory objects, stream and scratchpad, which is what the callers do.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <string>
#include <string_view>

#include "base/dtype.h"
#include "base/error.h"

namespace maxc::cpu {

// Both also give the calling thread an OpenMP team of one, so that oneDNN creates and runs
// every primitive on the calling thread alone (see dnnl_engine.cc).
const dnnl::engine& dnnl_engine();

// The calling thread's stream. CPU streams of the OpenMP runtime execute synchronously, so a
// stream is only a handle; keeping one per thread avoids creating it on every call.
dnnl::stream& dnnl_stream();

// oneDNN's data type for `dtype`, or data_type::undef when oneDNN has none.
dnnl::memory::data_type dnnl_data_type(DType dtype);

// Strides of a dense row-major tensor with `dims`.
dnnl::memory::dims dense_strides(const dnnl::memory::dims& dims);

// A descriptor of dense row-major memory.
dnnl::memory::desc dense_desc(const dnnl::memory::dims& dims, dnnl::memory::data_type type);

// A blocked memory layout in full (padded dims, strides, inner blocks), as a key: two kernels
// share a weight's packed copy only when they read the same layout.
std::string layout_key(const dnnl::memory::desc& d);

// Runs reorder `r` from `from` to `to` on the calling thread's stream, with its scratchpad
// (`pad`) in `scratchpad` when it needs one; waits for it.
void run_reorder(const dnnl::reorder& r, const dnnl::memory::desc& pad, const dnnl::memory& from,
                 const dnnl::memory& to, void* scratchpad);

// What oneDNN is handed, checked first. oneDNN 2.6 keeps some extents of its CPU kernels in
// int and divides by them while it plans (an input of [2^40, 4] truncated M to 0 and divided
// by zero inside the matmul's blocking, killing the process at compile). So it only ever sees
// tensors whose dims are each in [1, kDnnlMaxExtent] and whose element count is at most
// kDnnlMaxExtent, and parameters (strides, pads, dilations) in [min, kDnnlMaxExtent]; anything
// else is UNIMPLEMENTED naming `what`, which the callers answer with their own kernels.
inline constexpr int64_t kDnnlMaxExtent = INT32_MAX;
void check_dnnl_tensor(std::string_view what, const dnnl::memory::dims& dims);
void check_dnnl_params(std::string_view what, const dnnl::memory::dims& values, int64_t min);

// Rethrows a oneDNN error as ours, saying what we were doing.
[[noreturn]] void fail_dnnl(Code code, std::string_view what, const dnnl::error& e);

}  // namespace maxc::cpu

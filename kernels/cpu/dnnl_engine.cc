#include "kernels/cpu/dnnl_engine.h"

#include <omp.h>

#include <algorithm>
#include <type_traits>
#include <unordered_map>

#include "base/checked_math.h"
#include "base/str_cat.h"

namespace maxc::cpu {
namespace {

std::string dims_text(const dnnl::memory::dims& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += str_cat(i ? ", " : "", dims[i]);
  return out + "]";
}

// oneDNN (Debian's, built for OpenMP) sizes its work by the calling thread's OpenMP team,
// both when a primitive is created (its partition) and when it runs. One thread, always: an
// OpenMP team is exactly what stalls a step on a shared machine (thread_pool.h), and a call
// from a pool worker would otherwise start a team of its own beside the pool. The kernels
// that call oneDNN shard their work over the pool instead. Cheap when already one.
void one_openmp_thread() {
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);
}

}  // namespace

const dnnl::engine& dnnl_engine() {
  one_openmp_thread();
  // Never destroyed: thread-local streams made from it may outlive static destructors.
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& dnnl_stream() {
  one_openmp_thread();
  thread_local dnnl::stream stream(dnnl_engine());
  return stream;
}

dnnl::memory::data_type dnnl_data_type(DType dtype) {
  using dt = dnnl::memory::data_type;
  switch (dtype) {
    case DType::kFloat32: return dt::f32;
    case DType::kFloat16: return dt::f16;
    case DType::kBFloat16: return dt::bf16;
    case DType::kInt32: return dt::s32;
    case DType::kInt8: return dt::s8;
    case DType::kUInt8: return dt::u8;
    default: return dt::undef;
  }
}

dnnl::memory::dims dense_strides(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<dnnl::memory::dim>(dims[i], 1);
  return strides;
}

dnnl::memory::desc dense_desc(const dnnl::memory::dims& dims, dnnl::memory::data_type type) {
  return dnnl::memory::desc(dims, type, dense_strides(dims));
}

std::string layout_key(const dnnl::memory::desc& d) {
  const dnnl_memory_desc_t& c = d.data;
  const auto& b = c.format_desc.blocking;
  std::string key;
  for (int i = 0; i < c.ndims; ++i) key += str_cat(i ? " " : "", c.padded_dims[i], ":", b.strides[i]);
  for (int i = 0; i < b.inner_nblks; ++i) key += str_cat(" ", b.inner_idxs[i], "x", b.inner_blks[i]);
  return key;
}

void run_reorder(const dnnl::reorder& r, const dnnl::memory::desc& pad, const dnnl::memory& from,
                 const dnnl::memory& to, void* scratchpad) {
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  if (pad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(pad, dnnl_engine(), scratchpad));
  dnnl::stream& stream = dnnl_stream();
  r.execute(stream, args);
  stream.wait();
}

void check_dnnl_tensor(std::string_view what, const dnnl::memory::dims& dims) {
  static_assert(std::is_same_v<dnnl::memory::dim, int64_t>);
  const std::optional<int64_t> count = checked_product(dims, kDnnlMaxExtent);
  if (!count || *count == 0)
    fail(Code::kUnimplemented, what, ": oneDNN takes dims in [1, ", kDnnlMaxExtent, "] and at most ", kDnnlMaxExtent,
         " elements, not ", dims_text(dims));
}

void check_dnnl_params(std::string_view what, const dnnl::memory::dims& values, int64_t min) {
  for (int64_t v : values)
    if (v < min || v > kDnnlMaxExtent)
      fail(Code::kUnimplemented, what, ": oneDNN takes values in [", min, ", ", kDnnlMaxExtent, "], not ",
           dims_text(values));
}

void fail_dnnl(Code code, std::string_view what, const dnnl::error& e) {
  fail(code, what, ": oneDNN status ", static_cast<int>(e.status), ": ", e.what());
}

}  // namespace maxc::cpu

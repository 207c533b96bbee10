#include "kernels/cuda/layout_catalog.h"

#include "base/error.h"
#include "base/str_cat.h"

namespace maxc::gpu {
namespace {

const char* name_of(DType d) { return dtype_label(d); }

const char* word(DType d, const char* what) {
  const char* name = word_type_name(d);
  if (!name) fail(Code::kUnimplemented, what, ": the GPU kernels do not move ", name_of(d));
  return name;
}

const char* storage(DType d, const char* what) {
  const char* name = storage_type_name(d);
  if (!name) fail(Code::kUnimplemented, what, ": the GPU kernels do not handle ", name_of(d));
  return name;
}

const char* index_type(DType d, const char* what) {
  if (!dtype_is_integral(d) || d == DType::kBool)
    fail(Code::kInvalidArgument, what, " of ", name_of(d), "; expected an integer dtype");
  return storage_type_name(d);
}

const char* reduction_functor(cpu::ScatterReduction r) {
  switch (r) {
    case cpu::ScatterReduction::kNone: return "maxc::gpu::ScatterAssign";
    case cpu::ScatterReduction::kAdd: return "maxc::gpu::ScatterAdd";
    case cpu::ScatterReduction::kMul: return "maxc::gpu::ScatterMul";
    case cpu::ScatterReduction::kMax: return "maxc::gpu::ScatterMax";
    case cpu::ScatterReduction::kMin: return "maxc::gpu::ScatterMin";
  }
  return "?";
}

// Assignment moves words; a reduction reads values.
const char* scatter_element(cpu::ScatterReduction r, DType d, const char* what) {
  return r == cpu::ScatterReduction::kNone ? word(d, what) : storage(d, what);
}

// As kernel_catalog.cc: one dtype per width for the word kernels, and the dtypes models
// compute and index with for the typed ones. Others compile on demand.
constexpr DType kWords[] = {DType::kUInt8, DType::kUInt16, DType::kFloat32, DType::kInt64};
constexpr DType kNumbers[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt64};
constexpr DType kIndices[] = {DType::kInt32, DType::kInt64};
constexpr cpu::ScatterReduction kReductions[] = {cpu::ScatterReduction::kAdd, cpu::ScatterReduction::kMul,
                                                 cpu::ScatterReduction::kMax, cpu::ScatterReduction::kMin};

}  // namespace

std::string copy_between_kernel(DType d) { return str_cat("maxc::gpu::copy_between<", word(d, "copy"), ">"); }

std::string pad_constant_kernel(DType d) { return str_cat("maxc::gpu::pad_constant<", word(d, "pad"), ">"); }

std::string band_part_kernel(DType d) { return str_cat("maxc::gpu::band_part<", word(d, "band_part"), ">"); }

std::string range_kernel(DType d) {
  if (d == DType::kBool) fail(Code::kUnimplemented, "range: the GPU kernels do not count in bool");
  return str_cat("maxc::gpu::range_fill<", storage(d, "range"), ">");
}

std::string outer_kernel(DType d) {
  if (d == DType::kBool) fail(Code::kUnimplemented, "outer: the GPU kernels do not multiply bool");
  return str_cat("maxc::gpu::outer<", storage(d, "outer"), ">");
}

std::string repeat_starts_kernel(DType count) {
  return str_cat("maxc::gpu::repeat_starts<", index_type(count, "repeat_interleave counts"), ">");
}

std::string repeat_rows_kernel(DType d) {
  return str_cat("maxc::gpu::repeat_rows<", word(d, "repeat_interleave"), ">");
}

std::string gather_nd_kernel(DType d, DType index) {
  return str_cat("maxc::gpu::gather_nd<", word(d, "gather_nd"), ", ", index_type(index, "gather_nd indices"), ">");
}

std::string scatter_kernel(cpu::ScatterReduction r, DType d, DType index) {
  return str_cat("maxc::gpu::scatter_elements<", scatter_element(r, d, "scatter"), ", ",
                 index_type(index, "scatter indices"), ", ", reduction_functor(r), ">");
}

std::string scatter_nd_kernel(cpu::ScatterReduction r, DType d, DType index) {
  return str_cat("maxc::gpu::scatter_nd<", scatter_element(r, d, "scatter_nd"), ", ",
                 index_type(index, "scatter_nd indices"), ", ", reduction_functor(r), ">");
}

std::vector<KernelFamily> layout_kernel_families() {
  KernelFamily layout{"layout.cu", {}}, gather_nd{"gather_nd.cu", {}}, scatter{"scatter.cu", {}};
  for (DType d : kWords) {
    for (const std::string& k : {copy_between_kernel(d), pad_constant_kernel(d), band_part_kernel(d),
                                 repeat_rows_kernel(d)})
      layout.instances.push_back(k);
    for (DType i : kIndices) {
      gather_nd.instances.push_back(gather_nd_kernel(d, i));
      scatter.instances.push_back(scatter_kernel(cpu::ScatterReduction::kNone, d, i));
      scatter.instances.push_back(scatter_nd_kernel(cpu::ScatterReduction::kNone, d, i));
    }
  }
  for (DType d : kNumbers) {
    layout.instances.push_back(range_kernel(d));
    layout.instances.push_back(outer_kernel(d));
  }
  for (DType i : kIndices) layout.instances.push_back(repeat_starts_kernel(i));
  for (cpu::ScatterReduction r : kReductions)
    for (DType d : {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64})
      for (DType i : kIndices) {
        scatter.instances.push_back(scatter_kernel(r, d, i));
        scatter.instances.push_back(scatter_nd_kernel(r, d, i));
      }
  return {layout, gather_nd, scatter};
}

}  // namespace maxc::gpu

#include "driver/cuda/kernel_compiler.h"

#include "base/error.h"

namespace maxc::cuda {

const std::string& CompiledKernels::lowered(const std::string& name_expression) const {
  for (const auto& [expression, symbol] : lowered_names)
    if (expression == name_expression) return symbol;
  fail(Code::kNotFound, "no compiled kernel for '", name_expression, "' (it was not in the compile request)");
}

}  // namespace maxc::cuda

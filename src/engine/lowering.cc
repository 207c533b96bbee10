#include "engine/lowering.h"

#include <mutex>

#include "base/checked_math.h"

#include "driver/device.h"
#include "engine/lower/lower.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "graph/dim.h"

namespace maxc {

// Plans only hold shapes that passed the element limit (exec_plan.cc), so a failure here is
// a lowering that made an impossible shape of its own.
int64_t Shape::num_elements() const {
  std::optional<int64_t> n = checked_product(dims);
  if (!n) fail(Code::kInvalidArgument, "shape ", to_string(), " has more than ", kMaxElements, " elements");
  return *n;
}

std::string Shape::to_string() const {
  std::vector<Dim> ds(dims.begin(), dims.end());
  return str_cat(dtype_label(dtype), dims_to_string(ds));
}

bool LowerContext::on_host() const { return !device || device->is_host(); }

const KernelTable& KernelTable::builtin() {
  static const KernelTable table = [] {
    KernelTable t;
    register_builtin_kernels(t);
    return t;
  }();
  return table;
}

const KernelTable& KernelTable::gpu() {
  static const KernelTable table = [] {
    KernelTable t;
    register_gpu_kernels(t);
    return t;
  }();
  return table;
}

const KernelTable& KernelTable::for_device(const Device& device) { return device.is_host() ? builtin() : gpu(); }

void KernelTable::add(std::string op, LowerFn fn) {
  if (table_.contains(op)) fail(Code::kInternal, "two kernels registered for op '", op, "'");
  table_.emplace(std::move(op), std::move(fn));
}

const LowerFn* KernelTable::find(std::string_view op) const {
  auto it = table_.find(op);
  return it == table_.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelTable::ops() const {
  std::vector<std::string> names;
  for (const auto& [name, fn] : table_) names.push_back(name);
  return names;
}

}  // namespace maxc

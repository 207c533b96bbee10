#include "kernels/cpu/dnnl_call.h"

#include <algorithm>

#include "kernels/cpu/dnnl_engine.h"

namespace maxc::cpu {
namespace {

// Rebinding a memory whose layout pads its dims makes oneDNN zero the padding, a pass over
// the data on every call (and a write into a shared packed weight): such memories are made
// anew instead, as every call made them before.
bool pads(const dnnl::memory::desc& d) {
  const dnnl_memory_desc_t& c = d.data;
  return !std::equal(c.dims, c.dims + c.ndims, c.padded_dims);
}

}  // namespace

struct DnnlCalls::Set {
  std::vector<dnnl::memory> memories;
  std::vector<dnnl_exec_arg_t> args;
};

DnnlCalls::DnnlCalls() = default;
DnnlCalls::~DnnlCalls() = default;

std::unique_ptr<DnnlCalls::Set> DnnlCalls::take(size_t site) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (site >= free_.size()) free_.resize(site + 1);
    std::vector<std::unique_ptr<Set>>& sets = free_[site];
    if (!sets.empty()) {
      std::unique_ptr<Set> set = std::move(sets.back());
      sets.pop_back();
      return set;
    }
  }
  return std::make_unique<Set>();
}

void DnnlCalls::give_back(size_t site, std::unique_ptr<Set> set) const {
  std::lock_guard<std::mutex> lock(mu_);
  free_[site].push_back(std::move(set));
}

void DnnlCalls::run(size_t site, const dnnl::primitive& primitive, std::span<const DnnlArg> args) const {
  std::unique_ptr<Set> set = take(site);
  const bool fresh = set->args.size() != args.size();
  if (fresh) {
    set->memories.assign(args.size(), dnnl::memory());
    set->args.assign(args.size(), dnnl_exec_arg_t{});
  }
  for (size_t i = 0; i < args.size(); ++i) {
    void* data = const_cast<void*>(args[i].data);
    dnnl::memory& m = set->memories[i];
    if (fresh || set->args[i].arg != args[i].id || pads(*args[i].desc)) {
      m = dnnl::memory(*args[i].desc, dnnl_engine(), data);
    } else if (m.get_data_handle() != data) {
      m.set_data_handle(data);
    }
    set->args[i] = {args[i].id, m.get()};
  }
  dnnl::stream& stream = dnnl_stream();
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(primitive.get(), stream.get(), static_cast<int>(set->args.size()), set->args.data()),
      "could not execute a primitive");
  stream.wait();
  give_back(site, std::move(set));  // not after a failure: the next call makes a new set
}

}  // namespace maxc::cpu

#include "engine/bound_weights.h"

#include <algorithm>
#include <cstdlib>

#include "base/error.h"
#include "engine/memory_plan.h"

namespace maxc {

std::vector<const void*> BoundWeights::packed_for(const ExecPlan& plan) const {
  std::vector<const void*> result;
  if (plan.prepacks.empty()) return result;
  std::lock_guard lock(mu_);
  for (const PrepackSlot& slot : plan.prepacks) {
    auto& copy = packed_[{slot.weight, slot.layout}];
    if (!copy) {
      const uint64_t bytes = (std::max<uint64_t>(slot.bytes, 1) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
      void* p = std::aligned_alloc(kArenaAlignment, bytes);
      if (!p) fail(Code::kResourceExhausted, "cannot allocate ", bytes, " bytes for a packed copy of weight ", slot.weight);
      std::shared_ptr<uint8_t> fresh(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
      const Ref<Tensor>& weight = tensors_.at(slot.weight);
      weight->read([&](const uint8_t* bytes) { slot.pack(bytes, fresh.get()); });
      copy = std::move(fresh);  // only once packed: a throw leaves no half-made copy behind
      // A weight mapped from its file is now read from the packed copy: its pages leave the
      // resident set (a plan that reads the original brings them back from the file), so
      // memory holds one copy of the weights, not two. A deferred copy (mapped_tensor) was
      // read without being made, and dropped its file pages itself.
      weight->drop_file_pages();
    }
    result.push_back(copy.get());
  }
  return result;
}

}  // namespace maxc

// The context (MAX's InferenceSession): which devices models run on and how many threads
// the one team has (DESIGN §5).
#pragma once

#include <cstdint>
#include <vector>

#include "base/object.h"
#include "driver/device.h"

namespace maxc {

struct ContextOptions {
  std::vector<Ref<Device>> devices;  // empty: the CPU alone
  int32_t num_threads = 0;           // 0: one per available core
};

class Context : public Object {
 public:
  // Throws INVALID_ARGUMENT for a negative thread count or a null device.
  static Ref<Context> create(ContextOptions options);

  const std::vector<Ref<Device>>& devices() const { return devices_; }
  int32_t num_threads() const { return num_threads_; }

 private:
  Context(std::vector<Ref<Device>> devices, int32_t num_threads)
      : Object(ObjectKind::kContext), devices_(std::move(devices)), num_threads_(num_threads) {}

  std::vector<Ref<Device>> devices_;
  int32_t num_threads_;
};

}  // namespace maxc

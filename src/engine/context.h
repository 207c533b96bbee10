// The context (MAX's InferenceSession): which devices models run on, and the CPU thread pool
// every model of the context runs its kernels on (DESIGN §5).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/object.h"
#include "driver/device.h"

namespace maxc {
namespace cpu {
class ThreadPool;
}

struct ContextOptions {
  std::vector<Ref<Device>> devices;  // empty: the CPU alone
  int32_t num_threads = 0;           // 0: MAX_C_NUM_THREADS, else one per available core
};

class Context : public Object {
 public:
  // Throws INVALID_ARGUMENT for a negative thread count, a null device, or (num_threads 0)
  // a MAX_C_NUM_THREADS that is not a positive integer.
  static Ref<Context> create(ContextOptions options);
  ~Context() override;

  const std::vector<Ref<Device>>& devices() const { return devices_; }
  int32_t num_threads() const { return num_threads_; }
  // Shared by every concurrent execute of every model of the context; num_threads() threads
  // counting the caller.
  cpu::ThreadPool* pool() const { return pool_.get(); }

 private:
  Context(std::vector<Ref<Device>> devices, int32_t num_threads);

  std::vector<Ref<Device>> devices_;
  int32_t num_threads_;
  std::unique_ptr<cpu::ThreadPool> pool_;
};

}  // namespace maxc

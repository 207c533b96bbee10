#include "engine/context.h"

#include <thread>

#include "base/error.h"
#include "base/log.h"

namespace maxc {

Ref<Context> Context::create(ContextOptions options) {
  if (options.num_threads < 0)
    fail(Code::kInvalidArgument, "num_threads is ", options.num_threads, "; use 0 for one per core");
  for (size_t i = 0; i < options.devices.size(); ++i)
    if (!options.devices[i]) fail(Code::kInvalidArgument, "devices[", i, "] is NULL");
  if (options.devices.empty()) options.devices.push_back(Device::cpu());
  int32_t threads = options.num_threads;
  if (threads == 0) threads = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  MAXC_LOG(kInfo, "context: ", options.devices.size(), " device(s), ", threads, " thread(s)");
  return Ref<Context>::adopt(new Context(std::move(options.devices), threads));
}

}  // namespace maxc

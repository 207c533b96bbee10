#include "engine/context.h"

#include <cerrno>
#include <cstdlib>
#include <thread>

#include "base/error.h"
#include "base/log.h"
#include "kernels/cpu/thread_pool.h"

namespace maxc {
namespace {

// More threads than this is a typo, not a machine.
constexpr long kMaxThreads = 4096;

// The thread count of a context created with num_threads 0: MAX_C_NUM_THREADS when set (the
// knob a deployment sets without touching the program), else one per available core.
int32_t default_num_threads() {
  const char* env = std::getenv("MAX_C_NUM_THREADS");
  if (env && *env) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(env, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > kMaxThreads)
      fail(Code::kInvalidArgument, "MAX_C_NUM_THREADS is '", env, "'; expected a thread count in [1, ", kMaxThreads,
           "] (or unset for one per core)");
    return static_cast<int32_t>(v);
  }
  return static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

Context::Context(std::vector<Ref<Device>> devices, int32_t num_threads)
    : Object(ObjectKind::kContext),
      devices_(std::move(devices)),
      num_threads_(num_threads),
      pool_(std::make_unique<cpu::ThreadPool>(num_threads)) {}

Context::~Context() = default;

Ref<Context> Context::create(ContextOptions options) {
  if (options.num_threads < 0)
    fail(Code::kInvalidArgument, "num_threads is ", options.num_threads, "; use 0 for one per core");
  for (size_t i = 0; i < options.devices.size(); ++i)
    if (!options.devices[i]) fail(Code::kInvalidArgument, "devices[", i, "] is NULL");
  if (options.devices.empty()) options.devices.push_back(Device::cpu());
  const int32_t threads = options.num_threads > 0 ? options.num_threads : default_num_threads();
  MAXC_LOG(kInfo, "context: ", options.devices.size(), " device(s), ", threads, " thread(s)");
  return Ref<Context>::adopt(new Context(std::move(options.devices), threads));
}

}  // namespace maxc

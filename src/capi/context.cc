#include "capi/capi.h"

using namespace maxc;
using namespace maxc::capi;

namespace {

max_context_options_t default_context_options() {
  max_context_options_t o{};
  o.struct_size = sizeof(o);
  o.devices = nullptr;
  o.num_devices = 0;
  o.num_threads = 0;
  o.log_level = -1;
  return o;
}

ContextOptions translate(const max_context_options_t& o) {
  ContextOptions options;
  if (o.num_devices > 0 && !o.devices)
    fail(Code::kInvalidArgument, "options->devices is NULL with num_devices ", o.num_devices);
  for (size_t i = 0; i < o.num_devices; ++i) {
    std::string arg = str_cat("options->devices[", i, "]");  // the index, not a literal "i"
    options.devices.push_back(share(o.devices[i], arg.c_str()));
  }
  options.num_threads = o.num_threads;
  return options;
}

}  // namespace

extern "C" {

MAXC_DEFINE_REFCOUNT(context)

max_status_t* max_context_options_init(max_context_options_t* options, size_t struct_size) {
  return MAXC_GUARD({ init_options(options, struct_size, default_context_options(), "options"); });
}

max_status_t* max_context_create(const max_context_options_t* options,
                                 max_context_t** out_context) {
  return MAXC_GUARD({
    auto& out = out_param(out_context, "out_context");
    auto o = read_options(options, default_context_options(), "options");
    if (o.log_level != -1) {
      if (o.log_level < MAX_LOG_OFF || o.log_level > MAX_LOG_TRACE)
        fail(Code::kInvalidArgument, "options->log_level ", o.log_level, " is not -1 or in [",
             MAX_LOG_OFF, ", ", MAX_LOG_TRACE, "]");
    }
    auto context = Context::create(translate(o));
    if (o.log_level != -1) set_log_level(static_cast<LogLevel>(o.log_level));
    out = to_handle<max_context_t>(std::move(context));
  });
}

max_status_t* max_context_num_threads(const max_context_t* context, int32_t* out_num_threads) {
  return MAXC_GUARD({
    auto& out = out_param(out_num_threads, "out_num_threads");
    out = deref(context, "context").num_threads();
  });
}

max_status_t* max_context_num_devices(const max_context_t* context, size_t* out_num_devices) {
  return MAXC_GUARD({
    auto& out = out_param(out_num_devices, "out_num_devices");
    out = deref(context, "context").devices().size();
  });
}

max_status_t* max_context_device(const max_context_t* context, size_t index,
                                 max_device_t** out_device) {
  return MAXC_GUARD({
    auto& out = out_param(out_device, "out_device");
    const auto& devices = deref(context, "context").devices();
    if (index >= devices.size())
      fail(Code::kOutOfRange, "device index ", index, " is past the context's ", devices.size(),
           " device(s)");
    out = to_handle<max_device_t>(devices[index]);
  });
}

}  // extern "C"

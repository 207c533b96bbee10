#include "engine/placement.h"

#include <optional>
#include <string>

#include "base/error.h"

namespace maxc {

namespace {

struct Placed {
  DeviceRef device;
  std::string what;  // "input 'x'", "the output of op 'add' (node 3)"
};

// Every value of the program with a name for messages: leaves first, then node outputs.
template <typename Fn>
void for_each_value(const Program& p, Fn fn) {
  for (const auto& in : p.inputs) fn(in.value, str_cat("input '", in.name, "'"));
  for (const auto& w : p.weights) fn(w.value, str_cat("weight '", w.name, "'"));
  for (size_t i = 0; i < p.constants.size(); ++i) fn(p.constants[i].value, str_cat("constant ", i));
  for (size_t n = 0; n < p.nodes.size(); ++n)
    for (ValueId v : p.nodes[n].outputs) fn(v, str_cat("the output of op '", p.nodes[n].op, "' (node ", n, ")"));
}

// The program's one device, or the first two values that disagree.
Placed common_placement(const Program& p) {
  std::optional<Placed> first;
  for_each_value(p, [&](ValueId v, std::string what) {
    const DeviceRef d = p.types[v].device;
    if (!first) {
      first = Placed{d, std::move(what)};
    } else if (d != first->device) {
      fail(Code::kUnimplemented, first->what, " is on ", first->device.to_string(), " but ", what, " is on ",
           d.to_string(), ": a graph that spans devices (transfer_to) is not supported yet");
    }
  });
  return first.value_or(Placed{DeviceRef::cpu(), "the graph"});
}

std::string device_list(const Context& context) {
  std::string list;
  for (const auto& d : context.devices()) list += (list.empty() ? "" : ", ") + d->name();
  return list;
}

bool matches(const Device& device, const DeviceRef& ref) {
  if (ref.kind == DeviceKind::kCpu) return device.is_host();
  return !device.is_host() && device.id() == ref.id;
}

}  // namespace

Ref<Device> placement_device(const Program& p, const Context& context) {
  const Placed placed = common_placement(p);
  return context_device(context, placed.device, placed.what);
}

DeviceRef device_ref_of(const Device& device) {
  return device.is_host() ? DeviceRef::cpu() : DeviceRef::gpu(device.id());
}

Ref<Device> context_device(const Context& context, DeviceRef ref, const std::string& what) {
  for (const auto& d : context.devices())
    if (matches(*d, ref)) return d;
  // A context always has a device for the host's work (constant folding, copies), so a CPU
  // graph runs under any context, as MAX's InferenceSession runs one.
  if (ref.kind == DeviceKind::kCpu) return Device::cpu();
  fail(Code::kInvalidArgument, what, " is placed on ", ref.to_string(), ", which is not among the context's devices (",
       device_list(context), "); create the context with that accelerator");
}

}  // namespace maxc

// Where a compiled program runs (DESIGN §8): on the one device its values are placed on.
// MAX places a graph through the devices of its input types; every op keeps its inputs'
// device, so a graph built on gpu:0 is on gpu:0 throughout. That device must be one the
// context was created with: a graph is never moved to another device behind the caller's back.
#pragma once

#include "base/object.h"
#include "compiler/program.h"
#include "driver/device.h"
#include "engine/context.h"

namespace maxc {

// The device `p` runs on, one of the context's devices.
// INVALID_ARGUMENT, naming the value and listing the context's devices, when the context
// lacks the device; UNIMPLEMENTED, naming two values, when the program spans devices (the
// transfers between them are not supported yet).
Ref<Device> placement_device(const Program& p, const Context& context);

// The graph layer's name for `device`: cpu:0 for the host, gpu:<id> for an accelerator.
DeviceRef device_ref_of(const Device& device);

// The context's device for `ref` (the host for cpu:0, as for a graph); INVALID_ARGUMENT
// naming `what` and listing the context's devices when it has none such.
Ref<Device> context_device(const Context& context, DeviceRef ref, const std::string& what);

}  // namespace maxc

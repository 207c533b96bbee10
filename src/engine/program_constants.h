// A program's constants where its kernels read them: the graph's own bytes on the host, or
// copies in a GPU's memory, made once when the program is compiled (or a region planned).
#pragma once

#include <vector>

#include "compiler/program.h"
#include "driver/device.h"
#include "driver/tensor.h"

namespace maxc {

struct ProgramConstants {
  std::vector<Ref<Tensor>> copies;     // the device copies `addresses` point into (none on the host)
  std::vector<const void*> addresses;  // by constant number
};

ProgramConstants place_constants(const Program& p, const Ref<Device>& device);

}  // namespace maxc

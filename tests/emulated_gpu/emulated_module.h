// Included by every module the emulated NVRTC compiles (after gpu_emu/cuda_emulator.h and
// before the kernel source): binds a launch's parameters to a kernel, for the entries the
// compiler appends, one per requested name expression:
//   extern "C" BoundLaunch* maxc_emulated_entry_maxc_emulated_kernel_0(void** params) {
//     return bind_launch(&maxc::gpu::softmax_rows<float, false>, params);
//   }
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "emulated_gpu/emulated_launch.h"
#include "gpu_emu/cuda_emulator.h"

namespace maxc::emulated_gpu {

template <class... Params>
class KernelLaunch final : public BoundLaunch {
 public:
  using Kernel = void (*)(Params...);
  KernelLaunch(Kernel kernel, void** params) : KernelLaunch(kernel, params, std::index_sequence_for<Params...>{}) {}

  void run(const unsigned grid[3], const unsigned block[3]) const override {
    std::apply([&](const auto&... values) {
      emulate_launch(dim3(grid[0], grid[1], grid[2]), dim3(block[0], block[1], block[2]), kernel_, values...);
    }, values_);
  }

 private:
  template <std::size_t... I>
  KernelLaunch(Kernel kernel, void** params, std::index_sequence<I...>)
      : kernel_(kernel), values_(*static_cast<std::remove_reference_t<Params>*>(params[I])...) {}

  Kernel kernel_;
  std::tuple<std::decay_t<Params>...> values_;
};

template <class... Params>
BoundLaunch* bind_launch(void (*kernel)(Params...), void** params) {
  return new KernelLaunch<Params...>(kernel, params);
}

}  // namespace maxc::emulated_gpu

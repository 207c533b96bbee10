#include "driver/cuda/cuda_module.h"

#include "base/str_cat.h"
#include "driver/cuda/cuda_context.h"
#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_error.h"
#include "driver/cuda/cuda_stream.h"

namespace maxc::cuda {

CudaModule::CudaModule(const CudaDevice& device, const std::string& image, std::string label)
    : device_(device), label_(std::move(label)) {
  ContextScope scope(device.api(), device.context());
  // std::string's buffer ends in a NUL, which a PTX image needs.
  check_cuda(device.api(), device.api().cuModuleLoadData(&module_, image.c_str()),
             str_cat("loading kernels ", label_, " into ", device.describe()));
}

CudaModule::~CudaModule() {
  const CudaApi& api = device_.api();
  try {
    ContextScope scope(api, device_.context());
    warn_cuda(api, api.cuModuleUnload(module_), "cuModuleUnload");
  } catch (const std::exception&) {
  }
}

CUfunction CudaModule::function(const std::string& name) const {
  ContextScope scope(device_.api(), device_.context());
  CUfunction f = nullptr;
  const CUresult r = device_.api().cuModuleGetFunction(&f, module_, name.c_str());
  if (r == result::kNotFound) fail(Code::kNotFound, "kernels ", label_, " have no function '", name, "'");
  check_cuda(device_.api(), r, str_cat("cuModuleGetFunction '", name, "' of kernels ", label_));
  return f;
}

void CudaModule::launch(CUfunction f, const LaunchShape& s, const CudaStream* stream, void** args) const {
  if (stream && &stream->device() != &device_)
    fail(Code::kInvalidArgument, "kernels ", label_, " of ", device_.describe(), " launched on a stream of ",
         stream->device().describe());
  ContextScope scope(device_.api(), device_.context());
  check_cuda(device_.api(),
             device_.api().cuLaunchKernel(f, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2],
                                          s.shared_bytes, stream ? stream->handle() : nullptr, args, nullptr),
             str_cat("launching a kernel of ", label_, " on ", device_.describe()));
}

}  // namespace maxc::cuda

// What every suite of gpu_engine_tests shares: the emulated GPU (tests/emulated_gpu), which the
// fixture makes the process's CUDA driver and NVRTC from paths the build passes in, so the
// engine compiles and runs the real kernel sources; a context with the CPU and its gpu:0; the
// driver's log of what ran (emulated_cuda_log.h); and small helpers that move data on and off
// the device.
#pragma once

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "driver/cuda/nvrtc_api.h"
#include "driver/device.h"
#include "emulated_gpu/emulated_cuda_log.h"
#include "engine/compiled_model.h"
#include "engine/lowering.h"
#include "engine/model.h"

namespace maxc::testing {

inline TensorType on_gpu(DType dtype, std::vector<Dim> dims) {
  return TensorType{dtype, std::move(dims), DeviceRef::gpu(0)};
}
inline TensorType f32_on_gpu(std::vector<Dim> dims) { return on_gpu(DType::kFloat32, std::move(dims)); }

// A function of the emulated driver the process loaded, by name; fails the test when the
// process's CUDA driver is not the emulated one.
template <typename Fn>
Fn emulated_driver_function(const char* name) {
  const char* path = std::getenv("MAX_C_CUDA_LIBRARY");
  void* library = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  void* fn = library ? dlsym(library, name) : nullptr;
  if (library) dlclose(library);  // the driver holds its own reference
  if (!fn) fail(Code::kFailedPrecondition, "the process's CUDA driver is not the emulated GPU: no ", name);
  return reinterpret_cast<Fn>(fn);
}

// What the emulated driver ran (launches by kernel, graphs).
inline emulated_gpu::DriverLog& driver_log() {
  static emulated_gpu::DriverLog* log = emulated_driver_function<emulated_gpu::LogFn>(emulated_gpu::kLogSymbol)();
  return *log;
}

// Whether `p` points into a block the driver allocated as device memory.
inline bool in_device_memory(const void* p) {
  static emulated_gpu::OwnsFn owns = emulated_driver_function<emulated_gpu::OwnsFn>(emulated_gpu::kOwnsSymbol);
  return owns(p);
}

// How many of the launches ran a kernel whose name has `kernel` in it.
inline size_t launches_of(const std::string& kernel) {
  size_t n = 0;
  for (const std::string& name : driver_log().launches) n += name.find(kernel) != std::string::npos;
  return n;
}

// n varied values, start + step·(i mod 7) − 0.1·(i mod 3): no long runs of equal values.
inline std::vector<float> ramp(int64_t n, float step, float start = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + step * static_cast<float>(i % 7) - 0.1f * (i % 3);
  return v;
}

template <typename T>
Ref<Tensor> host_tensor(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
  auto t = Tensor::create(Device::cpu(), dtype, dims);
  std::memcpy(t->data(), values.data(), values.size() * sizeof(T));
  return t;
}
inline Ref<Tensor> host_tensor(std::vector<int64_t> dims, const std::vector<float>& values) {
  return host_tensor(DType::kFloat32, std::move(dims), values);
}

// A tensor's elements, read back to the host as T.
template <typename T = float>
std::vector<T> values_of(const Tensor& t) {
  Ref<Tensor> host = t.copy(Device::cpu());
  const auto* p = reinterpret_cast<const T*>(host->data());
  return std::vector<T>(p, p + host->num_elements());
}

// The bytes of host values, as a tensor of their dtype holds them.
template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// A tensor's bytes, read back to the host: byte_size() of them, fewer than its elements for
// a sub-byte dtype.
inline std::vector<uint8_t> tensor_bytes(const Tensor& t) {
  Ref<Tensor> host = t.copy(Device::cpu());
  const auto* p = reinterpret_cast<const uint8_t*>(host->data());
  return std::vector<uint8_t>(p, p + host->byte_size());
}

// One cast node from `in` to `out` on `device`, with the cast's saturate attribute.
inline Graph cast_graph(DType in, DType out, bool saturate, const std::vector<int64_t>& dims, DeviceRef device) {
  Graph g("cast");
  ValueId v = g.add_input("x", TensorType{in, std::vector<Dim>(dims.begin(), dims.end()), device});
  Attrs a;
  a.set("dtype", out);
  a.set("saturate", saturate);
  g.set_outputs({{"y", g.add_op("cast", {v}, a)[0]}});
  return g;
}

class EngineOnEmulatedGpu : public ::testing::Test {
 protected:
  // The emulated GPU as the process's only accelerator, before anything loads a driver: no
  // HIP, and no cuBLASLt, which would be handed host memory. The kernel cache is the build's,
  // shared with the other emulated runs.
  static void SetUpTestSuite() {
    setenv("MAX_C_CUDA_LIBRARY", MAXC_EMULATED_CUDA_LIBRARY, 1);
    setenv("MAX_C_NVRTC_LIBRARY", MAXC_EMULATED_NVRTC_LIBRARY, 1);
    setenv("MAX_C_HIP_LIBRARY", "", 1);
    setenv("MAX_C_CUBLASLT", "0", 1);
    setenv("MAX_C_KERNEL_CACHE_DIR", MAXC_EMULATED_KERNEL_CACHE_DIR, 0);
  }

  // A fresh launch record, and a context with the CPU and the emulated gpu:0.
  void SetUp() override {
    ASSERT_TRUE(cuda::nvrtc().available) << "no NVRTC: " << cuda::nvrtc().unavailable_reason;
    gpu_ = Device::get(Device::Kind::kCuda, 0);
    ASSERT_NO_THROW(driver_log());
    driver_log().launches.clear();
    context_ = Context::create(ContextOptions{{Device::cpu(), gpu_}, 1});
  }

  Ref<Model> compile(const Graph& g, const NamedTensors& weights = {}) {
    return Model::create(CompiledModel::compile(context_, g, CompileSettings{}), weights);
  }

  // The GPU lowering of a bare node: for variants no graph reaches yet, and for refusals.
  Lowered lower(const std::string& op, Attrs attrs, std::vector<Shape> inputs, std::vector<Shape> outputs) {
    Node n;
    n.op = op;
    n.attrs = std::move(attrs);
    for (size_t i = 0; i < inputs.size(); ++i) n.inputs.push_back(static_cast<ValueId>(i));
    for (size_t i = 0; i < outputs.size(); ++i) n.outputs.push_back(static_cast<ValueId>(inputs.size() + i));
    std::vector<const Constant*> constants(inputs.size(), nullptr);
    LowerContext ctx{n, inputs, outputs, constants, [](ValueId) { return Shape{}; }, 1};
    ctx.device = gpu_.get();
    const LowerFn* fn = KernelTable::gpu().find(op);
    if (!fn) fail(Code::kNotFound, "no GPU lowering of ", op);
    return (*fn)(ctx);
  }

  // The graph's outputs on the GPU engine and on a CPU engine, for the same host inputs.
  void run_both(const std::function<Graph(DeviceRef)>& build, const std::vector<Ref<Tensor>>& inputs,
                std::vector<Ref<Tensor>>* on_gpu, std::vector<Ref<Tensor>>* on_cpu) {
    std::vector<Ref<Tensor>> device_inputs;
    for (const Ref<Tensor>& t : inputs) device_inputs.push_back(t->copy(gpu_));
    *on_gpu = compile(build(DeviceRef::gpu(0)))->execute(device_inputs);
    Ref<Context> cpu = Context::create(ContextOptions{{Device::cpu()}, 1});
    *on_cpu = Model::create(CompiledModel::compile(cpu, build(DeviceRef::cpu()), CompileSettings{}), NamedTensors{})
                  ->execute(inputs);
  }

  // One cast node's output bytes on the GPU engine and on a CPU engine, for input bytes x.
  void cast_on_both(DType in, DType out, bool saturate, const std::vector<int64_t>& dims,
                    const std::vector<uint8_t>& x, std::vector<uint8_t>* on_gpu, std::vector<uint8_t>* on_cpu) {
    std::vector<Ref<Tensor>> gpu, cpu;
    run_both([&](DeviceRef device) { return cast_graph(in, out, saturate, dims, device); },
             {host_tensor(in, dims, x)}, &gpu, &cpu);
    *on_gpu = tensor_bytes(*gpu[0]);
    *on_cpu = tensor_bytes(*cpu[0]);
  }

  // One cast node on both engines: one launch, of a kernel whose name holds `kernel`, and the
  // same bytes. `what` names the case in failures.
  void expect_one_cast_launch(DType in, DType out, bool saturate, const std::vector<int64_t>& dims,
                              const std::vector<uint8_t>& x, const std::string& kernel, const std::string& what) {
    driver_log().launches.clear();
    std::vector<uint8_t> gpu, cpu;
    cast_on_both(in, out, saturate, dims, x, &gpu, &cpu);
    EXPECT_EQ(driver_log().launches.size(), 1u) << what;
    EXPECT_EQ(launches_of(kernel), 1u) << what;
    EXPECT_EQ(gpu, cpu) << what;
  }

  Ref<Device> gpu_;
  Ref<Context> context_;
};

}  // namespace maxc::testing

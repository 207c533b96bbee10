// How an op becomes a kernel call. The compiler hands the engine a Program of nodes with
// symbolic types; for one concrete set of input shapes the engine lowers every node, through
// the table below, into a Kernel: a closure with every shape decision already taken, so that
// `execute` does nothing but call it with pointers.
//
// To add the kernels of an op family:
//   1. Write the kernels in kernels/cpu/<family>.{h,cc}: plain functions over pointers and
//      int64 extents, knowing nothing of graphs or attributes (DESIGN §1: kernels -> driver).
//   2. Write src/engine/lower/<family>.cc defining `void register_<family>_kernels(KernelTable&)`
//      that reads each op's attributes and shapes and returns the closure.
//   3. Declare it in engine/lower/lower.h and call it from register_builtin_kernels().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "base/error.h"
#include "compiler/program.h"
#include "graph/attrs.h"
#include "graph/constant.h"

namespace maxc {

class Device;
namespace cuda {
class CudaStream;
}

// A value with every dim known: what a kernel is specialized for. Arena buffers, inputs,
// weights and outputs are always dense and row-major, so dims imply the strides.
struct Shape {
  DType dtype = DType::kInvalid;
  std::vector<int64_t> dims;

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t num_elements() const;
  uint64_t byte_size() const { return dtype_bytes_for(dtype, static_cast<uint64_t>(num_elements())); }
  std::string to_string() const;  // "float32[2, 3]"
  friend bool operator==(const Shape&, const Shape&) = default;
};

// What a kernel gets at run time: one pointer per input and output, in the node's order, and
// the scratch it asked for (64-byte aligned, contents undefined, private to this call), all in
// the memory of the plan's device. A GPU kernel queues its work on `stream` and returns at
// once; the executor waits for the stream when the call is done.
struct KernelArgs {
  const void* const* inputs;
  void* const* outputs;
  void* scratch;
  const cuda::CudaStream* stream = nullptr;  // null on the host
  // GPU: a word of device memory, zero at launch, that a kernel sets to nonzero when it finds
  // bad data (an index out of range); the call then fails with the step's Lowered::error
  // once its stream is done. Null on the host, and for steps that report nothing.
  int32_t* error_word = nullptr;
};

// A kernel may throw maxc::Error once its work is done, on the calling thread (never from
// inside a parallel region): the call then fails with that status, e.g. for an index that
// is out of range at run time. The arena and outputs of the failed call are discarded.
using Kernel = std::function<void(const KernelArgs&)>;

// What a lowering sees: the node (op name, attributes with defaults filled in, and for a
// fused node its steps), the concrete input and output shapes in the node's order, the data
// of inputs that are compile-time constants, any value's concrete shape (a fused node's
// inner values), the values of the plan's symbols, the size of the thread team, and the
// device the kernel will run on.
struct LowerContext {
  const Node& node;
  std::span<const Shape> inputs;
  std::span<const Shape> outputs;
  std::span<const Constant* const> input_constants;  // nullptr where not a constant
  std::function<Shape(ValueId)> shape_of;
  int32_t num_threads = 1;
  // A dim's value for this plan's symbols (static dims, symbols, expressions of them);
  // NOT_FOUND for a symbol no input binds.
  std::function<int64_t(const Dim&)> eval_dim = [](const Dim& d) { return d.static_value(); };
  std::span<const int32_t> input_weights = {};  // per input: the weight's number, or -1
  const Device* device = nullptr;                // null: the host

  std::string_view op() const { return node.op; }
  const Attrs& attrs() const { return node.attrs; }
  template <typename T>
  const T& attr(std::string_view name) const { return node.attrs.get<T>(name, op_label()); }
  const Constant* input_constant(size_t i) const {
    return i < input_constants.size() ? input_constants[i] : nullptr;
  }
  bool input_is_weight(size_t i) const { return i < input_weights.size() && input_weights[i] >= 0; }
  std::string op_label() const { return str_cat("op '", node.op, "'"); }

  bool on_host() const;
  // "CPU" or "GPU", for messages.
  const char* device_kind() const { return on_host() ? "CPU" : "GPU"; }

  // UNIMPLEMENTED "op 'x': no CPU kernel for <parts>" (GPU on a GPU): the graph is valid, we
  // lack the kernel.
  template <typename... Parts>
  [[noreturn]] void unsupported(const Parts&... parts) const {
    fail(Code::kUnimplemented, op_label(), ": no ", device_kind(), " kernel for ", parts...);
  }

  // fn()'s result. An Error it throws (a dtype the GPU kernel catalog lacks, a program the
  // elementwise compiler refuses) is thrown again as this node's, with its label in front.
  template <typename Fn>
  auto labeled(Fn&& fn) const -> decltype(fn()) {
    try {
      return fn();
    } catch (const Error& e) {
      fail(e.code(), op_label(), ": ", e.what());
    }
  }
};

// A weight input the kernel wants in a layout of its own (a matmul's packed panels). The
// model packs each bound weight once per layout, when a plan first needs it, and the kernel
// then gets the packed copy in place of the weight. `layout` names the packed form
// completely ("gemm_packed k=256 n=64"), so plans for other shapes share one copy.
struct Prepack {
  int32_t input = -1;  // -1: none
  std::string layout;
  uint64_t bytes = 0;
  std::function<void(const void* weight, void* packed)> pack;
};

struct Lowered {
  Kernel run;               // empty only for an alias
  uint64_t scratch_bytes = 0;
  // Output 0 may be written over input `inplace_input` (elementwise kernels that read each
  // element before writing it); -1 when it may not. The planner decides whether it does.
  int32_t inplace_input = -1;
  // Output 0 is input 0's bytes seen with another shape (reshape, squeeze, ...): no kernel
  // runs and no memory is planned for it.
  bool alias = false;
  Prepack prepack = {};
  // GPU kernels that report bad data through KernelArgs::error_word: what the error says
  // ("3 index values ... are out of range"), after "op 'x': ", with "{}" standing for the
  // nonzero value the kernel wrote (a count it found). Empty: the kernel reports nothing.
  std::string error = {};

  static Lowered alias_of_input() { return {{}, 0, -1, true, {}}; }
};

using LowerFn = std::function<Lowered(const LowerContext&)>;

// Op name -> lowering. Fused nodes that the compiler makes ("fused_elementwise",
// "fused_matmul", ...) are looked up here too.
class KernelTable {
 public:
  static const KernelTable& builtin();  // the CPU's
  static const KernelTable& gpu();      // CUDA's (engine/lower_gpu/)
  static const KernelTable& for_device(const Device& device);

  // INTERNAL when the name is taken (two families claiming one op is a bug).
  void add(std::string op, LowerFn fn);
  const LowerFn* find(std::string_view op) const;
  std::vector<std::string> ops() const;

 private:
  std::map<std::string, LowerFn, std::less<>> table_;
};

}  // namespace maxc

// A CUDA graph recorded from a stream: the kernels, copies and memsets some code queues on
// the stream, captured instead of run, then instantiated once and launched as a whole. What
// MAX's Model.capture/replay map to (engine/captured_graph.h): one launch replaces a call's
// hundreds, and every address it touches is fixed at capture.
#pragma once

#include <functional>
#include <memory>

#include "driver/cuda/cuda_api.h"

namespace maxc::cuda {

class CudaDevice;
class CudaStream;

class CudaGraph {
 public:
  // Captures what `enqueue` queues on `stream` (thread-local mode: this thread's unsafe calls,
  // such as synchronous copies or a stream sync, fail rather than run) and instantiates it.
  // The work does not run. FAILED_PRECONDITION when the work cannot be captured; an error
  // `enqueue` throws comes back unchanged. Either way the stream is left out of capture mode
  // and usable.
  static std::unique_ptr<CudaGraph> capture(const CudaStream& stream, const std::function<void()>& enqueue);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Queues the whole graph on `stream` (of the device it was captured on). Not thread-safe
  // for one graph: the driver does not order two launches of one instance on two streams.
  void launch(const CudaStream& stream) const;

 private:
  CudaGraph(const CudaDevice& device, CUgraph graph, CUgraphExec exec);

  const CudaDevice& device_;  // where it was captured (devices live as long as the process)
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

}  // namespace maxc::cuda

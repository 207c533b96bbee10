#include "driver/cuda/cuda_graph.h"

#include "base/str_cat.h"
#include "driver/cuda/cuda_context.h"
#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_error.h"
#include "driver/cuda/cuda_stream.h"

namespace maxc::cuda {

namespace {

// Ends the capture on every path out of `enqueue`, so that a failure there does not leave the
// stream recording: a stream in capture mode refuses ordinary work.
CUgraph end_capture(const CudaApi& api, const CudaStream& stream, bool enqueued) {
  CUgraph graph = nullptr;
  const CUresult r = api.cuStreamEndCapture(stream.handle(), &graph);
  if (!enqueued) {
    if (graph) warn_cuda(api, api.cuGraphDestroy(graph), "cuGraphDestroy of an abandoned capture");
    return nullptr;
  }
  check_cuda(api, r, str_cat("capturing the work of a stream of ", stream.device().describe()));
  return graph;
}

}  // namespace

CudaGraph::CudaGraph(const CudaDevice& device, CUgraph graph, CUgraphExec exec)
    : device_(device), graph_(graph), exec_(exec) {}

std::unique_ptr<CudaGraph> CudaGraph::capture(const CudaStream& stream, const std::function<void()>& enqueue) {
  const CudaDevice& device = stream.device();
  const CudaApi& api = device.api();
  ContextScope scope(api, device.context());
  check_cuda(api, api.cuStreamBeginCapture_v2(stream.handle(), kStreamCaptureModeThreadLocal),
             str_cat("cuStreamBeginCapture_v2 on ", device.describe()));
  try {
    enqueue();
  } catch (...) {
    end_capture(api, stream, /*enqueued=*/false);
    throw;
  }
  CUgraph graph = end_capture(api, stream, /*enqueued=*/true);
  CUgraphExec exec = nullptr;
  const CUresult r = api.cuGraphInstantiateWithFlags(&exec, graph, 0);
  if (r != result::kSuccess) {
    warn_cuda(api, api.cuGraphDestroy(graph), "cuGraphDestroy");
    check_cuda(api, r, str_cat("cuGraphInstantiateWithFlags on ", device.describe()));
  }
  return std::unique_ptr<CudaGraph>(new CudaGraph(device, graph, exec));
}

CudaGraph::~CudaGraph() {
  const CudaApi& api = device_.api();
  try {
    ContextScope scope(api, device_.context());
    warn_cuda(api, api.cuGraphExecDestroy(exec_), "cuGraphExecDestroy");
    warn_cuda(api, api.cuGraphDestroy(graph_), "cuGraphDestroy");
  } catch (const std::exception&) {
    // No context to destroy them in: the process is going down, and the graph with it.
  }
}

void CudaGraph::launch(const CudaStream& stream) const {
  const CudaDevice& device = stream.device();
  if (&device != &device_)
    fail(Code::kInvalidArgument, "a graph captured on ", device_.describe(), " launched on a stream of ",
         device.describe());
  ContextScope scope(device.api(), device.context());
  check_cuda(device.api(), device.api().cuGraphLaunch(exec_, stream.handle()),
             str_cat("cuGraphLaunch on ", device.describe()));
}

}  // namespace maxc::cuda

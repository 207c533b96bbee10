"""A 3-layer MLP on max_c and on ONNX Runtime, same weights, same thread count, side by side.

    x [batch, 1024] -> Linear(1024, 4096) -> ReLU -> Linear(4096, 4096) -> ReLU -> Linear(4096, 1024)

Prints each engine's best latency per batch size and the ratio max_c / ONNX Runtime (below
1 means max_c is faster), after checking that both give the same result. Not a test.

    python bench/mlp_vs_onnxruntime.py [--threads 2] [--batches 1,64] [--dims 1024,4096,4096,1024]
"""
import argparse
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import Graph, TensorType, ops


def make_weights(dims, seed=0):
    rng = np.random.default_rng(seed)
    weights = {}
    for i, (fan_in, fan_out) in enumerate(zip(dims[:-1], dims[1:])):
        weights[f"w{i}"] = (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)
        weights[f"b{i}"] = (0.1 * rng.standard_normal(fan_out)).astype(np.float32)
    return weights


def max_c_model(session, dims, weights):
    layers = len(dims) - 1

    def forward(x):
        for i in range(layers):
            w = Graph.current.add_weight(f"w{i}", DType.float32, [dims[i], dims[i + 1]])
            b = Graph.current.add_weight(f"b{i}", DType.float32, [dims[i + 1]])
            x = ops.matmul(x, w) + b
            if i + 1 < layers:
                x = ops.relu(x)
        return x

    graph = Graph("mlp", forward, input_types=[TensorType(DType.float32, ["batch", dims[0]])])
    try:
        return session.load(graph, weights_registry=weights)
    finally:
        graph.close()


def onnx_model(dims, weights, threads):
    layers = len(dims) - 1
    nodes, inits, x = [], [], "x"
    for i in range(layers):
        inits += [numpy_helper.from_array(weights[f"w{i}"], f"w{i}"),
                  numpy_helper.from_array(weights[f"b{i}"], f"b{i}")]
        nodes += [helper.make_node("MatMul", [x, f"w{i}"], [f"mm{i}"]),
                  helper.make_node("Add", [f"mm{i}", f"b{i}"], [f"h{i}"])]
        x = f"h{i}"
        if i + 1 < layers:
            nodes.append(helper.make_node("Relu", [x], [f"r{i}"]))
            x = f"r{i}"
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", dims[0]])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", dims[-1]])], inits)
    # IR version 8 (opset 17 era): older than any runtime in use, so every ORT accepts it.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def mean_seconds(fn, min_seconds):
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < min_seconds:
        fn()
        n += 1
    return (time.perf_counter() - t0) / n


def best_ms_side_by_side(ours, theirs, rounds=7, min_seconds=0.3):
    """Each engine's best mean latency (ms) over rounds of at least min_seconds, the rounds
    alternating between the two, so that a load from others sharing the machine falls on
    both alike and the best round of each is the least disturbed."""
    ours(), theirs()
    best_ours = best_theirs = float("inf")
    for _ in range(rounds):
        best_ours = min(best_ours, mean_seconds(ours, min_seconds))
        best_theirs = min(best_theirs, mean_seconds(theirs, min_seconds))
    return best_ours * 1e3, best_theirs * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batches", default="1,64")
    parser.add_argument("--dims", default="1024,4096,4096,1024")
    args = parser.parse_args()
    dims = [int(d) for d in args.dims.split(",")]
    weights = make_weights(dims)
    session = InferenceSession(num_threads=args.threads)
    model = max_c_model(session, dims, weights)
    ort_session = onnx_model(dims, weights, args.threads)
    print(f"MLP {' -> '.join(map(str, dims))} (float32, ReLU), {args.threads} thread(s); "
          f"onnxruntime {ort.__version__}, onnx {onnx.__version__}")
    print(f"  {'batch':>5} {'max_c ms':>10} {'ORT ms':>10} {'max_c/ORT':>10}")
    for batch in [int(b) for b in args.batches.split(",")]:
        x = np.random.default_rng(batch).standard_normal((batch, dims[0])).astype(np.float32)
        ours = model.execute(x)[0].to_numpy()
        theirs = ort_session.run(None, {"x": x})[0]
        if not np.allclose(ours, theirs, rtol=1e-3, atol=1e-3):
            raise SystemExit(f"batch {batch}: max_c and ONNX Runtime disagree "
                             f"(max |diff| {np.abs(ours - theirs).max():.3g})")
        ms_ours, ms_theirs = best_ms_side_by_side(lambda: model.execute(x),
                                                  lambda: ort_session.run(None, {"x": x}))
        print(f"  {batch:>5} {ms_ours:>10.3f} {ms_theirs:>10.3f} {ms_ours / ms_theirs:>10.2f}")


if __name__ == "__main__":
    main()

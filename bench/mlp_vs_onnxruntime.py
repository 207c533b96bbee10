"""A 3-layer MLP on max_c and on ONNX Runtime, same weights, same thread count, side by side.

    x [batch, 1024] -> Linear(1024, 4096) -> ReLU -> Linear(4096, 4096) -> ReLU -> Linear(4096, 1024)

Prints each engine's best latency per batch size and the ratio max_c / ONNX Runtime (below
1 means max_c is faster), after checking that both give the same result. Not a test.

Each engine is timed in a process of its own: in one process, the idle threads of one
runtime (OpenMP's and ORT's both spin while waiting for work) take cores from the other, and
which one wins depends on OMP_WAIT_POLICY rather than on the engines. Rounds alternate
between the two processes, so a load from others sharing the machine falls on both alike.

    python bench/mlp_vs_onnxruntime.py [--threads 2] [--batches 1,64] [--dims 1024,4096,4096,1024]
"""
import argparse
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import Graph, TensorType, ops
from onnx_mlp import random_weights


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


def best_ms(engine, dims, threads, batch, rounds=5, min_seconds=0.3):
    """Best mean latency (ms) of `engine` ("max_c" or "ort") over rounds of at least
    min_seconds, in this process: what the child processes run."""
    weights = random_weights(dims)
    x = np.random.default_rng(batch).standard_normal((batch, dims[0])).astype(np.float32)
    if engine == "max_c":
        model = max_c_model(InferenceSession(num_threads=threads), dims, weights)
        run = lambda: model.execute(x)  # noqa: E731
    else:
        session = onnx_model(dims, weights, threads)
        run = lambda: session.run(None, {"x": x})  # noqa: E731
    run()
    return min(mean_seconds(run, min_seconds) for _ in range(rounds)) * 1e3


def best_ms_in_child(engine, args, batch):
    out = subprocess.run([sys.executable, __file__, "--time", engine, "--threads", str(args.threads),
                          "--batches", str(batch), "--dims", args.dims],
                         check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def check_agreement(dims, weights, threads, batches):
    model = max_c_model(InferenceSession(num_threads=threads), dims, weights)
    session = onnx_model(dims, weights, threads)
    for batch in batches:
        x = np.random.default_rng(batch).standard_normal((batch, dims[0])).astype(np.float32)
        ours = model.execute(x)[0].to_numpy()
        theirs = session.run(None, {"x": x})[0]
        if not np.allclose(ours, theirs, rtol=1e-3, atol=1e-3):
            raise SystemExit(f"batch {batch}: max_c and ONNX Runtime disagree "
                             f"(max |diff| {np.abs(ours - theirs).max():.3g})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batches", default="1,64")
    parser.add_argument("--dims", default="1024,4096,4096,1024")
    parser.add_argument("--time", choices=["max_c", "ort"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    dims = [int(d) for d in args.dims.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    if args.time:
        print(best_ms(args.time, dims, args.threads, batches[0]))
        return
    check_agreement(dims, random_weights(dims), args.threads, batches)
    print(f"MLP {' -> '.join(map(str, dims))} (float32, ReLU), {args.threads} thread(s); "
          f"onnxruntime {ort.__version__}, onnx {onnx.__version__}; each engine in its own process")
    print(f"  {'batch':>5} {'max_c ms':>10} {'ORT ms':>10} {'max_c/ORT':>10}")
    for batch in batches:
        ours = theirs = float("inf")
        for _ in range(3):
            ours = min(ours, best_ms_in_child("max_c", args, batch))
            theirs = min(theirs, best_ms_in_child("ort", args, batch))
        print(f"  {batch:>5} {ours:>10.3f} {theirs:>10.3f} {ours / theirs:>10.2f}")


if __name__ == "__main__":
    main()

"""The MLP every language's example builds (C, Python, Rust, Go, Java), built with
max_c.graph, run with max_c.engine and checked against numpy:

    logits = relu(x @ w1 + b1) @ w2        x: float32 [batch, 4] -> logits: float32 [batch, 3]

Every tensor is pattern(shape, scale): element i is ((i * 7) % 11 - 5) * scale, with scales
w1 0.1, b1 0.01, w2 0.05 and x 0.5, so scripts/test.sh can check that all the examples
print the same "batch N: first row ..." lines. The batch is a symbolic dim, so one compiled
model serves every batch size; the weights are bound by name from numpy arrays
(weights_registry), as with MAX's InferenceSession.load.

Run from the repository root (after building libmax_c into build/):

    MAX_C_LIBRARY=build/libmax_c.so PYTHONPATH=bindings/python python examples/python/mlp.py

It exits with status 1 if any result differs from numpy.
"""
import sys

import numpy as np

from max_c.driver import CPU
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import DeviceRef, Graph, TensorType, Weight, ops

IN, HIDDEN, OUT = 4, 16, 3


def build_mlp() -> Graph:
    """The MLP graph: one symbolic-batch input, three named weights, one output."""
    x_type = TensorType(DType.float32, ["batch", IN], device=DeviceRef.CPU())
    with Graph("mlp", input_types=[x_type]) as graph:
        x = graph.inputs[0].tensor
        w1 = Weight("w1", DType.float32, [IN, HIDDEN], device=DeviceRef.CPU())
        b1 = Weight("b1", DType.float32, [HIDDEN], device=DeviceRef.CPU())
        w2 = Weight("w2", DType.float32, [HIDDEN, OUT], device=DeviceRef.CPU())
        hidden = ops.relu(x @ graph.add_weight(w1) + graph.add_weight(b1))
        graph.output(hidden @ graph.add_weight(w2))
    return graph


def pattern(shape, scale: float) -> np.ndarray:
    """The examples' shared data: element i is ((i * 7) % 11 - 5) * scale."""
    i = np.arange(int(np.prod(shape)))
    return ((i * 7 % 11 - 5).astype(np.float32) * np.float32(scale)).reshape(shape)


def make_weights() -> dict:
    """The weights, by the names the graph declares."""
    return {"w1": pattern((IN, HIDDEN), 0.1), "b1": pattern((HIDDEN,), 0.01), "w2": pattern((HIDDEN, OUT), 0.05)}


def reference(x: np.ndarray, w: dict) -> np.ndarray:
    """The same MLP in numpy."""
    return np.maximum(x @ w["w1"] + w["b1"], 0) @ w["w2"]


def main() -> int:
    graph = build_mlp()
    print(f"built graph '{graph.name}' with {graph.num_ops} ops")

    session = InferenceSession(devices=[CPU()])
    weights = make_weights()
    model = session.load(graph, weights_registry=weights)
    for spec in model.input_metadata:
        print(f"input  {spec.name}: {spec.dtype.name} {spec.shape}")  # None = symbolic dim
    for spec in model.output_metadata:
        print(f"output {spec.name}: {spec.dtype.name} {spec.shape}")

    failures = 0
    for batch in (1, 7, 64):
        x = pattern((batch, IN), 0.5)
        y = model.execute(x)[0].to_numpy()
        err = float(np.max(np.abs(y - reference(x, weights))))
        ok = y.shape == (batch, OUT) and err < 1e-5
        failures += not ok
        print(f"batch {batch:2d}: first row {y[0, 0]:.6f} {y[0, 1]:.6f} {y[0, 2]:.6f}")
        print(f"  checked {y.shape}: max |max_c - numpy| = {err:.2e} {'ok' if ok else 'MISMATCH'}")

    print("mlp: OK" if failures == 0 else f"mlp: {failures} mismatch(es)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""The MLP of bench/mlp_vs_onnxruntime.py (1024 -> 4096 -> 4096 -> 1024, ReLU between) as an
ONNX graph: x float32 [batch, 1024] -> y [batch, 1024], MatMul + Add per layer with the
[in, out] weights and the same fixed random weights (seed 0)."""
import numpy as np

from onnx_builder import FLOAT, OnnxBuilder

DIMS = (1024, 4096, 4096, 1024)


def random_weights(dims, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    weights = {}
    for i, (fan_in, fan_out) in enumerate(zip(dims[:-1], dims[1:])):
        weights[f"w{i}"] = (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)
        weights[f"b{i}"] = (0.1 * rng.standard_normal(fan_out)).astype(np.float32)
    return weights


def build(dims=DIMS, seed: int = 0, name: str = "mlp"):
    b, weights = OnnxBuilder(name), random_weights(dims, seed)
    x = b.input("x", FLOAT, ["batch", dims[0]])
    for i in range(len(dims) - 1):
        x = b.op("Add", b.op("MatMul", x, b.weight(f"w{i}", weights[f"w{i}"])),
                 b.weight(f"b{i}", weights[f"b{i}"]))
        if i + 2 < len(dims):
            x = b.op("Relu", x)
    b.output(x, "y", FLOAT, ["batch", dims[-1]])
    return b.model()


def inputs(dims, batch: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(batch + seed)
    return {"x": rng.standard_normal((batch, dims[0])).astype(np.float32)}

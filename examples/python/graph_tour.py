"""A tour of graph building, following the examples of MAX's max.graph reference (Graph,
TensorValue, Value, Type, ops.gather_nd) with max_c's names: `max.graph` is `max_c.graph`,
`max.dtype` is `max_c.dtype`, `max.engine` is `max_c.engine`.

Each stage prints what MAX's docs print, then the graphs that compute something are compiled
and run, and checked against numpy. Run from the repository root:

    MAX_C_LIBRARY=build/libmax_c.so PYTHONPATH=bindings/python python examples/python/graph_tour.py

It exits with status 1 if a result differs from numpy or from what the docs show.
"""
import sys
from dataclasses import dataclass

import numpy as np

from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import DeviceRef, Graph, TensorType, TensorValue, Value, ops

MATRIX = np.array([[1, 2], [3, 4]], dtype=np.float32)
failures = []


def expect(what: str, got, want) -> None:
    """Prints a tour line and remembers a mismatch."""
    ok = got == want
    print(f"  {what}: {got}" + ("" if ok else f"   (expected {want})"))
    if not ok:
        failures.append(what)


def expect_close(what: str, got: np.ndarray, want: np.ndarray) -> None:
    ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-5)
    print(f"  {what}: {got.tolist()}" + ("" if ok else f"   (expected {want.tolist()})"))
    if not ok:
        failures.append(what)


# ---- Graph: a graph built from a callable (the Linear example) ----------------------------


@dataclass
class Linear:
    weight: np.ndarray
    bias: np.ndarray

    def __call__(self, x: TensorValue) -> TensorValue:
        weight_tensor = ops.constant(self.weight, dtype=DType.float32, device=DeviceRef.CPU())
        bias_tensor = ops.constant(self.bias, dtype=DType.float32, device=DeviceRef.CPU())
        return ops.matmul(x, weight_tensor) + bias_tensor


def tour_graph(session: InferenceSession) -> None:
    print("Graph: built from a forward callable")
    linear_graph = Graph("linear", Linear(np.ones((2, 2)), np.ones((2,))),
                         input_types=[TensorType(DType.float32, (2,))])
    expect("graph name", linear_graph.name, "linear")
    expect("output types", [str(t) for t in linear_graph.output_types],
           ["tensor<[2], float32, cpu:0>"])
    # You can't call a Graph from Python: compile it with an InferenceSession, then execute.
    model = session.load(linear_graph)
    x = np.array([1.0, 2.0], np.float32)
    expect_close("linear([1, 2])", model.execute(x)[0].to_numpy(), x @ np.ones((2, 2)) + 1)


# ---- TensorValue: properties, operators and methods ---------------------------------------


def tour_tensor_value() -> None:
    print("TensorValue: properties and operators")
    with Graph("tensor_demo"):
        tensor = ops.constant(MATRIX, dtype=DType.float32, device=DeviceRef.CPU())
        expect("shape", tensor.shape, [2, 2])
        expect("dtype", tensor.dtype, DType.float32)
        expect("rank", tensor.rank, 2)
        expect("device", str(tensor.device), "cpu:0")
        transposed = tensor.T
        doubled = tensor * 2
        expect("transposed shape", transposed.shape, [2, 2])
        expect("doubled shape", doubled.shape, [2, 2])

    print("TensorValue: methods")
    with Graph("methods_demo"):
        tensor = ops.constant(MATRIX, dtype=DType.float32, device=DeviceRef.CPU())
        expect("broadcast_to((3, 2, 2)) shape", tensor.broadcast_to((3, 2, 2)).shape, [3, 2, 2])
        expect("cast(DType.int32) dtype", tensor.cast(DType.int32).dtype, DType.int32)
        expect("flatten() shape", tensor.flatten().shape, [4])
        expect("reshape((1, 4)) shape", tensor.reshape((1, 4)).shape, [1, 4])
        expect("permute([1, 0]) shape", tensor.permute([1, 0]).shape, [2, 2])


# ---- Reductions on a graph input (argmax, max, min, mean, stdev, var) ----------------------


def tour_reductions(session: InferenceSession) -> None:
    print("TensorValue: reductions keep the axis as size 1")
    input_type = TensorType(DType.float32, (2, 3), device=DeviceRef.CPU())
    with Graph("reductions_demo", input_types=[input_type]) as graph:
        x = graph.inputs[0].tensor
        results = {"argmax": x.argmax(axis=1), "max": x.max(axis=1), "min": x.min(axis=1),
                   "mean": x.mean(axis=1), "stdev": x.stdev(axis=1), "var": x.var(axis=1)}
        for name, value in results.items():
            expect(f"{name} shape", value.shape, [2, 1])
        graph.output(*results.values())

    data = np.array([[1, 5, 3], [4, 2, 6]], np.float32)
    outs = [t.to_numpy() for t in session.load(graph).execute(data)]
    numpy_ref = {"argmax": np.argmax(data, 1)[:, None], "max": data.max(1, keepdims=True),
                 "min": data.min(1, keepdims=True), "mean": data.mean(1, keepdims=True),
                 "stdev": data.std(1, keepdims=True), "var": data.var(1, keepdims=True)}
    for (name, want), got in zip(numpy_ref.items(), outs):
        expect_close(name, got, want.astype(got.dtype))


# ---- Value: the edges of the graph ---------------------------------------------------------


def tour_value(session: InferenceSession) -> None:
    print("Value: a + b")
    with Graph("value_example") as graph:
        a = ops.constant(np.array([1, 2, 3]), dtype=DType.float32, device=DeviceRef.CPU())
        b = ops.constant(np.array([4, 5, 6]), dtype=DType.float32, device=DeviceRef.CPU())
        c = a + b  # c is a Value representing the addition
        expect("Is c a Value?", isinstance(c, Value), True)
        graph.output(c)
    expect_close("c", session.load(graph).execute()[0].to_numpy(),
                 np.array([5, 7, 9], np.float32))


# ---- Types, symbolic dims and devices ------------------------------------------------------


def tour_types() -> None:
    print("Type: TensorType and DeviceRef")
    with Graph():
        tensor_type = TensorType(DType.float32, [2, 3])
        expect("tensor element type", tensor_type.dtype, DType.float32)
        expect("tensor shape", tensor_type.shape, [2, 3])
    expect("DeviceRef.CPU()", str(DeviceRef.CPU()), "cpu:0")
    expect("DeviceRef.GPU()", str(DeviceRef.GPU()), "gpu:0")

    print("Symbolic dims: ops.gather_nd with batch_dims=1")
    input_type = TensorType(DType.bfloat16, ["a", "b", "c", "d", "e"])
    indices_type = TensorType(DType.int32, ["a", "f", 3])
    with Graph("gather_nd", input_types=[input_type, indices_type]) as graph:
        input, indices = graph.inputs
        gathered = ops.gather_nd(input, indices, batch_dims=1)
        expect("gathered.type", gathered.type, TensorType(DType.bfloat16, ["a", "f", "e"]))


def main() -> int:
    session = InferenceSession()
    tour_graph(session)
    tour_tensor_value()
    tour_reductions(session)
    tour_value(session)
    tour_types()
    if failures:
        print(f"graph tour: {len(failures)} mismatch(es): {', '.join(failures)}")
        return 1
    print("graph tour: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

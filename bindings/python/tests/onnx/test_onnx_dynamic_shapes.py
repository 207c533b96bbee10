"""ONNX models as exporters ship them, with dims the model leaves open, against ONNX Runtime
at two or more input shapes each: dims declared -1, "?" or unnamed (each its own symbol);
equalities of dims the Dim algebra cannot prove at import (Reshape element counts, Concat
and Add across branches, Squeeze of an expression) accepted there and checked when the
model runs (INVALID_ARGUMENT naming the node, the model staying usable); Resize of symbolic
axes (scale 1, integer nearest upscales, sizes read from shapes); edge, reflect and wrap
Pad of a symbolic axis, with pads computed from constants the way PyTorch exports F.pad."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from max_c import _errors
from max_c.engine import InferenceSession

F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def save(tmp_path, name, nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return str(path)


class Pair:
    """One file loaded in max_c and in ONNX Runtime."""

    def __init__(self, path):
        self.ours = InferenceSession(num_threads=1).load(path)
        self.ort = ort.InferenceSession(path, providers=["CPUExecutionProvider"])

    def check(self, **feeds):
        want = self.ort.run(None, feeds)
        got = [t.to_numpy() for t in self.ours(**feeds)]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def pair(tmp_path, *args, **kwargs):
    return Pair(save(tmp_path, *args, **kwargs))


def rand(*shape):
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def dims_of(model, name):
    return [i.shape for i in model.input_metadata if i.name == name][0]


# ---- 1. dims the file leaves open ----

def test_minus_one_question_mark_and_unnamed_dims_are_each_their_own_symbol(tmp_path):
    """-1, "?" twice, "" and a dim with neither value nor name: five independent dims (the
    two "?" differ at run time, as ONNX Runtime allows)."""
    x = helper.make_tensor_value_info("x", F32, [-1, "?", "?", "", None])
    p = pair(tmp_path, "open_dims", [helper.make_node("Transpose", ["x"], ["y"], perm=[4, 3, 2, 1, 0])],
             [x], [vi("y", F32, None)])
    assert dims_of(p.ours, "x") == [None] * 5
    p.check(x=rand(1, 2, 3, 4, 5))
    p.check(x=rand(3, 5, 2, 1, 2))


def test_named_dims_still_bind_together(tmp_path):
    """A real dim_param names one dim wherever it appears: Add of two "n" inputs needs no check."""
    p = pair(tmp_path, "named", [helper.make_node("Add", ["a", "b"], ["y"])],
             [vi("a", F32, ["n"]), vi("b", F32, ["n"])], [vi("y", F32, ["n"])])
    p.check(a=rand(4), b=rand(4))
    p.check(a=rand(7), b=rand(7))

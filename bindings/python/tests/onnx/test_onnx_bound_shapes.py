"""Shapes computed from data when the model runs: a Reshape's or Expand's shape, Tile's
repeats and ConstantOfShape's input read from (or computed from) input values. Their entries
become symbols a bind_dims binds at run time, so the model is imported and compiled once and
planned per distinct shape, against ONNX Runtime at several values."""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import max_c
from max_c import _errors
from max_c.engine import InferenceSession

F32, I64, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def save(tmp_path, name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return str(path)


def check(path, runs):
    ours = InferenceSession(num_threads=1).load(path)
    theirs = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for feeds in runs:
        want = theirs.run(None, feeds)
        got = [t.to_numpy() for t in ours(**feeds)]
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-6)
    return ours


def reshape_by_computed_shape(tmp_path):
    """y = Reshape(x, s + 0) * 2: the shape computed from the input s (Add), not read from shapes."""
    return save(tmp_path, "reshape", [helper.make_node("Add", ["s", "zero"], ["shape"]),
                                      helper.make_node("Reshape", ["x", "shape"], ["r"]),
                                      helper.make_node("Mul", ["r", "two"], ["y"])],
                [vi("x", F32, ["n", 6]), vi("s", I64, [3])], [vi("y", F32, None)],
                [numpy_helper.from_array(np.zeros(3, np.int64), "zero"), numpy_helper.from_array(np.float32(2), "two")])


def test_reshape_to_a_shape_computed_from_data(tmp_path):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    check(reshape_by_computed_shape(tmp_path),
          [{"x": x, "s": np.int64(s)} for s in ([2, 3, 4], [4, 3, 2], [-1, 2, 3], [0, 2, 3], [2, 0, -1], [1, 1, 24])])


def test_reshape_to_a_bad_computed_shape_fails_the_call_and_the_model_stays_usable(tmp_path):
    model = InferenceSession(num_threads=1).load(reshape_by_computed_shape(tmp_path))
    x = np.ones((4, 6), np.float32)
    with pytest.raises(_errors.MaxError, match="Reshape") as e:
        model(x=x, s=np.int64([5, 5, 1]))
    assert e.value.code == _errors.INVALID_ARGUMENT
    with pytest.raises(_errors.MaxError, match="must be >= 0"):
        model(x=x, s=np.int64([-3, 2, 4]))
    np.testing.assert_array_equal(model(x=x, s=np.int64([2, 2, 6]))[0].to_numpy(), np.full((2, 2, 6), 2.0))


def test_expand_to_a_shape_computed_from_data(tmp_path):
    path = save(tmp_path, "expand", [helper.make_node("Abs", ["s"], ["shape"]),
                                     helper.make_node("Expand", ["x", "shape"], ["y"])],
                [vi("x", F32, [3, 1]), vi("s", I64, [3])], [vi("y", F32, None)])
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    check(path, [{"x": x, "s": np.int64(s)} for s in ([2, 3, 4], [1, 1, 1], [-2, 3, 1], [5, 1, 7])])


def test_expand_against_an_incompatible_computed_shape_fails_the_call(tmp_path):
    path = save(tmp_path, "expand_bad", [helper.make_node("Abs", ["s"], ["shape"]),
                                         helper.make_node("Expand", ["x", "shape"], ["y"])],
                [vi("x", F32, [3, 1]), vi("s", I64, [2])], [vi("y", F32, None)])
    model = InferenceSession(num_threads=1).load(path)
    with pytest.raises(_errors.MaxError) as e:
        model(x=np.ones((3, 1), np.float32), s=np.int64([4, 2]))
    assert e.value.code == _errors.INVALID_ARGUMENT
    assert model(x=np.ones((3, 1), np.float32), s=np.int64([3, 2]))[0].to_numpy().shape == (3, 2)


def test_tile_by_repeats_computed_from_data(tmp_path):
    path = save(tmp_path, "tile", [helper.make_node("Cast", ["r"], ["repeats"], to=I64),
                                   helper.make_node("Tile", ["x", "repeats"], ["y"])],
                [vi("x", F32, [2, "w"]), vi("r", I32, [2])], [vi("y", F32, None)])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(path, [{"x": x, "r": np.int32(r)} for r in ([1, 1], [3, 2], [2, 5], [0, 2])])


def test_constant_of_shape_computed_from_data(tmp_path):
    value = helper.make_tensor("v", F32, [1], [1.5])
    path = save(tmp_path, "cos", [helper.make_node("Add", ["d", "one"], ["shape"]),
                                  helper.make_node("ConstantOfShape", ["shape"], ["c"], value=value),
                                  helper.make_node("Mul", ["c", "k"], ["y"])],
                [vi("d", I64, [2]), vi("k", F32, [])], [vi("y", F32, None)],
                [numpy_helper.from_array(np.int64(1), "one")])
    check(path, [{"d": np.int64(d), "k": np.array(2, np.float32)} for d in ([1, 2], [4, 0], [0, 0], [2, 2])])


_RUN_SCRIPT = """
import sys
import numpy as np
from max_c.engine import InferenceSession
model = InferenceSession(num_threads=1).load(sys.argv[1])
x = np.arange(24, dtype=np.float32).reshape(4, 6)
for s in ([2, 3, 4], [4, 3, 2], [2, 3, 4], [-1, 2, 3], [4, 3, 2]):
    model(x=x, s=np.int64(s))
"""


def test_the_model_compiles_once_and_plans_per_distinct_shape(tmp_path):
    """The debug log prints the program each compile makes and each plan: one compile for
    five runs, and a plan of the stage after the shape per distinct shape (three; [-1, 2, 3]
    resolves to [4, 2, 3]), where the specializer compiled the model per shape."""
    # The child imports max_c as this process did (conftest puts the binding on sys.path, not
    # on PYTHONPATH).
    binding = os.path.dirname(os.path.dirname(os.path.abspath(max_c.__file__)))
    path = os.pathsep.join(p for p in (binding, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, MAX_C_LOG_LEVEL="debug", MAX_C_LIBRARY=os.path.realpath(max_c.library_path),
               PYTHONPATH=path)
    proc = subprocess.run([sys.executable, "-c", _RUN_SCRIPT, reshape_by_computed_shape(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(re.findall(r"compiled graph '", proc.stderr)) == 1, proc.stderr[-3000:]
    assert len(re.findall(r"planned \d+ steps", proc.stderr)) == 1 + 3, proc.stderr[-3000:]


def test_a_computed_shape_inside_a_loop_body_still_specializes(tmp_path):
    """A while_loop region is planned whole with its op, so dims it computes from data are not
    bound inside it: such a model keeps compiling per value of the inputs they come from."""
    body = helper.make_graph(
        [helper.make_node("Reshape", ["v_in", "s"], ["r"]), helper.make_node("Reshape", ["r", "flat"], ["v_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [vi("i", I64, []), vi("c_in", TensorProto.BOOL, []), vi("v_in", F32, [6])],
        [vi("c_out", TensorProto.BOOL, []), vi("v_out", F32, [6])],
        [numpy_helper.from_array(np.int64([6]), "flat")])
    path = save(tmp_path, "loop", [helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)],
                [vi("x", F32, [6]), vi("n", I64, []), vi("s", I64, [2])], [vi("y", F32, None)])
    x = np.arange(6, dtype=np.float32)
    check(path, [{"x": x, "n": np.array(n, np.int64), "s": np.int64(s)} for n, s in ((2, [2, 3]), (3, [3, 2]))])

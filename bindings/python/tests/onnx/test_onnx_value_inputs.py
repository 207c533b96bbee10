"""ONNX models whose graph depends on the values of some inputs (a Reshape's shape, Range's
bounds, a reduction's axes fed as graph inputs): they load with their declared signature and
are compiled per distinct set of those values when run, as ONNX Runtime runs them. (A shape
fed as an input, as the Reshape here, is bound at run time instead: test_onnx_bound_shapes.py.)"""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from max_c import _errors
from max_c.engine import InferenceSession

F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def save(tmp_path, name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return str(path)


@pytest.fixture
def reshape_model(tmp_path):
    """y = Reshape(x, shape) * w, the shape a graph input."""
    w = np.float32(3)
    return save(tmp_path, "reshape", [helper.make_node("Reshape", ["x", "shape"], ["r"]),
                                      helper.make_node("Mul", ["r", "w"], ["y"])],
                [helper.make_tensor_value_info("x", F32, [2, 6]), helper.make_tensor_value_info("shape", I64, [2])],
                [helper.make_tensor_value_info("y", F32, ["a", "b"])],
                [numpy_helper.from_array(np.array(w), "w")])


def test_a_shape_fed_as_an_input_is_compiled_per_value(reshape_model):
    model = InferenceSession(num_threads=1).load(reshape_model)
    assert [s.name for s in model.input_metadata] == ["x", "shape"]
    assert [s.name for s in model.output_metadata] == ["y"]
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for shape in ([3, 4], [4, 3], [3, 4], [-1, 2], [0, 6]):
        got = model.execute(x, np.array(shape, np.int64))[0].to_numpy()
        want = x.reshape([d if d != 0 else x.shape[i] for i, d in enumerate(shape)]) * 3
        np.testing.assert_array_equal(got, want)
    by_name = model(x=x, shape=np.array([6, 2], np.int64))[0].to_numpy()
    np.testing.assert_array_equal(by_name, x.reshape(6, 2) * 3)


def test_a_bad_value_fails_the_call_and_the_model_stays_usable(reshape_model):
    model = InferenceSession(num_threads=1).load(reshape_model)
    x = np.ones((2, 6), np.float32)
    with pytest.raises(_errors.MaxError, match="Reshape"):
        model.execute(x, np.array([5, 5], np.int64))
    with pytest.raises(ValueError, match="shape"):
        model.execute(x, np.array([1, 2, 3], np.int64))  # the declared [2] is checked
    np.testing.assert_array_equal(model.execute(x, np.array([3, 4], np.int64))[0].to_numpy(), np.full((3, 4), 3.0))


def test_weights_given_or_reloaded_reach_every_specialization(reshape_model):
    model = InferenceSession(num_threads=1).load(reshape_model, weights_registry={"w": np.float32(5)})
    x = np.ones((2, 6), np.float32)
    np.testing.assert_array_equal(model.execute(x, np.array([3, 4], np.int64))[0].to_numpy(), np.full((3, 4), 5.0))
    model.reload({"w": np.float32(7)})
    np.testing.assert_array_equal(model.execute(x, np.array([3, 4], np.int64))[0].to_numpy(), np.full((3, 4), 7.0))
    np.testing.assert_array_equal(model.execute(x, np.array([4, 3], np.int64))[0].to_numpy(), np.full((4, 3), 7.0))
    with pytest.raises(ValueError, match="not a weight"):
        model.reload({"nope": np.float32(1)})


def test_values_needed_only_once_others_are_bound(tmp_path):
    """Range's bounds come from inputs, and its length then shapes a Reshape: the first read
    learns it needs `n`, the specialized read with `n` bound learns nothing more."""
    path = save(tmp_path, "range", [
        helper.make_node("Range", ["zero", "n", "one"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=F32),
        helper.make_node("Add", ["rf", "x"], ["y"])],
        [helper.make_tensor_value_info("x", F32, []), helper.make_tensor_value_info("n", I64, [])],
        [helper.make_tensor_value_info("y", F32, ["n"])],
        [numpy_helper.from_array(np.array(0, np.int64), "zero"), numpy_helper.from_array(np.array(1, np.int64), "one")])
    model = InferenceSession(num_threads=1).load(path)
    for n in (3, 5):
        got = model.execute(np.float32(0.5), np.array(n, np.int64))[0].to_numpy()
        np.testing.assert_array_equal(got, np.arange(n, dtype=np.float32) + 0.5)


def test_reduction_axes_fed_as_an_input(tmp_path):
    path = save(tmp_path, "reduce", [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
                [helper.make_tensor_value_info("x", F32, [2, 3, 4]), helper.make_tensor_value_info("axes", I64, [1])],
                [helper.make_tensor_value_info("y", F32, None)])
    model = InferenceSession(num_threads=1).load(path)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    for axis in (0, 2, -2):
        got = model.execute(x, np.array([axis], np.int64))[0].to_numpy()
        np.testing.assert_allclose(got, x.sum(axis=axis), rtol=1e-5, atol=1e-6)


def test_a_specializing_model_is_not_captured(tmp_path):
    path = save(tmp_path, "reduce", [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
                [helper.make_tensor_value_info("x", F32, [2, 3]), helper.make_tensor_value_info("axes", I64, [1])],
                [helper.make_tensor_value_info("y", F32, None)])
    model = InferenceSession(num_threads=1).load(path)
    with pytest.raises(_errors.MaxError, match="compiled per set") as e:
        model.capture(0, np.ones((2, 3), np.float32), np.array([0], np.int64))
    assert e.value.code == _errors.UNIMPLEMENTED


def test_a_model_bound_by_a_shape_input_runs_in_stages_and_is_not_captured(reshape_model):
    """A Reshape's shape fed as an input is bound when the model runs (bind_dims), so the
    model runs in stages rather than compiling per value."""
    model = InferenceSession(num_threads=1).load(reshape_model)
    x, shape = np.ones((2, 6), np.float32), np.array([3, 4], np.int64)
    with pytest.raises(_errors.MaxError, match="runs in stages") as e:
        model.capture(0, x, shape)
    assert e.value.code == _errors.UNIMPLEMENTED


@pytest.mark.parametrize("elem", [TensorProto.FLOAT16, TensorProto.BFLOAT16])
def test_half_typed_range_bounds_are_folded(tmp_path, elem):
    """Range's bounds in float16/bfloat16, fed as inputs: known once given, they fold at
    import like float32 ones (the element values rounded as the half type rounds them)."""
    path = save(tmp_path, "half_range", [helper.make_node("Range", ["start", "limit", "delta"], ["y"])],
                [helper.make_tensor_value_info(n, elem, []) for n in ("start", "limit", "delta")],
                [helper.make_tensor_value_info("y", elem, ["n"])])
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    model = InferenceSession(num_threads=1).load(path)
    for start, limit, delta in ((1, 5, 2), (-1.5, 2, 0.75), (0.1, 0.8, 0.3)):
        got = model.execute(*[np.array(v, dtype) for v in (start, limit, delta)])[0].to_numpy()
        s, l, d = (float(np.array(v, dtype)) for v in (start, limit, delta))
        want = np.array([s + i * d for i in range(int(np.ceil((l - s) / d)))]).astype(np.float32).astype(dtype)
        np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


def test_a_shape_computed_in_float16_folds_into_a_reshape(tmp_path):
    """Shape arithmetic in float16 (Cast, Mul, Ceil, Cast back) on a value input: it folds at
    import, each step rounded to float16 as at run time, and ends in the Reshape's shape."""
    F16 = TensorProto.FLOAT16
    path = save(tmp_path, "half_shape", [
        helper.make_node("Cast", ["rows"], ["rows_h"], to=F16),
        helper.make_node("Mul", ["rows_h", "ratio"], ["scaled"]),
        helper.make_node("Ceil", ["scaled"], ["up"]),
        helper.make_node("Cast", ["up"], ["n"], to=I64),
        helper.make_node("Concat", ["n", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"])],
        [helper.make_tensor_value_info("x", F32, [60]), helper.make_tensor_value_info("rows", I64, [1])],
        [helper.make_tensor_value_info("y", F32, None)],
        [numpy_helper.from_array(np.array([0.3], np.float16), "ratio"),
         numpy_helper.from_array(np.array([-1], np.int64), "minus_one")])
    model = InferenceSession(num_threads=1).load(path)
    x = np.arange(60, dtype=np.float32)
    # float16(0.3) is 0.300048828125: 10 times it is 3.00049 in float32, whose ceiling would
    # be 4, but float16 rounds it to 3.
    for rows, want_rows in ((10, 3), (20, 6), (5, 2)):
        got = model.execute(x, np.array([rows], np.int64))[0].to_numpy()
        assert got.shape == (want_rows, 60 // want_rows)


def test_half_typed_range_with_a_zero_delta_is_invalid(tmp_path):
    F16 = TensorProto.FLOAT16
    path = save(tmp_path, "zero_delta", [helper.make_node("Range", ["start", "limit", "delta"], ["y"])],
                [helper.make_tensor_value_info(n, F16, []) for n in ("start", "limit", "delta")],
                [helper.make_tensor_value_info("y", F16, ["n"])])
    model = InferenceSession(num_threads=1).load(path)
    with pytest.raises(_errors.MaxError, match=r"\(Range\): delta is 0") as e:
        model.execute(np.float16(0), np.float16(4), np.float16(0))
    assert e.value.code == _errors.INVALID_ARGUMENT

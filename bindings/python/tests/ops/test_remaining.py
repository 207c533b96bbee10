"""Conformance against numpy of the registry ops the per-family suites do not name:
argmin, slice_tensor (the registry op, by its attributes and with numpy-style indices) and
constant_external (a weight declared as an op)."""
import numpy as np
import pytest

from harness import assert_close, run
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import OPEN, Graph, TensorType, ops


def rand(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, size=shape).astype(dtype)


# ---- argmin --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -1),
                                        ((2, 3, 4), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_argmin(shape, axis, dtype):
    x = rand(shape, dtype)
    (y,) = run(lambda v: ops.argmin(v, axis=axis), [x])
    assert_close(y, np.expand_dims(np.argmin(x, axis=axis), axis).astype(np.int64))


def test_argmin_ties_pick_the_first_index():
    # MAX: on CPU, the first of equal minima.
    x = np.array([[3, 1, 1, 2], [0, 0, 0, 0]], np.float32)
    (y,) = run(lambda v: ops.argmin(v), [x])
    assert_close(y, np.array([[1], [0]], np.int64))


def test_argmin_default_axis_is_last():
    x = rand((4, 6))
    (y,) = run(lambda v: ops.argmin(v), [x])
    assert_close(y, np.argmin(x, axis=-1)[:, None].astype(np.int64))


# ---- slice_tensor --------------------------------------------------------------------------


@pytest.mark.parametrize("index", [
    (slice(1, 3),),
    (slice(None), slice(None, None, 2)),
    (slice(None, None, -1), 1),
    (Ellipsis, None, slice(1, None)),
    (-1, slice(-3, None)),
    (slice(0, 0),),
])
def test_slice_tensor_with_indices(index):
    x = rand((4, 5), np.float32)
    (y,) = run(lambda v: ops.slice_tensor(v, index), [x])
    assert_close(y, x[index])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_slice_tensor_registry_attributes(dtype):
    x = rand((6, 4), np.float32) > 0 if dtype is np.bool_ else rand((6, 4), dtype)
    (y,) = run(lambda v: ops.slice_tensor(v, starts=[1, OPEN], stops=[5, OPEN],
                                          steps=[2, -1]), [x])
    assert_close(y, x[1:5:2, ::-1])


def test_slice_tensor_squeeze_and_new_axes():
    x = rand((3, 4, 5))
    (y,) = run(lambda v: ops.slice_tensor(v, starts=[1, 0, 2], stops=[2, 4, 4],
                                          squeeze_axes=[0], new_axes=[0]), [x])
    assert_close(y, x[1, :, 2:4][None])


def test_slice_tensor_with_symbolic_out_dim():
    x = rand((6, 3))
    with Graph("sym_slice", input_types=[TensorType(DType.float32, ["n", 3])]) as g:
        g.output(ops.slice_tensor(g.inputs[0], [(slice(1, None), "n - 1")]))
    y = InferenceSession(num_threads=1).load(g).execute(x)[0].to_numpy()
    assert_close(y, x[1:])


# ---- constant_external ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [DType.float32, DType.int64])
def test_constant_external_is_bound_by_name(dtype):
    w = rand((3, 2), dtype.to_numpy(), seed=3)
    x = rand((4, 3), dtype.to_numpy(), seed=4)
    with Graph("ext", input_types=[TensorType(dtype, ["batch", 3])]) as g:
        weight = ops.constant_external("proj", TensorType(dtype, [3, 2]))
        assert weight.dtype == dtype and weight.shape == [3, 2]
        g.output(g.inputs[0] @ weight)
    model = InferenceSession(num_threads=1).load(g, weights_registry={"proj": w})
    assert [s.name for s in model.weights_metadata] == ["proj"]
    assert_close(model.execute(x)[0].to_numpy(), x @ w)


def test_constant_external_same_name_is_one_weight():
    w = rand((3,), seed=5)
    with Graph("ext_twice", input_types=[TensorType(DType.float32, [3])]) as g:
        a = ops.constant_external("v", TensorType(DType.float32, [3]))
        b = ops.constant_external("v", TensorType(DType.float32, [3]))
        g.output(g.inputs[0] + a + b)
    model = InferenceSession(num_threads=1).load(g, weights_registry={"v": w})
    assert [s.name for s in model.weights_metadata] == ["v"]
    x = rand((3,), seed=6)
    assert_close(model.execute(x)[0].to_numpy(), x + 2 * w)

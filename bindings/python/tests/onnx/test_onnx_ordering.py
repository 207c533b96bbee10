"""ReduceMax, ReduceMin, ArgMax, ArgMin and TopK on every integer type and bool. Our ordering
kernels take floats, int32 and int64; the other types are ordered through a key that keeps
their order (uint64 through its value less 2^63), so the extremes of each type's range come
out exact, against numpy."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from max_c.engine import InferenceSession

I64 = TensorProto.INT64
RNG = np.random.default_rng(5)
INTEGER_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def spread(dtype, shape):
    """Values from all over the type's range, its minimum and maximum included, with ties."""
    info = np.iinfo(dtype)
    picks = np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1, info.max // 2, info.max // 2 + 1],
                     dtype=dtype)
    return RNG.choice(picks, size=shape)


def run(tmp_path, node, x, out_types, extra_inputs=(), opset=18):
    inputs = [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)]
    inputs += [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
               for n, v in extra_inputs]
    outputs = [helper.make_tensor_value_info(o, t, None) for o, t in zip(node.output, out_types)]
    graph = helper.make_graph([node], "ordering", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return [t.to_numpy() for t in InferenceSession(num_threads=1).load(str(path)).execute(
        x, *[v for _, v in extra_inputs])]


@pytest.mark.parametrize("dtype", INTEGER_TYPES + [np.bool_])
@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_reduce_max_min_of_every_integer_type_and_bool(tmp_path, op, dtype):
    x = RNG.random((4, 5)) < 0.5 if dtype is np.bool_ else spread(dtype, (4, 5))
    node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)
    got = run(tmp_path, node, x, [helper.np_dtype_to_tensor_dtype(x.dtype)],
              [("axes", np.array([1], np.int64))], opset=20)[0]
    want = x.max(axis=1) if op == "ReduceMax" else x.min(axis=1)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", INTEGER_TYPES)
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_max_min_of_every_integer_type(tmp_path, op, dtype):
    x = spread(dtype, (3, 6))
    got = run(tmp_path, helper.make_node(op, ["x"], ["y"], axis=1, keepdims=0), x, [I64])[0]
    np.testing.assert_array_equal(got, x.argmax(axis=1) if op == "ArgMax" else x.argmin(axis=1))


def top_k_reference(x, k, largest):
    """Sorted by value (largest or smallest first), ties by the lower index, along axis 1."""
    order = np.array([sorted(range(x.shape[1]), key=lambda i: (-int(r[i]) if largest else int(r[i]), i))[:k]
                      for r in x])
    return np.take_along_axis(x, order, axis=1), order


@pytest.mark.parametrize("dtype", INTEGER_TYPES)
@pytest.mark.parametrize("largest", [1, 0])
def test_top_k_of_every_integer_type_either_way(tmp_path, dtype, largest):
    """The smallest of a signed type include its minimum, which negating would overflow."""
    x = spread(dtype, (3, 7))
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=1, largest=largest)
    values, indices = run(tmp_path, node, x, [helper.np_dtype_to_tensor_dtype(x.dtype), I64],
                          [("k", np.array([4], np.int64))])
    want_values, want_indices = top_k_reference(x, 4, largest)
    assert values.dtype == x.dtype
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(indices, want_indices)


def test_top_k_of_uint64_above_two_to_the_63(tmp_path):
    """uint64 values at and above 2^63 order above those below it (they would not as int64)."""
    x = np.array([[2**63, 5, 2**64 - 1, 2**63 - 1, 0]], np.uint64)
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=-1)
    values, indices = run(tmp_path, node, x, [TensorProto.UINT64, I64], [("k", np.array([3], np.int64))])
    np.testing.assert_array_equal(values, np.array([[2**64 - 1, 2**63, 2**63 - 1]], np.uint64))
    np.testing.assert_array_equal(indices, [[2, 0, 3]])

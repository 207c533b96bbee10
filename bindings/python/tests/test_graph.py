import numpy as np
import pytest

import max_c
from max_c.dtype import DType
from max_c.graph import REGISTRY, DeviceRef, Graph, TensorType, TensorValue, Weight, ops


def mlp():
    with Graph("mlp", input_types=[TensorType(DType.float32, ["batch", 4])]) as g:
        x = g.inputs[0]
        w1 = g.add_weight(Weight("w1", DType.float32, [4, 8]))
        b1 = ops.constant(np.zeros(8, np.float32))
        h = ops.relu(x @ w1 + b1)
        w2 = g.add_weight("w2", DType.float32, [8, 2])
        y = ops.softmax(h @ w2)
        g.output(y)
    return g, y


def test_device_ref_and_types():
    assert str(DeviceRef.CPU()) == "cpu:0" and str(DeviceRef.GPU(1)) == "gpu:1"
    assert DeviceRef.from_device("cpu:0") == DeviceRef.CPU()
    t = TensorType(DType.float32, ["batch", "batch * 2", 3])
    assert t.rank == 3 and t.device == DeviceRef.CPU()


def test_mlp_symbolic_batch():
    g, y = mlp()
    assert isinstance(y, TensorValue)
    assert y.shape == ["batch", 2] and y.dtype is DType.float32 and y.rank == 2
    assert y.type == TensorType(DType.float32, ["batch", 2])
    assert y.device == DeviceRef.CPU()
    assert g.output_types == [y.type] and g.name == "mlp"
    g.verify()
    with pytest.raises(LookupError):
        Graph.current


def test_symbolic_expressions():
    with Graph("s", input_types=[TensorType(DType.float32, ["batch", 3])]) as g:
        x = g.inputs[0]
        c = ops.concat([x, x], axis=0)
        assert c.shape == ["batch * 2", 3] or c.shape == ["2 * batch", 3]
        g.output(c)


def test_op_errors_are_value_errors_and_graph_stays_usable():
    with Graph("e", input_types=[TensorType(DType.float32, [2, 3])]) as g:
        x = g.inputs[0]
        n = g.num_ops
        with pytest.raises(ValueError) as e:
            x @ x
        assert isinstance(e.value, max_c.MaxValueError) and "matmul" in str(e.value)
        assert g.num_ops == n
        with pytest.raises(TypeError, match="dtype"):
            ops.cast(x, "no_such_dtype")
        with pytest.raises(LookupError):
            ops.add_op("no_such_op", [x])
        y = x + 1
        g.output(y)
        assert y.shape == [2, 3]


def test_every_registry_op_reachable():
    assert len(REGISTRY) > 50
    for name in REGISTRY:
        assert callable(getattr(ops, name)), name
    assert "slice_tensor" in REGISTRY and "matmul" in REGISTRY


def test_operator_sugar():
    with Graph("ops", input_types=[TensorType(DType.float32, [2, 3]),
                                   TensorType(DType.bool, [2, 3])]) as g:
        x, b = g.inputs
        for v in (x + x, x - 1, 2 * x, x / x, x % 2.0, x ** 2, -x, abs(x), 1 - x):
            assert v.shape == [2, 3] and v.dtype is DType.float32
        for v in (x == x, x != 1, x > 0, x >= 0, x < 0, x <= 0, b & b, b | b, b ^ b, ~b):
            assert v.dtype is DType.bool and v.shape == [2, 3]
        assert (x @ x.T).shape == [2, 2]
        assert x.reshape([3, 2]).shape == [3, 2]
        assert x.transpose(0, 1).shape == [3, 2]
        assert x.permute([1, 0]).shape == [3, 2]
        assert x.cast(DType.int32).dtype is DType.int32
        assert x.flatten().shape == [6]
        assert x[None].broadcast_to([4, 2, 3]).shape == [4, 2, 3]
        assert ops.where(b, x, 0).dtype is DType.float32
        assert ops.top_k(x, 2)[0].shape == [2, 2]
        assert len(ops.split(x, [1, 2], axis=1)) == 2
        g.output(x)


def test_slicing():
    with Graph("sl", input_types=[TensorType(DType.float32, ["batch", 4, 6])]) as g:
        x = g.inputs[0]
        assert x[:, 1:3].shape == ["batch", 2, 6]
        assert x[0].shape == [4, 6]
        assert x[..., -1].shape == ["batch", 4]
        assert x[:, None, ::2].shape == ["batch", 1, 2, 6]
        assert x[:, :, ::-1].shape == ["batch", 4, 6]
        assert x[1:, 0, 1:5:2].shape == ["batch - 1", 2] or x[1:, 0, 1:5:2].rank == 2
        with pytest.raises(IndexError):
            x[0, 0, 0, 0]
        with pytest.raises(ValueError):
            x[:, 9]
        g.output(x)


def test_serialization_roundtrip(tmp_path):
    g, _ = mlp()
    data = g.serialize()
    assert isinstance(data, bytes) and len(data) > 0
    g2 = Graph.deserialize(data)
    assert g2.serialize() == data
    assert str(g2) == str(g)
    p = tmp_path / "mlp.maxg"
    g.save(p)
    g3 = Graph.load(p)
    assert g3.serialize() == data
    with pytest.raises(max_c.MaxError):
        Graph.deserialize(data[: len(data) // 2])
    with pytest.raises(LookupError):
        Graph.load(tmp_path / "missing.maxg")


def test_text_and_dot():
    g, _ = mlp()
    text = str(g)
    assert "mlp" in text and "matmul" in text and "relu" in text
    dot = g.to_dot()
    assert dot.lstrip().startswith("digraph") and "matmul" in dot


def test_graph_lifetime():
    g, y = mlp()
    g.close()
    g.close()
    with pytest.raises(max_c.MaxRuntimeError):
        y.shape
    with pytest.raises(max_c.MaxRuntimeError):
        g.serialize()


def test_forward():
    g = Graph("f", forward=lambda x: ops.tanh(x) * 2.0,
              input_types=[TensorType(DType.float32, [3])])
    assert g.outputs[0].shape == [3]


def test_scalars_and_constants_follow_the_graphs_device():
    """A GPU graph's scalars live on its GPU (a graph does not span devices), and
    ops.constant(value, dtype, device) places the constant where asked."""
    from max_c.graph import DeviceRef, Graph, TensorType, ops
    from max_c.dtype import DType
    with Graph("placed", input_types=[TensorType(DType.float32, [2], DeviceRef.GPU(0))]) as g:
        x = g.inputs[0]
        y = x * 0.5 + np.float32(1)
        c = ops.constant(3.0, DType.float32, DeviceRef.GPU(0))
        h = ops.constant(3.0, DType.float32)
        g.output(y + c)
    assert y.device == DeviceRef.GPU(0)
    assert c.device == DeviceRef.GPU(0)
    assert h.device == DeviceRef.CPU()

"""An .onnx file through InferenceSession.load: its initializers are the model's own
weights, a symbolic batch (dim_param) runs at several sizes, a weight given at load or
reload overrides the file's, and a bad file or operator fails with a clear status."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import max_c
from max_c.engine import InferenceSession


def mlp_model(path, w1, b1, w2):
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", w1.shape[1]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", w2.shape[1]])],
        initializer=[numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                     numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))
    return path


@pytest.fixture
def weights():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((32, 16)).astype(np.float32), rng.standard_normal(32).astype(np.float32),
            rng.standard_normal((32, 8)).astype(np.float32))


def reference(x, w1, b1, w2):
    return np.maximum(x @ w1.T + b1, 0) @ w2


def test_initializers_bind_and_batches_vary(tmp_path, weights):
    model = InferenceSession(num_threads=1).load(mlp_model(tmp_path / "mlp.onnx", *weights))
    assert [s.name for s in model.input_metadata] == ["x"]
    for batch in (1, 7, 64):
        x = np.random.default_rng(batch).standard_normal((batch, 16)).astype(np.float32)
        np.testing.assert_allclose(model.execute(x)[0].to_numpy(), reference(x, *weights), rtol=1e-4, atol=1e-4)


def test_given_weights_override_the_files(tmp_path, weights):
    path = mlp_model(tmp_path / "mlp.onnx", *weights)
    w2 = np.ones((32, 8), np.float32)
    model = InferenceSession(num_threads=1).load(path, weights_registry={"w2": w2})
    x = np.ones((2, 16), np.float32)
    np.testing.assert_allclose(model.execute(x)[0].to_numpy(), reference(x, weights[0], weights[1], w2), rtol=1e-4)
    model.reload({"w2": weights[2]})
    np.testing.assert_allclose(model.execute(x)[0].to_numpy(), reference(x, *weights), rtol=1e-4, atol=1e-4)


def test_bad_files_and_operators(tmp_path, weights):
    good = mlp_model(tmp_path / "mlp.onnx", *weights).read_bytes()
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(good[: len(good) // 2])
    with pytest.raises(max_c.MaxError) as err:
        InferenceSession().load(truncated)
    assert err.value.code_name in ("DATA_LOSS", "INVALID_ARGUMENT")
    node = helper.make_node("ImageDecoder", ["x"], ["y"])  # an operator we do not import
    graph = helper.make_graph([node], "d", [helper.make_tensor_value_info("x", TensorProto.UINT8, [None])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [None, None, 3])])
    path = tmp_path / "decoder.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), str(path))
    with pytest.raises(max_c.MaxError, match="ImageDecoder") as err:
        InferenceSession().load(path)
    assert err.value.code_name == "UNIMPLEMENTED"


def test_device_places_the_file(tmp_path, weights):
    """load(path, device=...) runs an ONNX model (which carries no placement) there; the host
    is one such device, and a graph is refused the option (it names its own devices)."""
    from max_c.driver import CPU, accelerator_count, Accelerator
    from max_c.graph import Graph, TensorType
    path = mlp_model(tmp_path / "mlp.onnx", *weights)
    session = InferenceSession(num_threads=1)
    model = session.load(path, device=CPU())
    assert model.input_metadata[0].device.is_host
    x = np.ones((3, 16), np.float32)
    np.testing.assert_allclose(model.execute(x)[0].to_numpy(), reference(x, *weights), rtol=1e-4, atol=1e-4)
    with Graph("g", input_types=[TensorType(max_c.dtype.DType.float32, [2])]) as g:
        g.output(g.inputs[0])
    with pytest.raises(ValueError, match="device= places a model file"):
        session.load(g, device=CPU())
    if accelerator_count() == 0:
        return
    gpu = Accelerator()
    with pytest.raises(ValueError, match="not among the context's devices"):
        session.load(path, device=gpu)  # a CPU session has no GPU to run it on
    on_gpu = InferenceSession(devices=[CPU(), gpu], num_threads=1).load(path, device=gpu)
    assert not on_gpu.input_metadata[0].device.is_host
    out = on_gpu.execute(max_c.driver.Tensor.from_numpy(x).to(gpu))[0].to(CPU()).to_numpy()
    np.testing.assert_allclose(out, reference(x, *weights), rtol=1e-4, atol=1e-4)

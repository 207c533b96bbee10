"""Capture and replay on gpu:0 (issue 9): a graph placed on the GPU, captured under a key with
device inputs, is a CUDA graph; a replay on new inputs rewrites the captured outputs in place,
and debug_verify_replay checks that an eager run launches what the graph recorded. These run
only where an accelerator is present and skip saying so elsewhere (fail under
MAX_C_REQUIRE_GPU=1) (capture is tested on the
host in test_engine.py, and as CUDA graph capture on the emulated GPU in tests/gpu_engine)."""
import numpy as np
import pytest

from max_c.driver import CPU, Accelerator, Tensor
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import DeviceRef, Graph, TensorType, ops

SHAPE = (8, 16)


@pytest.fixture
def gpu_model(gpu):
    session = InferenceSession(devices=[CPU(), gpu])
    t = TensorType(DType.float32, SHAPE, DeviceRef.GPU())
    # A matmul, an elementwise group and a softmax: the kernels a captured transformer uses.
    graph = Graph("captured", lambda a, b: ops.softmax(ops.relu(a @ ops.transpose(b, 0, 1)) + a.sum(-1)),
                  input_types=[t, t])
    return session.load(graph)


def _reference(a, b):
    x = np.maximum(a @ b.T, 0) + a.sum(-1, keepdims=True)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _on_gpu(x):
    return Tensor.from_numpy(x).to(Accelerator())


def test_replay_on_the_gpu_rewrites_the_captured_outputs(gpu_model):
    rng = np.random.default_rng(9)
    a1, b1, a2, b2 = (rng.standard_normal(SHAPE).astype(np.float32) for _ in range(4))
    (out,) = gpu_model.capture(7, _on_gpu(a1), _on_gpu(b1))
    assert not out.device.is_host
    np.testing.assert_allclose(out.to(CPU()).to_numpy(), _reference(a1, b1), rtol=1e-4, atol=1e-6)
    gpu_model.replay(7, _on_gpu(a2), _on_gpu(b2))
    np.testing.assert_allclose(out.to(CPU()).to_numpy(), _reference(a2, b2), rtol=1e-4, atol=1e-6)
    gpu_model.debug_verify_replay(7, _on_gpu(a2), _on_gpu(b2))
    # An eager run beside the graph gives the same numbers.
    (eager,) = gpu_model.execute(_on_gpu(a1), _on_gpu(b1))
    np.testing.assert_allclose(eager.to(CPU()).to_numpy(), _reference(a1, b1), rtol=1e-4, atol=1e-6)


def test_a_host_input_to_a_gpu_graph_is_refused_naming_it(gpu_model):
    a = np.ones(SHAPE, np.float32)
    with pytest.raises(Exception, match="input"):
        gpu_model.capture(8, Tensor.from_numpy(a), _on_gpu(a))
    # The model is still usable.
    (out,) = gpu_model.execute(_on_gpu(a), _on_gpu(a))
    np.testing.assert_allclose(out.to(CPU()).to_numpy(), _reference(a, a), rtol=1e-4, atol=1e-6)

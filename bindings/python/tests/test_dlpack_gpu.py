"""DLPack on device memory with the frameworks a GPU machine has (issue 9): tensors of torch
and CuPy on the GPU come in without a copy, go back out without one, and feed a graph on
gpu:0. These run only where an accelerator and the framework's CUDA build are both present;
elsewhere they skip saying which is missing (and fail, with no accelerator, under
MAX_C_REQUIRE_GPU=1) (the import and export paths themselves are
tested without a GPU in test_dtype_driver.py and by the C suites)."""
import numpy as np
import pytest

from max_c.driver import CPU, Accelerator, Tensor
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import DeviceRef, Graph, TensorType


def _doubled_on_gpu(t):
    """t + t by a graph placed on gpu:0, fed the device tensor itself."""
    session = InferenceSession(devices=[CPU(), Accelerator()])
    graph = Graph("double", lambda a: a + a,
                  input_types=[TensorType(DType.float32, t.shape, DeviceRef.GPU())])
    (out,) = session.load(graph).execute(t)
    return out


def test_torch_cuda_tensors_round_trip_without_copies(gpu):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    x = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    t = Tensor.from_dlpack(x)
    assert not t.device.is_host and t.device.api == "cuda"
    assert tuple(t.shape) == (3, 4)
    y = torch.from_dlpack(t)
    assert y.device.type == "cuda" and y.data_ptr() == x.data_ptr()
    y.add_(1)  # torch writes the memory both share
    np.testing.assert_array_equal(t.to(CPU()).to_numpy(), np.arange(1, 13, dtype=np.float32).reshape(3, 4))
    out = torch.from_dlpack(_doubled_on_gpu(t))
    assert out.device.type == "cuda"
    assert torch.equal(out, 2 * y)


def test_cupy_arrays_round_trip_without_copies(gpu):
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(6, dtype=cupy.float32).reshape(2, 3)
    t = Tensor.from_dlpack(x)
    assert not t.device.is_host
    y = cupy.from_dlpack(t)
    assert y.data.ptr == x.data.ptr
    out = cupy.from_dlpack(_doubled_on_gpu(t))
    cupy.testing.assert_array_equal(out, 2 * x)

"""The op-conformance harness: build a one-op graph, compile it, run it on numpy arrays.

    from harness import run, assert_close

    def test_add():
        a, b = np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32)
        (y,) = run(lambda x, z: ops.add(x, z), [a, b])
        assert_close(y, a + b)

Run the same check with fuse=False to cover the unfused path: results must not change.

MAX_C_TEST_DEVICE=gpu runs every case with its graph on gpu:0 instead (inputs copied there,
outputs copied back) against the same numpy references: the GPU op-conformance run of a
machine with a GPU. There, an op or dtype the GPU engine refuses (UNIMPLEMENTED) skips its
case, saying so (GPU_UNIMPLEMENTED), and the run fails when those skips are not the ones
tests/gpu_unimplemented.txt lists (conftest.py); without an accelerator every case skips, or
fails under MAX_C_REQUIRE_GPU=1.
"""
import os
import threading

import numpy as np
import pytest

from max_c import _errors
from max_c.driver import CPU, Accelerator, Tensor, accelerator_count
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import DeviceRef, Graph, TensorType

# The reason a case skips with when the GPU engine refuses its op (conftest.py counts them).
GPU_UNIMPLEMENTED = "not on the GPU: "

_session = None
_session_lock = threading.Lock()


def on_gpu() -> bool:
    """Whether the cases run on gpu:0 (MAX_C_TEST_DEVICE=gpu) rather than the CPU."""
    device = os.environ.get("MAX_C_TEST_DEVICE", "cpu")
    if device not in ("cpu", "gpu"):
        raise ValueError(f"MAX_C_TEST_DEVICE is {device!r}; expected 'cpu' or 'gpu'")
    return device == "gpu"


def _require_accelerator():
    if accelerator_count() > 0:
        return
    reason = "MAX_C_TEST_DEVICE=gpu, but this process sees no accelerator"
    if os.environ.get("MAX_C_REQUIRE_GPU", "0") not in ("", "0"):
        pytest.fail(reason + " (MAX_C_REQUIRE_GPU=1)")
    pytest.skip(reason)


def session() -> InferenceSession:
    """The module's InferenceSession, made once: a session owns a thread team, too costly to
    make per test. On the GPU it holds the CPU and gpu:0."""
    global _session
    if on_gpu():
        _require_accelerator()
    with _session_lock:
        if _session is None:
            _session = InferenceSession(devices=[CPU(), Accelerator()] if on_gpu() else None)
        return _session


def run(build, inputs, *, fuse=True):
    """Builds a graph whose inputs have the arrays' dtypes and shapes, calls build(*values)
    inside it (its value, or tuple/list of values, become the outputs), compiles it with or
    without fusion, executes it on the arrays and returns the outputs as numpy arrays."""
    arrays = [np.asarray(a) for a in inputs]
    gpu, s = on_gpu(), session()
    device = DeviceRef.GPU() if gpu else DeviceRef.CPU()
    types = [TensorType(DType.from_numpy(a.dtype), a.shape, device) for a in arrays]
    graph = Graph("harness", build, input_types=types)
    try:
        model = s.load(graph, fuse=fuse)
    except _errors.MaxError as e:
        if gpu and e.code == _errors.UNIMPLEMENTED:
            pytest.skip(f"{GPU_UNIMPLEMENTED}{e}")
        raise
    finally:
        graph.close()  # compiling copies what it needs
    with model:
        if not gpu:
            return [t.to_numpy() for t in model.execute(*arrays)]
        accelerator = s.devices[1]
        outputs = model.execute(*[Tensor.from_numpy(a).to(accelerator) for a in arrays])
        return [t.to(CPU()).to_numpy() for t in outputs]


def _default_tolerance(dtype):
    if dtype == np.float16:
        return 1e-3, 1e-3
    if dtype == np.float32:
        return 1e-5, 1e-5
    return 1e-10, 1e-12


def assert_close(actual, expected, rtol=None, atol=None, equal_nan=True, err_msg=""):
    """Asserts that `actual` has expected's dtype and shape and values within
    |a - e| <= atol + rtol * |e| (exactly equal for bool and integer dtypes). rtol/atol default
    by dtype (float16 1e-3, float32 1e-5, float64 1e-10/1e-12). A Python scalar or list as
    `expected` takes actual's dtype."""
    actual = np.asarray(actual)
    if not isinstance(expected, (np.ndarray, np.generic)):
        expected = np.asarray(expected, dtype=actual.dtype)
    expected = np.asarray(expected)
    where = f"{err_msg}: " if err_msg else ""
    if actual.dtype != expected.dtype:
        raise AssertionError(f"{where}dtype {actual.dtype}, expected {expected.dtype}")
    if actual.shape != expected.shape:
        raise AssertionError(f"{where}shape {actual.shape}, expected {expected.shape}")
    if actual.dtype.kind in "fc":
        d_rtol, d_atol = _default_tolerance(actual.dtype)
        rtol = d_rtol if rtol is None else rtol
        atol = d_atol if atol is None else atol
        a, e = actual.astype(np.float64), expected.astype(np.float64)  # float16 overflows
        ok = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        ok = actual == expected
    if not np.all(ok):
        raise AssertionError(where + _mismatch_report(actual, expected, ok, rtol, atol))


def _mismatch_report(actual, expected, ok, rtol, atol) -> str:
    bad = np.argwhere(~np.asarray(ok))
    first = tuple(int(i) for i in bad[0])
    lines = [f"{len(bad)} of {actual.size} elements differ (dtype {actual.dtype}, shape "
             f"{actual.shape}); first at {first}: {actual[first]!r} vs expected "
             f"{expected[first]!r}"]
    if actual.dtype.kind in "fc":
        with np.errstate(all="ignore"):
            err = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
            rel = err / np.abs(expected.astype(np.float64))
        lines.append(f"max abs error {np.nanmax(err):.3g}, max rel error {np.nanmax(rel):.3g} "
                     f"(rtol={rtol}, atol={atol})")
    if actual.size <= 64:
        lines.append(f"actual:\n{actual}\nexpected:\n{expected}")
    return "\n".join(lines)

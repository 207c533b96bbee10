"""Smoke tests of the op-conformance harness itself (run, assert_close and its device)."""
import os
import subprocess
import sys

import numpy as np
import pytest

from harness import assert_close, run
from max_c.driver import accelerator_count
from max_c.graph import ops


@pytest.mark.parametrize("fuse", [True, False])
def test_add_broadcasts(fuse):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([10, 20, 30], np.float32)
    (y,) = run(lambda x, z: ops.add(x, z), [a, b], fuse=fuse)
    assert_close(y, a + b)


def test_relu_and_several_outputs():
    a = np.array([[-1.5, 0.0, 2.0]], np.float32)
    y, n = run(lambda x: (ops.relu(x), -x), [a])
    assert_close(y, np.maximum(a, 0))
    assert_close(n, -a)


def test_integer_add_is_exact():
    a = np.array([1, -2, 3], np.int32)
    (y,) = run(lambda x: x + x, [a])
    assert_close(y, np.array([2, -4, 6], np.int32))


def test_assert_close_checks_dtype_shape_and_values():
    a = np.array([1.0, 2.0, np.nan], np.float32)
    assert_close(a, a.copy())
    assert_close(np.float32(2.0), 2.0)  # a Python scalar takes actual's dtype
    with pytest.raises(AssertionError, match="dtype float32, expected float64"):
        assert_close(a, a.astype(np.float64))
    with pytest.raises(AssertionError, match=r"shape \(3,\), expected \(1, 3\)"):
        assert_close(a, a.reshape(1, 3))
    with pytest.raises(AssertionError, match=r"1 of 3 elements differ.*first at \(1,\)"):
        assert_close(a, np.array([1.0, 2.5, np.nan], np.float32))
    with pytest.raises(AssertionError):
        assert_close(a, a.copy(), equal_nan=False)
    assert_close(a, np.array([1.0, 2.001, np.nan], np.float32), rtol=1e-2)


def _run_on_gpu(env_extra):
    """pytest of one harness case in a child process with MAX_C_TEST_DEVICE=gpu; its summary."""
    env = {k: v for k, v in os.environ.items() if k != "MAX_C_REQUIRE_GPU"}
    env.update(MAX_C_TEST_DEVICE="gpu", **env_extra)
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        os.path.join(here, "test_harness.py") + "::test_integer_add_is_exact"],
                       env=env, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.skipif(accelerator_count() > 0, reason="this machine has an accelerator: the GPU run is real")
def test_gpu_mode_without_an_accelerator_skips_or_fails_when_required():
    code, out = _run_on_gpu({})
    assert code == 0 and "1 skipped" in out, out
    assert "MAX_C_TEST_DEVICE=gpu, but this process sees no accelerator" in out, out
    code, out = _run_on_gpu({"MAX_C_REQUIRE_GPU": "1"})
    assert code != 0 and "1 failed" in out, out
    assert "(MAX_C_REQUIRE_GPU=1)" in out, out


def test_unknown_device_is_refused(monkeypatch):
    monkeypatch.setenv("MAX_C_TEST_DEVICE", "tpu")
    with pytest.raises(ValueError, match="MAX_C_TEST_DEVICE is 'tpu'"):
        run(lambda x: x, [np.zeros(1, np.float32)])

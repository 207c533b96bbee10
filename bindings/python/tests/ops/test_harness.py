"""Smoke tests of the op-conformance harness itself (run and assert_close)."""
import numpy as np
import pytest

from harness import assert_close, run
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

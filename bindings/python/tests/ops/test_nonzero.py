"""Conformance against numpy of nonzero (MAX's ops.nonzero(x, out_dim)): np.argwhere, for
counts that no input binds (the engine computes the count first and plans the rest for it),
every dtype family, signed zeros and NaN, and a count of zero."""
import numpy as np
import pytest

from harness import run
from max_c.graph import ops


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int8, np.int64, np.uint16, np.bool_])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 2), ()])
def test_nonzero(dtype, shape):
    rng = np.random.default_rng(len(shape))
    x = (rng.integers(-2, 3, size=shape) * rng.integers(0, 2, size=shape)).astype(dtype)
    (y,) = run(lambda v: ops.nonzero(v, "nz"), [x])
    np.testing.assert_array_equal(y, np.argwhere(x))


def test_nonzero_signed_zero_and_nan():
    x = np.array([0.0, -0.0, np.nan, 1e-30, -np.inf], np.float32)
    (y,) = run(lambda v: ops.nonzero(v, "nz"), [x])
    np.testing.assert_array_equal(y, [[2], [3], [4]])


def test_nonzero_then_gather():
    # Compress: the rows of x where the mask holds, through the count the first stage finds.
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    for mask in ([True, False, True, True], [False] * 4):
        mask = np.array(mask)
        (y,) = run(lambda v, m: ops.gather(v, ops.nonzero(m, "n").reshape(["n"]), axis=0), [x, mask])
        np.testing.assert_array_equal(y, x[mask])

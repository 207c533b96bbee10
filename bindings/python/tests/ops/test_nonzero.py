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


@pytest.mark.parametrize("fuse", [True, False])
def test_bind_dims_names_the_entries_of_a_shape_computed_at_run_time(fuse):
    """bind_dims(s + 1, [a, b]): the engine binds a and b to the computed entries once the
    first stage has them, and plans the broadcast to [a, b] after it per binding (np.full)."""
    def build(v, shape):
        ops.bind_dims(shape + 1, ["a", "b"])
        return ops.broadcast_to(v, ["a", "b"])

    for s in ([2, 3], [0, 4], [1, 1]):
        (y,) = run(build, [np.array(2.5, np.float32), np.array(s, np.int64)], fuse=fuse)
        np.testing.assert_array_equal(y, np.full([d + 1 for d in s], 2.5, np.float32))

"""Conformance against numpy of masked_scatter (MAX's ops.masked_scatter(input, mask,
updates, out_dim), torch's rule): the positions where the mask holds, broadcast to the
input's shape, take updates' elements in row-major order; too few updates is an error."""
import numpy as np
import pytest

from harness import run
from max_c.graph import ops
from max_c import MaxError


def reference(x, mask, updates):
    out = x.copy()
    m = np.broadcast_to(mask, x.shape)
    out[m] = updates.ravel()[: int(m.sum())]
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.bool_, np.float16])
@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), (3, 1), ()])
def test_masked_scatter(dtype, mask_shape):
    rng = np.random.default_rng(len(mask_shape))
    x = rng.integers(-5, 5, size=(3, 4)).astype(dtype)
    mask = rng.integers(0, 2, size=mask_shape).astype(bool)
    updates = rng.integers(10, 20, size=(2, 7)).astype(dtype)
    (y,) = run(lambda v, m, u: ops.masked_scatter(v, m, u, "n"), [x, mask, updates])
    np.testing.assert_array_equal(y, reference(x, mask, updates))


def test_masked_scatter_with_too_few_updates_fails():
    x = np.zeros((2, 2), np.float32)
    with pytest.raises(MaxError, match="holds at 4 positions but updates has only 3"):
        run(lambda v, m, u: ops.masked_scatter(v, m, u, "n"),
            [x, np.ones((2, 2), bool), np.ones(3, np.float32)])

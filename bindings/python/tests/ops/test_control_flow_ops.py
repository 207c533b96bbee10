"""Conformance against numpy of the control-flow registry ops: cond, while_loop and call
(through MAX's ops.cond, ops.while_loop and ops.call; tests/test_control_flow.py covers
captures, nesting and the error paths). Under MAX_C_TEST_DEVICE=gpu the graphs, subgraphs
included, are placed on gpu:0; an engine that refuses an op there (UNIMPLEMENTED) is a skip."""
import numpy as np
import pytest

from harness import assert_close, run
from max_c.dtype import DType
from max_c.graph import Graph, TensorType, ops


def rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("pred", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_cond(pred, dtype):
    x = (rand((2, 3)) * 10).astype(dtype)

    def build(p, v):
        out = TensorType(DType.from_numpy(np.dtype(dtype)), [2, 3], v.device)
        return ops.cond(p, [out], lambda: v * v, lambda: v - 1)[0]

    (y,) = run(build, [np.array(pred), x])
    assert_close(y, x * x if pred else x - 1)


@pytest.mark.parametrize("limit", [0.0, 1.0, 50.0])
def test_while_loop(limit):
    x = np.abs(rand((4,))) + 0.25

    def build(v, bound):
        return ops.while_loop(v, lambda s: ops.max(s, axis=0).reshape([]) < bound,
                              lambda s: s * 2)

    want = x.copy()
    while want.max() < limit:
        want = want * 2
    (y,) = run(build, [x, np.array(limit, np.float32)])
    assert_close(y, want)


def test_call():
    x, b = rand((3, 4)), rand((4,), seed=1)

    def build(v, c):
        # The subgraph takes values where the harness placed the graph's (host or gpu:0).
        types = [TensorType(DType.float32, [3, 4], v.device),
                 TensorType(DType.float32, [4], c.device)]
        sub = Graph("affine", lambda a, d: ops.tanh(a) + d, input_types=types)
        return ops.call(sub, v, c)[0]

    (y,) = run(build, [x, b])
    assert_close(y, np.tanh(x) + b, rtol=1e-6, atol=1e-6)

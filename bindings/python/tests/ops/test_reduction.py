"""Op conformance against numpy: reductions, scans and sorting (inventory §5.6 and the
one-input max/min of §5.2): sum, mean, max, min, argmax, argmin, cumsum, top_k, argsort.

Inputs are random (fixed seeds); references are computed with numpy in float64 (rounded to
the tested dtype), so no expected value is typed by hand. Tolerances, per dtype, unless a test
says otherwise: float64 1e-10 rel, float32 1e-5 rel + 1e-5·sqrt(n) abs (summation order
differs from numpy's pairwise sum), float16 1e-3 rel + 1e-3·sqrt(n) abs, bfloat16 one
bfloat16 ulp (2^-7 rel) + 1e-2·sqrt(n) abs. Integers and indices are exact.
"""
import math

import numpy as np
import pytest

from harness import assert_close, run
from max_c.dtype import DType
from max_c.graph import ops

FLOATS = [np.float32, np.float64, np.float16]
INTS = [np.int32, np.int64]

# (shape, axis): last axis, middle and first axes, negative axes, size-1 and size-0 dims.
SHAPES_AXES = [
    ((7,), 0),
    ((1,), -1),
    ((3, 4), -1),
    ((3, 4), 0),
    ((2, 3, 5), 1),
    ((2, 3, 5), -3),
    ((4, 1, 3), 1),
    ((1, 1), 0),
    ((2, 40, 300), 1),   # the strided path past one column block
    ((5, 1000), -1),     # long rows: the vector body and the tail
    ((0, 3), 1),         # empty outer
    ((2, 0, 3), 2),      # empty outer with a non-empty axis
]

rng = np.random.default_rng(1234)


def random(shape, dtype, low=-4.0, high=4.0):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-50, 50, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def to_bf16(a):
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def tolerance(dtype, n):
    root = math.sqrt(max(n, 1))
    if dtype == np.float64:
        return 1e-10, 1e-12 * root
    if dtype == np.float32:
        return 1e-5, 1e-5 * root
    if dtype == np.float16:
        return 1e-3, 1e-3 * root
    return 2.0 ** -7, 1e-2 * root  # bfloat16: one ulp


def reference_reduce(name, x, axis):
    wide = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    if name == "sum":
        r = wide.sum(axis=axis, keepdims=True)
    elif name == "mean":
        r = wide.astype(np.float64).mean(axis=axis, keepdims=True)
        if x.dtype.kind == "i":
            r = np.trunc(r)
    elif name == "max":
        r = wide.max(axis=axis, keepdims=True)
    else:
        r = wide.min(axis=axis, keepdims=True)
    return r.astype(x.dtype)


REDUCE_OPS = {
    "sum": lambda x, axis: ops.sum(x, axis=axis),
    "mean": lambda x, axis: ops.mean(x, axis=axis),
    "max": lambda x, axis: ops.max(x, axis=axis),
    "min": lambda x, axis: ops.min(x, axis=axis),
}


@pytest.mark.parametrize("name", list(REDUCE_OPS))
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_reduce(name, dtype, shape, axis):
    x = random(shape, dtype)
    if x.shape[axis] == 0 and name in ("max", "min"):
        pytest.skip("no identity: covered by test_max_over_an_empty_axis_is_an_error")
    with np.errstate(invalid="ignore"):
        want = reference_reduce(name, x, axis)
    (y,) = run(lambda v: REDUCE_OPS[name](v, axis), [x])
    if np.issubdtype(dtype, np.integer):
        assert_close(y, want)
    else:
        rtol, atol = tolerance(dtype, shape[axis])
        assert_close(y, want, rtol=rtol, atol=atol)


def test_mean_of_an_empty_axis_is_nan_and_sum_is_zero():
    x = np.zeros((2, 0), np.float32)
    y, s = run(lambda v: (ops.mean(v, axis=1), ops.sum(v, axis=1)), [x])
    assert_close(y, np.full((2, 1), np.nan, np.float32))
    assert_close(s, np.zeros((2, 1), np.float32))


@pytest.mark.parametrize("name", list(REDUCE_OPS))
@pytest.mark.parametrize("shape,axis", [((3, 70), -1), ((20, 3), 0)])
def test_reduce_bfloat16(name, shape, axis):
    x = to_bf16(random(shape, np.float32))
    want = to_bf16(reference_reduce(name, x.astype(np.float64), axis).astype(np.float32))
    (y,) = run(lambda v: ops.cast(REDUCE_OPS[name](ops.cast(v, DType.bfloat16), axis), DType.float32), [x])
    rtol, atol = tolerance("bfloat16", shape[axis])
    assert_close(y, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape,axis", [((4, 50), -1), ((50, 3), 0), ((3, 5), 1)])
def test_max_min_propagate_nan(dtype, shape, axis):
    x = random(shape, dtype)
    x[1, 2] = np.nan
    ymax, ymin = run(lambda v: (ops.max(v, axis=axis), ops.min(v, axis=axis)), [x])
    assert_close(ymax, np.max(x, axis=axis, keepdims=True))
    assert_close(ymin, np.min(x, axis=axis, keepdims=True))


def test_integer_sum_wraps_like_numpy():
    x = np.array([[2**31 - 1, 5, 1]], np.int32)
    (y,) = run(lambda v: ops.sum(v, axis=-1), [x])
    assert_close(y, x.sum(axis=-1, keepdims=True, dtype=np.int64).astype(np.int32))


def test_max_over_an_empty_axis_is_an_error():
    x = np.zeros((2, 0), np.float32)
    with pytest.raises(Exception, match="no identity"):
        run(lambda v: ops.max(v, axis=1), [x])


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("shape,axis", [s for s in SHAPES_AXES if 0 not in s[0]])
def test_arg_reduce(name, dtype, shape, axis):
    x = np.round(random(shape, dtype, -3, 3)).astype(dtype)  # many ties: the first index wins
    fn = np.argmax if name == "argmax" else np.argmin
    (y,) = run(lambda v: getattr(ops, name)(v, axis=axis), [x])
    assert_close(y, np.expand_dims(fn(x, axis=axis), axis).astype(np.int64))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("shape,axis", [((3, 40), -1), ((40, 3), 0)])
def test_arg_reduce_finds_the_first_nan(name, shape, axis):
    x = random(shape, np.float32)
    line = [slice(None)] * 2
    line[axis] = 7
    x[tuple(line)] = np.nan
    line[axis] = 9
    x[tuple(line)] = np.nan
    x[0] = 1.0  # one line without NaN
    fn = np.argmax if name == "argmax" else np.argmin
    (y,) = run(lambda v: getattr(ops, name)(v, axis=axis), [x])
    assert_close(y, np.expand_dims(fn(x, axis=axis), axis).astype(np.int64))


def test_arg_reduce_bfloat16():
    x = to_bf16(np.round(random((4, 33), np.float32)))
    (y,) = run(lambda v: ops.argmax(ops.cast(v, DType.bfloat16), axis=-1), [x])
    assert_close(y, np.argmax(x, axis=-1)[:, None].astype(np.int64))


def reference_cumsum(x, axis, exclusive, reverse):
    wide = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    if reverse:
        wide = np.flip(wide, axis)
    c = np.cumsum(wide, axis=axis)
    if exclusive:
        c = c - wide
    if reverse:
        c = np.flip(c, axis)
    return c.astype(x.dtype)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_cumsum(exclusive, reverse, dtype, shape, axis):
    x = random(shape, dtype)
    (y,) = run(lambda v: ops.cumsum(v, axis=axis, exclusive=exclusive, reverse=reverse), [x])
    want = reference_cumsum(x, axis, exclusive, reverse)
    if np.issubdtype(dtype, np.integer):
        assert_close(y, want)
    else:
        rtol, atol = tolerance(dtype, shape[axis])
        assert_close(y, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("exclusive", [False, True])
def test_cumsum_bfloat16(exclusive):
    x = to_bf16(random((3, 20), np.float32, 0, 1))
    (y,) = run(lambda v: ops.cast(ops.cumsum(ops.cast(v, DType.bfloat16), axis=-1, exclusive=exclusive),
                                  DType.float32), [x])
    want = to_bf16(reference_cumsum(x.astype(np.float64), -1, exclusive, False).astype(np.float32))
    assert_close(y, want, rtol=2.0 ** -7, atol=1e-6)


def reference_top_k(x, k, axis):
    """The k largest along axis, largest first, ties by lower index (a stable sort)."""
    order = np.argsort(-x.astype(np.float64), axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("shape,axis", [s for s in SHAPES_AXES if s[0][s[1]] > 0])
def test_top_k(dtype, shape, axis):
    x = np.round(random(shape, dtype, -5, 5)).astype(dtype)  # ties
    n = shape[axis]
    for k in sorted({0, 1, min(3, n), n}):
        values, indices = run(lambda v: ops.top_k(v, k, axis=axis), [x])
        want_values, want_indices = reference_top_k(x, k, axis)
        assert_close(values, want_values, err_msg=f"k={k}")
        assert_close(indices, want_indices, err_msg=f"k={k}")


def test_top_k_bfloat16_and_nan_first():
    x = to_bf16(random((2, 30), np.float32))

    def build(v):
        values, indices = ops.top_k(ops.cast(v, DType.bfloat16), 4, axis=-1)
        return ops.cast(values, DType.float32), indices

    values, indices = run(build, [x])
    want_values, want_indices = reference_top_k(x, 4, -1)
    assert_close(values, want_values)
    assert_close(indices, want_indices)
    y = np.array([[1.0, np.nan, 3.0]], np.float32)
    values, indices = run(lambda v: ops.top_k(v, 2, axis=-1), [y])
    assert_close(values, np.array([[np.nan, 3.0]], np.float32))
    assert_close(indices, np.array([[1, 2]], np.int64))


def test_top_k_k_larger_than_the_axis_is_an_error():
    with pytest.raises(Exception):
        run(lambda v: ops.top_k(v, 5, axis=-1), [np.zeros((2, 3), np.float32)])


@pytest.mark.parametrize("ascending", [True, False])
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("n", [0, 1, 2, 9, 1000])
def test_argsort(ascending, dtype, n):
    x = np.round(random((n,), dtype, -20, 20)).astype(dtype)  # ties keep their order
    (y,) = run(lambda v: ops.argsort(v, ascending=ascending), [x])
    key = x.astype(np.float64) if ascending else -x.astype(np.float64)
    assert_close(y, np.argsort(key, kind="stable").astype(np.int64))


def test_argsort_puts_nan_last_ascending_and_first_descending():
    x = np.array([2.0, np.nan, -1.0, 2.0], np.float32)
    up, down = run(lambda v: (ops.argsort(v, ascending=True), ops.argsort(v, ascending=False)), [x])
    assert_close(up, np.argsort(x, kind="stable").astype(np.int64))  # numpy: NaN last
    assert_close(down, np.array([1, 0, 3, 2], np.int64))


def test_argsort_bfloat16():
    x = to_bf16(random((50,), np.float32))
    (y,) = run(lambda v: ops.argsort(ops.cast(v, DType.bfloat16)), [x])
    assert_close(y, np.argsort(x, kind="stable").astype(np.int64))

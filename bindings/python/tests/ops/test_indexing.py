"""Conformance of the indexing ops against numpy: slice_tensor (numpy basic indexing through
TensorValue.__getitem__), gather, gather_nd, scatter, scatter_nd, range and band_part.

Tolerances: everything but range only moves data, so results must equal numpy's exactly
(tolerance 0) in every dtype. range computes start + i * step: exact for integers, float32
within 1e-6 relative, float16/bfloat16 within one half-precision rounding (rtol 1e-2).
References are numpy expressions or loops over np.ndindex (for the ONNX-style scatters)."""
import numpy as np
import pytest

from harness import assert_close, run
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import Graph, TensorType, ops

RNG = np.random.default_rng(4242)
DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.int8, np.uint8, np.bool_, "bfloat16"]


def rand(shape, dtype=np.float32):
    if dtype == "bfloat16":
        return RNG.integers(-100, 100, size=shape).astype(np.float32)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def run_dtype(build, inputs, dtype, data=(0,)):
    """run(), with the inputs at positions `data` seen as bfloat16 inside the graph when dtype
    is "bfloat16" (outputs cast back to float32)."""
    if dtype != "bfloat16":
        return run(build, inputs)

    def wrapped(*vals):
        vals = [ops.cast(v, DType.bfloat16) if i in data else v for i, v in enumerate(vals)]
        out = build(*vals)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return tuple(ops.cast(o, DType.float32) for o in outs)

    return run(wrapped, inputs)


def check(build, inputs, expected, dtype=None, data=(0,)):
    (got,) = run_dtype(build, inputs, dtype, data)
    assert_close(got, np.asarray(expected), rtol=0, atol=0)


# ---- slice_tensor ------------------------------------------------------------------------------

S = slice
SLICES = [
    ((5,), (S(1, 4),)),
    ((5,), (S(None, None, -1),)),
    ((5,), (S(-2, None),)),
    ((5,), (S(4, 1, -2),)),
    ((5,), (S(3, 1),)),                       # empty
    ((5,), (S(None, None, 7),)),              # step past the end
    ((5,), (2,)),                             # integer index: rank 0
    ((5,), (-1,)),
    ((3, 4), (1, S(None, None, -1))),
    ((3, 4), (S(None, None, -1), S(1, 3))),
    ((3, 4), (Ellipsis, None, S(1, 3))),
    ((3, 4), (None, -2, Ellipsis)),
    ((3, 4), (S(-3, -4, -1), S(-4, -1, 2))),  # bounds at MAX's limits
    ((2, 3, 4), (S(None), 2)),
    ((2, 3, 4), (Ellipsis, S(None, None, -2))),
    ((2, 3, 4), (1, S(0, 3, 2), S(3, None, -3))),
    ((2, 0, 4), (S(None), S(None), S(1, 2))),
    ((1, 1), (0, 0)),
    ((4, 5, 6), (S(1, None), None, S(None, 4), S(None, None, -1))),
]


@pytest.mark.parametrize("shape,index", SLICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_slice(shape, index, dtype):
    x = rand(shape, dtype)
    check(lambda v: v[index], [x], x[index], dtype)


def test_slice_large_float32_runs_in_parallel():
    x = rand((64, 300, 40))
    index = (S(None, None, 2), S(10, -10), S(None, None, -1))
    check(lambda v: v[index], [x], x[index])


def _load(build, types):
    return InferenceSession().load(Graph("slices", build, input_types=types))


def test_slice_of_symbolic_dims():
    """Static bounds over a dim known only at run time, for several run-time sizes."""
    model = _load(lambda v: (v[1:], v[::-1, 1:3], v[-2:, -1]), [TensorType(DType.float32, ["n", 4])])
    for n in (2, 3, 7):
        x = rand((n, 4))
        outs = [t.to_numpy() for t in model.execute(x)]
        for got, want in zip(outs, (x[1:], x[::-1, 1:3], x[-2:, -1])):
            assert_close(got, want, rtol=0, atol=0)


def test_slice_with_a_symbolic_bound():
    """x[:m] where m is another input's length: the engine evaluates m, the kernel follows."""
    model = _load(lambda v, w: v[((S(0, "m"), "m"),)] + w,
                  [TensorType(DType.float32, ["n"]), TensorType(DType.float32, ["m"])])
    for n, m in ((5, 2), (4, 4), (3, 0)):
        x, y = rand((n,)), rand((m,))
        (out,) = model.execute(x, y)
        assert_close(out.to_numpy(), x[:m] + y, rtol=0, atol=0)


# ---- gather, gather_nd ---------------------------------------------------------------------------

GATHERS = [
    ((5, 3), (4,), 0),
    ((5, 3), (2, 2), 1),
    ((2, 3, 4), (3,), -1),
    ((2, 3, 4), (2, 5), 1),
    ((4,), (), 0),                            # scalar index: rank drops
    ((4, 2), (0,), 0),                        # no indices
    ((1, 3), (6,), 0),
    ((0, 3), (2,), 1),                        # empty outer
    ((300, 48), (4, 32), 0),                  # embedding-sized
]


@pytest.mark.parametrize("shape,ishape,axis", GATHERS)
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_gather_float32(shape, ishape, axis, index_dtype):
    x = rand(shape)
    n = shape[axis]
    idx = RNG.integers(-n, n, size=ishape).astype(index_dtype) if n else np.zeros(ishape, index_dtype)
    check(lambda v, i: ops.gather(v, i, axis), [x, idx], np.take(x, idx, axis=axis))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32, np.uint8, np.int16])
def test_gather_dtypes(dtype, index_dtype):
    x = rand((4, 3, 2), dtype)
    idx = RNG.integers(0, 3, size=(2, 2)).astype(index_dtype)
    check(lambda v, i: ops.gather(v, i, 1), [x, idx], np.take(x, idx, axis=1), dtype)


@pytest.mark.parametrize("op", ["gather", "gather_nd", "scatter", "scatter_nd"])
def test_out_of_range_runtime_index_fails_the_call_and_the_model_stays_usable(op):
    """An index outside the axis, known only at run time, fails that call with a message; the
    next call with good indices works."""
    x = rand((3, 2))
    build = {
        "gather": lambda v, i: ops.gather(v, i, 0),
        "gather_nd": lambda v, i: ops.gather_nd(v, ops.unsqueeze(i, -1)),
        "scatter": lambda v, i: ops.scatter(v, ops.broadcast_to(ops.unsqueeze(ops.cast(i, DType.float32), -1), [4, 2]),
                                            ops.broadcast_to(ops.unsqueeze(i, -1), [4, 2]), 0),
        "scatter_nd": lambda v, i: ops.scatter_nd(v, ops.broadcast_to(ops.unsqueeze(ops.cast(i, DType.float32), -1), [4, 2]),
                                                  ops.unsqueeze(i, -1)),
    }[op]
    types = [TensorType(DType.float32, [3, 2]), TensorType(DType.int64, [4])]
    with Graph(f"bad_{op}_index", input_types=types) as g:
        g.output(build(*g.inputs))
    model = InferenceSession().load(g)
    with pytest.raises(ValueError, match="out of range"):
        model.execute(x, np.array([1, 3, 0, -1], np.int64))
    (y,) = model.execute(x, np.array([1, 2, 0, -1], np.int64))
    assert y.to_numpy().shape[1] == 2


def test_gather_out_of_range_constant_index_is_an_error():
    x = rand((3, 2))
    with pytest.raises(Exception, match="out of range"):
        run(lambda v: ops.gather(v, ops.constant(np.array([0, 5], np.int64), device=v.device), 0), [x])


def ref_gather_nd(x, idx, b):
    k = idx.shape[-1]
    out = np.empty(x.shape[:b] + idx.shape[b:-1] + x.shape[b + k:], x.dtype)
    for bi in np.ndindex(*x.shape[:b]):
        for n in np.ndindex(*idx.shape[b:-1]):
            out[bi + n] = x[bi + tuple(int(i) for i in idx[bi + n])]
    return out


GATHER_NDS = [((4, 5), (3, 2), 0), ((4, 5), (3, 1), 0), ((2, 3, 4), (2, 2, 1), 1), ((2, 3, 4, 5), (2, 3, 6, 1), 2),
              ((2, 3, 4), (2, 5, 2), 1), ((3, 4), (2, 0), 0), ((4, 5), (0, 2), 0), ((2, 3), (2, 1, 1), 1)]


@pytest.mark.parametrize("shape,ishape,b", GATHER_NDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16, np.bool_])
def test_gather_nd(shape, ishape, b, dtype):
    x = rand(shape, dtype)
    k = ishape[-1]
    dims = shape[b:b + k]
    idx = np.zeros(ishape, np.int64)
    for j, d in enumerate(dims):
        idx[..., j] = RNG.integers(-d, d, size=ishape[:-1])
    check(lambda v, i: ops.gather_nd(v, i, b), [x, idx], ref_gather_nd(x, idx, b))


# ---- scatter, scatter_nd ---------------------------------------------------------------------------


def ref_scatter(x, upd, idx, axis):
    out = x.copy()
    n = x.shape[axis]
    for p in np.ndindex(*upd.shape):
        q = list(p)
        q[axis] = int(idx[p]) % n
        out[tuple(q)] = upd[p]
    return out


SCATTERS = [((4, 3), (2, 3), 0), ((4, 3), (4, 2), 1), ((2, 3, 4), (2, 3, 6), -1), ((2, 3, 4), (1, 2, 4), 0),
            ((5,), (5,), 0), ((3, 2), (0, 2), 0), ((3, 4), (2, 2), 1)]


@pytest.mark.parametrize("shape,ushape,axis", SCATTERS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.bool_, np.float16, "bfloat16"])
def test_scatter(shape, ushape, axis, dtype):
    x, upd = rand(shape, dtype), rand(ushape, dtype)
    n = shape[axis]
    idx = RNG.integers(-n, n, size=ushape).astype(np.int64)  # repeats included: the last write wins
    check(lambda v, u, i: ops.scatter(v, u, i, axis), [x, upd, idx], ref_scatter(x, upd, idx, axis), dtype,
          data=(0, 1))


def ref_scatter_nd(x, upd, idx):
    out = x.copy()
    for n in np.ndindex(*idx.shape[:-1]):
        out[tuple(int(i) for i in idx[n])] = upd[n]
    return out


SCATTER_NDS = [((4, 3), (2, 1)), ((4, 3), (5, 2)), ((2, 3, 4), (3, 2)), ((2, 3, 4), (2, 2, 1)), ((5,), (3, 1)),
               ((4, 3), (0, 1)), ((3, 2), (2, 0))]


@pytest.mark.parametrize("shape,ishape", SCATTER_NDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8, np.float16])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_scatter_nd(shape, ishape, dtype, index_dtype):
    x = rand(shape, dtype)
    k = ishape[-1]
    idx = np.zeros(ishape, index_dtype)
    for j, d in enumerate(shape[:k]):
        idx[..., j] = RNG.integers(-d, d, size=ishape[:-1])
    upd = rand(ishape[:-1] + shape[k:], dtype)
    check(lambda v, u, i: ops.scatter_nd(v, u, i), [x, upd, idx], ref_scatter_nd(x, upd, idx))


@pytest.mark.parametrize("fuse", [True, False])
def test_scatters_over_intermediates(fuse):
    """Both scatters may write over their input in place when it dies there: the result must
    not change."""
    x, upd = rand((4, 3)), rand((2, 3))
    idx = np.array([[3, 0, -1], [3, 1, 0]], np.int64)
    (y,) = run(lambda v, u, i: ops.scatter(v + 1, u, i, 0) * 2, [x, upd, idx], fuse=fuse)
    assert_close(y, ref_scatter(x + 1, upd, idx, 0) * 2, rtol=0, atol=0)
    rows = np.array([[2], [-4]], np.int32)
    (z,) = run(lambda v, u, i: ops.scatter_nd(v + 1, u, i) * 2, [x, upd, rows], fuse=fuse)
    assert_close(z, ref_scatter_nd(x + 1, upd, rows) * 2, rtol=0, atol=0)


# ---- range ---------------------------------------------------------------------------------------

RANGES = [(0, 5, 1), (5, 0, -1), (2, 11, 3), (-3, 3, 2), (4, 4, 1), (10, -10, -7)]


@pytest.mark.parametrize("start,stop,step", RANGES)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_range_of_tensors(start, stop, step, dtype):
    want = np.arange(start, stop, step, dtype=dtype)
    vals = [np.array(v, dtype) for v in (start, stop, step)]
    (y,) = run(lambda a, b, c: ops.range(a, b, c, out_dim=[len(want)]), vals)
    assert_close(y, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("start,stop,step", [(0.5, 3.0, 0.25), (1.0, -1.0, -0.5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16"])
def test_range_of_fractions(start, stop, step, dtype):
    want = np.arange(start, stop, step, dtype=np.float64)
    vals = [np.array(v, np.float32 if dtype == "bfloat16" else dtype) for v in (start, stop, step)]
    (y,) = run_dtype(lambda a, b, c: ops.range(a, b, c, out_dim=[len(want)]), vals, dtype, data=(0, 1, 2))
    assert_close(y.astype(np.float64), want, rtol=1e-2, atol=1e-6)


def test_range_of_constants():
    want = np.arange(3, 20, 4, dtype=np.int64)
    (y,) = run(lambda: ops.range(ops.constant(np.int64(3)), ops.constant(np.int64(20)), ops.constant(np.int64(4))), [])
    assert_close(y, want)


# ---- band_part -------------------------------------------------------------------------------------


def ref_band_part(x, lower, upper, exclude):
    m, n = x.shape[-2:]
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    keep = ((lower is None) | (i - j <= (lower or 0))) & ((upper is None) | (j - i <= (upper or 0)))
    if exclude:
        keep = ~keep
    return np.where(keep, x, np.zeros_like(x))


BANDS = [(None, None), (0, None), (None, 0), (1, 2), (0, 0), (10, 10)]


@pytest.mark.parametrize("shape", [(4, 4), (3, 6), (2, 5, 3), (2, 0, 3), (1, 1), (2, 3, 7, 7)])
@pytest.mark.parametrize("lower,upper", BANDS)
@pytest.mark.parametrize("exclude", [False, True])
def test_band_part(shape, lower, upper, exclude):
    x = rand(shape)
    attrs = {"exclude": exclude}
    if lower is not None:
        attrs["num_lower"] = lower
    if upper is not None:
        attrs["num_upper"] = upper
    check(lambda v: ops.band_part(v, **attrs), [x], ref_band_part(x, lower, upper, exclude))


@pytest.mark.parametrize("dtype", DTYPES)
def test_band_part_dtypes(dtype):
    x = rand((2, 4, 5), dtype)
    check(lambda v: ops.band_part(v, num_lower=1, num_upper=0), [x], ref_band_part(x, 1, 0, False), dtype)


@pytest.mark.parametrize("fuse", [True, False])
def test_causal_mask_chain(fuse):
    """band_part as attention builds its causal mask, in place over a fresh intermediate."""
    x = rand((2, 6, 6))
    (y,) = run(lambda v: ops.band_part(v * 2, num_upper=0), [x], fuse=fuse)
    assert_close(y, ref_band_part(x * 2, None, 0, False), rtol=0, atol=0)

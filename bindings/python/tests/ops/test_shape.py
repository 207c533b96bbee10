"""Conformance of the shape and layout ops against numpy: reshape, flatten, squeeze,
unsqueeze, rebind, as_interleaved_complex (aliases), transpose, permute, broadcast_to, tile,
concat, stack, split, chunk, repeat_interleave, pad, shape_to_tensor.

They only move data, so every result must equal numpy's exactly (tolerance 0, for every dtype):
each op runs over shapes with size-0 and size-1 dims and over every storage width (bool/int8,
float16/bfloat16, float32/int32, float64/int64). bfloat16 has no numpy dtype: those graphs cast
float32 inputs holding small integers (exact in bfloat16) in and out."""
import numpy as np
import pytest

from harness import assert_close, run
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import Graph, TensorType, ops

RNG = np.random.default_rng(2024)

# One dtype per storage width and kind; bfloat16 is handled by `run_dtype`.
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


def run_dtype(build, inputs, dtype, n_data=1):
    """run(build, inputs), with the first n_data inputs seen as bfloat16 inside the graph when
    dtype is "bfloat16" (and every output cast back to float32)."""
    if dtype != "bfloat16":
        return run(build, inputs)

    def wrapped(*vals):
        vals = [ops.cast(v, DType.bfloat16) if i < n_data else v for i, v in enumerate(vals)]
        out = build(*vals)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return tuple(ops.cast(o, DType.float32) for o in outs)

    return run(wrapped, inputs)


def check(build, inputs, expected, dtype=None, n_data=1):
    outs = run_dtype(build, inputs, dtype, n_data)
    expected = expected if isinstance(expected, (tuple, list)) else [expected]
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        assert_close(got, np.asarray(want), rtol=0, atol=0)


# ---- aliases ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,target", [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((1,), ()), ((0, 3), (3, 0)),
                                          ((5,), (1, 5, 1)), ((2, 6), (3, -1))])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.float16])
def test_reshape(shape, target, dtype):
    x = rand(shape, dtype)
    check(lambda v: ops.reshape(v, list(target)), [x], x.reshape(target))


@pytest.mark.parametrize("shape,start,end", [((2, 3, 4), 0, -1), ((2, 3, 4), 1, 2), ((2, 3, 4), 0, 1), ((2, 0, 4), 1, -1),
                                             ((1, 1), 0, 0)])
def test_flatten(shape, start, end):
    x = rand(shape)
    end_p = end % len(shape)
    want = x.reshape(shape[:start] + (int(np.prod(shape[start:end_p + 1])),) + shape[end_p + 1:])
    check(lambda v: ops.flatten(v, start, end), [x], want)


@pytest.mark.parametrize("shape,axis", [((1, 3), 0), ((3, 1), -1), ((2, 1, 0), 1), ((1,), 0)])
def test_squeeze(shape, axis):
    x = rand(shape, np.int32)
    check(lambda v: ops.squeeze(v, axis), [x], np.squeeze(x, axis))


@pytest.mark.parametrize("shape,axis", [((3,), 0), ((3,), 1), ((3,), -1), ((2, 0), -2), ((), 0)])
def test_unsqueeze(shape, axis):
    x = rand(shape, np.float64)
    check(lambda v: ops.unsqueeze(v, axis), [x], np.expand_dims(x, axis))


def test_rebind_and_as_interleaved_complex():
    x = rand((2, 6))
    check(lambda v: ops.rebind(v, [2, 6]), [x], x)
    check(lambda v: ops.as_interleaved_complex(v), [x], x.reshape(2, 3, 2))


def test_rebind_asserts_the_shape_at_run_time():
    """rebind [n] to [4]: an input of 4 runs, one of 5 fails with a clear error naming the
    message, and the model stays usable."""
    sess = InferenceSession()
    g = Graph("rebind", lambda v: ops.rebind(v, [4], "need four") + 1,
              input_types=[TensorType(DType.float32, ["n"])])
    model = sess.load(g)
    x = np.arange(4, dtype=np.float32)
    (y,) = model.execute(x)
    assert_close(y.to_numpy(), x + 1)
    with pytest.raises(Exception, match="need four"):
        model.execute(np.arange(5, dtype=np.float32))
    (y,) = model.execute(x)
    assert_close(y.to_numpy(), x + 1)


# ---- transpose, permute --------------------------------------------------------------------------

PERMUTES = [
    ((2, 3), (1, 0)),
    ((2, 3, 4), (0, 2, 1)),
    ((2, 3, 4), (2, 0, 1)),
    ((2, 3, 4, 5), (0, 2, 1, 3)),      # attention's head split: rows stay contiguous
    ((2, 7, 3, 8), (0, 2, 3, 1)),      # [B, S, H, D] -> [B, H, D, S]
    ((1, 5, 1, 4), (3, 2, 1, 0)),
    ((0, 3, 2), (2, 1, 0)),
    ((3,), (0,)),
    ((67, 131), (1, 0)),               # past the 8x8 register block and the 32x32 tile
    ((4, 3, 33, 17), (0, 1, 3, 2)),
    ((2, 64, 56), (0, 2, 1)),          # NCHW-like channel moves
]


@pytest.mark.parametrize("shape,perm", PERMUTES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_permute(shape, perm, dtype):
    x = rand(shape, dtype)
    check(lambda v: ops.permute(v, list(perm)), [x], np.transpose(x, perm), dtype)


@pytest.mark.parametrize("shape,a,b", [((2, 3), 0, 1), ((2, 3, 4), -1, -2), ((2, 3, 4), 0, 2), ((5, 1), 0, 1),
                                       ((3, 3), 1, 1), ((2, 0, 3), 0, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_transpose(shape, a, b, dtype):
    x = rand(shape, dtype)
    check(lambda v: ops.transpose(v, a, b), [x], np.swapaxes(x, a, b))


def test_transpose_large_float32():
    x = rand((3, 200, 300))
    check(lambda v: ops.transpose(v, 1, 2), [x], np.swapaxes(x, 1, 2))


# ---- broadcast_to, tile ----------------------------------------------------------------------------

BROADCASTS = [((3,), (2, 3)), ((2, 1), (2, 4)), ((1, 1), (3, 0)), ((1, 3, 1), (2, 3, 5)), ((), (2, 2)), ((2, 3), (2, 3)),
              ((4, 1, 6), (4, 5, 6)), ((1,), (1,))]


@pytest.mark.parametrize("shape,target", BROADCASTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_to(shape, target, dtype):
    x = rand(shape, dtype)
    check(lambda v: ops.broadcast_to(v, list(target)), [x], np.broadcast_to(x, target), dtype)


def test_broadcast_to_with_a_shape_tensor():
    x = rand((3, 1))
    shape = np.array([2, 3, 4], np.int64)
    check(lambda v, s: ops.broadcast_to(v, s, out_dims=[2, 3, 4]), [x, shape], np.broadcast_to(x, (2, 3, 4)))


@pytest.mark.parametrize("shape,reps", [((2, 3), (2, 1)), ((2, 3), (1, 3)), ((2, 3), (2, 2)), ((1,), (5,)), ((2, 0), (2, 3)),
                                        ((2, 3), (0, 1)), ((3, 1, 2), (1, 4, 2)), ((), ())])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float16, np.int64, "bfloat16"])
def test_tile(shape, reps, dtype):
    x = rand(shape, dtype)
    check(lambda v: ops.tile(v, list(reps)), [x], np.tile(x, reps) if reps else x, dtype)


# ---- concat, stack, split, chunk -------------------------------------------------------------------

CONCATS = [([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1), (2, 0)], 1), ([(2, 3, 4), (2, 3, 4)], -1), ([(5,)], 0),
           ([(0, 2), (0, 2)], 0), ([(1, 2, 3), (1, 5, 3), (1, 1, 3)], 1)]


@pytest.mark.parametrize("shapes,axis", CONCATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_concat(shapes, axis, dtype):
    xs = [rand(s, dtype) for s in shapes]
    check(lambda *vs: ops.concat(list(vs), axis), xs, np.concatenate(xs, axis), dtype, n_data=len(xs))


@pytest.mark.parametrize("shape,n,axis", [((2, 3), 2, 0), ((2, 3), 3, 1), ((2, 3), 2, 2), ((2, 3), 2, -1), ((4,), 1, 0),
                                          ((0, 3), 2, 1), ((), 3, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.float64, "bfloat16"])
def test_stack(shape, n, axis, dtype):
    xs = [rand(shape, dtype) for _ in range(n)]
    check(lambda *vs: ops.stack(list(vs), axis), xs, np.stack(xs, axis), dtype, n_data=n)


@pytest.mark.parametrize("shape,sizes,axis", [((5, 3), [2, 3], 0), ((2, 6), [1, 0, 5], 1), ((2, 6), [6], -1),
                                              ((3, 4, 2), [1, 1, 2], 1), ((0, 4), [3, 1], 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.int64, np.bool_])
def test_split(shape, sizes, axis, dtype):
    x = rand(shape, dtype)
    want = np.split(x, np.cumsum(sizes)[:-1], axis)
    check(lambda v: tuple(ops.split(v, sizes, axis)), [x], want)


@pytest.mark.parametrize("shape,chunks,axis", [((6, 2), 3, 0), ((2, 8), 4, -1), ((2, 3), 1, 0), ((0, 4), 2, 1)])
def test_chunk(shape, chunks, axis):
    x = rand(shape, np.float16)
    check(lambda v: tuple(ops.chunk(v, chunks, axis)), [x], np.split(x, chunks, axis))


# ---- repeat_interleave -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,repeats,axis", [((2, 3), 2, 0), ((2, 3), 3, 1), ((2, 3), 2, None), ((2, 3), 1, -1),
                                                ((0, 3), 2, 1), ((4,), 5, 0), ((2, 1, 3), 2, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, "bfloat16"])
def test_repeat_interleave_count(shape, repeats, axis, dtype):
    x = rand(shape, dtype)
    kwargs = {"repeats": repeats} if axis is None else {"repeats": repeats, "axis": axis}
    check(lambda v: ops.repeat_interleave(v, **kwargs), [x], np.repeat(x, repeats, axis), dtype)


@pytest.mark.parametrize("shape,counts,axis", [((2, 3), [1, 0, 2], 1), ((3, 2), [2, 2, 1], 0), ((3,), [4], 0),
                                               ((2, 2), [0, 0], 1)])
@pytest.mark.parametrize("count_dtype", [np.int64, np.int32])
def test_repeat_interleave_tensor(shape, counts, axis, count_dtype):
    x = rand(shape)
    r = np.array(counts, count_dtype)
    want = np.repeat(x, r, axis)
    n = want.shape[axis]
    check(lambda v, c: ops.repeat_interleave(v, c, axis=axis, out_dim=[n]), [x, r], want)


# ---- pad ---------------------------------------------------------------------------------------------

PADS = [((2, 3), [1, 0, 0, 2]), ((2, 3), [0, 0, 0, 0]), ((3,), [2, 3]), ((0, 2), [1, 1, 0, 1]), ((1, 2, 3), [0, 1, 2, 0, 1, 1]),
        ((2, 2), [0, 0, 3, 0]), ((), [])]


@pytest.mark.parametrize("shape,paddings", PADS)
@pytest.mark.parametrize("dtype,value", [(np.float32, 0.0), (np.float32, -1.5), (np.float64, 2.25), (np.float16, 3.0),
                                         (np.int32, -7.0), (np.int64, 5.0), (np.uint8, 200.0), (np.bool_, 1.0),
                                         ("bfloat16", 4.0)])
def test_pad_constant(shape, paddings, dtype, value):
    x = rand(shape, dtype)
    pairs = np.array(paddings, np.int64).reshape(len(shape), 2)
    np_dtype = np.float32 if dtype == "bfloat16" else dtype
    # numpy cannot pad a rank-0 array (with no pairs): it is the array itself.
    want = np.pad(x, pairs, constant_values=np.array(value).astype(np_dtype)) if x.ndim else x
    check(lambda v: ops.pad(v, paddings, "constant", value), [x], want, dtype)


# ---- shape_to_tensor ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [[2, 3], [0], [7, 1, 4], []])
def test_shape_to_tensor(shape):
    check(lambda: ops.shape_to_tensor(shape=shape), [], np.array(shape, np.int64))


# ---- fused and unfused pipelines agree -----------------------------------------------------------


@pytest.mark.parametrize("fuse", [True, False])
def test_layout_chain(fuse):
    """A chain of layout ops (what attention's head split looks like) with an add in between."""
    x = rand((2, 5, 12))
    want = np.transpose(x.reshape(2, 5, 3, 4), (0, 2, 1, 3)) + 1
    (y,) = run(lambda v: ops.permute(ops.reshape(v, [2, 5, 3, 4]), [0, 2, 1, 3]) + 1, [x], fuse=fuse)
    assert_close(y, want, rtol=0, atol=0)


def test_shape_to_tensor_of_symbolic_dims_takes_each_call_s_values():
    with Graph("shape_of_batch", input_types=[TensorType(DType.float32, ["batch", 3])]) as g:
        g.output(ops.shape_to_tensor(shape=["batch", 3]), ops.relu(g.inputs[0]))
    model = InferenceSession().load(g)
    for batch in (1, 5, 2):
        shape, _ = model.execute(np.zeros((batch, 3), np.float32))
        assert shape.to_numpy().tolist() == [batch, 3]

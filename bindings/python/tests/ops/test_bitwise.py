"""Conformance of the bitwise extras against numpy: bitwise_and/or/xor (integers and bool,
numpy broadcasting), bitwise_not (integers), and bitcast (numpy's .view to a dtype of the
same width). Not in MAX's op set (like rms_norm): they exist for ONNX's BitwiseAnd/Or/Xor/Not
and BitCast.

Every result is exact. Integer inputs span each dtype's full range, so the high bits and the
sign bit are exercised; bitcast results are compared bit for bit (through an integer view),
so NaN payloads count too.
"""
import numpy as np
import pytest

from harness import assert_close, run
from max_c import _errors
from max_c.dtype import DType
from max_c.graph import ops

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
BINARY_SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 5)), ((), (3,)), ((0, 3), (1, 3)),
                 ((1,), (1,)), ((2, 1, 3), (4, 1)), ((64, 130), (130,))]

BINARY = {
    "bitwise_and": (ops.bitwise_and, np.bitwise_and),
    "bitwise_or": (ops.bitwise_or, np.bitwise_or),
    "bitwise_xor": (ops.bitwise_xor, np.bitwise_xor),
}


def full_range(shape, dtype, seed):
    """Values of `dtype` anywhere in its range (bools: False/True)."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def same_bits(actual, expected, err_msg=""):
    """Exact comparison of any dtype, through an unsigned view of the same width."""
    assert actual.dtype == expected.dtype, f"{err_msg}: dtype {actual.dtype}, expected {expected.dtype}"
    view = np.dtype(f"u{expected.dtype.itemsize}")
    assert_close(np.ascontiguousarray(actual).view(view), np.ascontiguousarray(expected).view(view),
                 err_msg=err_msg)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", INTS + [np.bool_])
def test_bitwise_binary(name, dtype):
    build, ref = BINARY[name]
    for i, (sa, sb) in enumerate(BINARY_SHAPES):
        a, b = full_range(sa, dtype, seed=i), full_range(sb, dtype, seed=i + 100)
        for fuse in (True, False):
            (y,) = run(build, [a, b], fuse=fuse)
            assert_close(y, ref(a, b), err_msg=f"{name} {dtype.__name__} {sa} {sb} fuse={fuse}")


@pytest.mark.parametrize("dtype", INTS)
def test_bitwise_not(dtype):
    for i, shape in enumerate([(), (0,), (1,), (7,), (3, 1, 5), (33, 65)]):
        x = full_range(shape, dtype, seed=i)
        (y,) = run(ops.bitwise_not, [x])
        assert_close(y, np.invert(x), err_msg=f"{dtype.__name__} {shape}")


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint64])
def test_bitwise_chain_fused_and_unfused(dtype):
    # (~a & b) ^ (a | c), c broadcast: a fused program of every bitwise op, narrowing between steps.
    a, b, c = full_range((5, 17), dtype, 1), full_range((5, 17), dtype, 2), full_range((17,), dtype, 3)

    def build(x, y, z):
        return ops.bitwise_xor(ops.bitwise_and(ops.bitwise_not(x), y), ops.bitwise_or(x, z))

    want = (~a & b) ^ (a | c)
    for fuse in (True, False):
        (got,) = run(build, [a, b, c], fuse=fuse)
        assert_close(got, want, err_msg=f"fuse={fuse}")


def test_bitwise_on_bools_next_to_float_ops():
    # Bool bitwise ops between float comparisons and a where: in a fused program they compute
    # in float32, as the logical ops do.
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    w = np.float32(0.5) * x[::-1]

    def build(u, v):
        mask = ops.bitwise_xor(ops.greater(u, v), ops.bitwise_or(ops.less(u, v * 2), ops.equal(u, u)))
        return ops.where(ops.bitwise_and(mask, ops.greater(v, u * 0)), u, v)

    m = np.bitwise_xor(x > w, np.bitwise_or(x < w * 2, x == x))
    want = np.where(np.bitwise_and(m, w > x * 0), x, w)
    for fuse in (True, False):
        (got,) = run(build, [x, w], fuse=fuse)
        assert_close(got, want, rtol=0, atol=0, err_msg=f"fuse={fuse}")


def test_bitwise_errors():
    a32, a64 = np.zeros(3, np.int32), np.zeros(3, np.int64)
    with pytest.raises(_errors.MaxError, match="input 1 'rhs' has dtype int64 but input 0 'lhs' has int32"):
        run(ops.bitwise_and, [a32, a64])
    with pytest.raises(_errors.MaxError, match="must have an integer or bool dtype, got float32"):
        run(ops.bitwise_or, [np.zeros(3, np.float32), np.zeros(3, np.float32)])
    with pytest.raises(_errors.MaxError, match="logical_not"):
        run(ops.bitwise_not, [np.zeros(3, np.bool_)])


# ---- bitcast ----------------------------------------------------------------------------------

BITCASTS = [
    (np.float32, np.int32), (np.int32, np.float32), (np.float64, np.int64), (np.int64, np.float64),
    (np.bool_, np.uint8), (np.int8, np.uint8), (np.uint8, np.int8), (np.uint16, np.int16),
    (np.uint32, np.int32), (np.uint64, np.int64), (np.int64, np.uint64), (np.float16, np.int16),
]


def bitcast_input(shape, dtype, seed):
    if np.issubdtype(dtype, np.floating):
        rng = np.random.default_rng(seed)
        bound = min(1e6, float(np.finfo(dtype).max) / 2)
        x = rng.uniform(-bound, bound, size=shape).astype(dtype)
        flat = x.reshape(-1)
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(dtype).tiny / 2], dtype)
        flat[:min(flat.size, specials.size)] = specials[:flat.size]
        return x
    return full_range(shape, dtype, seed)


@pytest.mark.parametrize("src, dst", BITCASTS, ids=[f"{s.__name__}-{d.__name__}" for s, d in BITCASTS])
def test_bitcast(src, dst):
    for i, shape in enumerate([(), (0,), (7,), (3, 1, 5), (33, 65)]):
        x = bitcast_input(shape, src, seed=i)
        (y,) = run(lambda v: ops.bitcast(v, DType.from_numpy(np.dtype(dst))), [x])
        same_bits(y, x.view(dst), err_msg=f"{src.__name__} -> {dst.__name__} {shape}")


def test_bitcast_between_computed_values():
    # The bytes a kernel wrote, reinterpreted, feed another kernel: the alias takes no copy.
    x = np.array([[1.5, -2.0, 3.25], [np.inf, -0.0, 7.0]], np.float32)

    def build(v):
        bits = ops.bitcast(ops.add(v, v), DType.int32)
        return ops.bitcast(ops.bitwise_xor(bits, ops.constant(np.int32(-2 ** 31), DType.int32, v.device)), DType.float32)

    for fuse in (True, False):
        (y,) = run(build, [x], fuse=fuse)
        same_bits(y, -(x + x), err_msg=f"sign flip through the bits, fuse={fuse}")


def test_bitcast_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(_errors.MaxError, match=r"float32 \(4 bytes\) to int64 \(8 bytes\)"):
        run(lambda v: ops.bitcast(v, DType.int64), [x])
    with pytest.raises(_errors.MaxError, match="smaller than a byte"):
        run(lambda v: ops.bitcast(v, DType.float4_e2m1fn), [np.zeros(4, np.uint8)])

"""Conformance of the elementwise ops against numpy: the 20 unary ops, the binary ops (add sub
mul div mod pow, two-input max/min), comparisons, logical ops and predicates, where, clamp,
cast, and generic elementwise fusion (fused and unfused runs must agree).

Inputs are random with fixed seeds; references are numpy, computed in float64 and rounded to
the tested dtype (integers exactly, in the op's output dtype). Shapes cover rank 0, size-0
and size-1 dims and numpy broadcasts. Tolerances, stated per op family:
  - exact (bit for bit): integer and bool results, the rounding ops, abs/negate/relu,
    comparisons, logical ops, where, clamp, cast, and float32 add/sub/mul/div/max/min;
  - float64: rtol 1e-12 (libm);
  - float32 transcendentals: rtol 2e-6, atol 1e-7 (our vectorized approximations are within
    a few ulps; atol covers sin/cos/erf near their zeros); gelu 'tanh' rtol 1e-5 (its
    argument is rounded in float32 and the negative tail amplifies that);
  - float16: rtol 1e-3, atol 1e-3 (one float16 ulp: the float32 result rounds either way);
  - bfloat16: rtol 2^-7 (one ulp), atol 1e-2.
"""
import math

import numpy as np
import pytest

from harness import assert_close, run
from max_c.dtype import DType
from max_c.graph import ops

FLOATS = [np.float32, np.float64, np.float16]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64]
SHAPES = [(), (0,), (1,), (7,), (3, 1, 5), (2, 0, 3), (33, 65)]
BINARY_SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 5)), ((), (3,)), ((0, 3), (1, 3)),
                 ((1,), (1,)), ((2, 1, 3), (4, 1)), ((64, 130), (130,))]
BF16_TOL = (2.0 ** -7, 1e-2)


def random(shape, dtype, lo=-4.0, hi=4.0, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(int(lo), info.min), min(int(hi), info.max) + 1, size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def to_bf16(a):
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def float_tol(dtype, op=None):
    if dtype == np.float64:
        return 1e-12, 1e-300
    if dtype == np.float16:
        return 1e-3, 1e-3
    if op == "gelu_tanh":
        return 1e-5, 1e-7
    return 2e-6, 1e-7


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


# The references use the forms without cancellation in the negative tail (1 + erf(x) and
# 1 + tanh(x) lose the tail's digits even in float64): x/2 erfc(-x/sqrt2) and x sigmoid(2z).
def _gelu(x):
    return 0.5 * x * _erfc(-x / math.sqrt(2.0))


def _gelu_tanh(x):
    return x / (1.0 + np.exp(-2.0 * 0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _gelu_quick(x):
    return x / (1.0 + np.exp(-1.702 * x))


# name -> (build, float64 reference, input range)
UNARY = {
    "abs": (ops.abs, np.abs, (-4, 4)),
    "acos": (ops.acos, lambda x: np.arccos(np.clip(x, -1, 1)), (-1.2, 1.2)),
    "atanh": (ops.atanh, np.arctanh, (-0.99, 0.99)),
    "cos": (ops.cos, np.cos, (-10, 10)),
    "erf": (ops.erf, _erf, (-4, 4)),
    "exp": (ops.exp, np.exp, (-10, 10)),
    "floor": (ops.floor, np.floor, (-4, 4)),
    "log": (ops.log, np.log, (0.01, 100)),
    "log1p": (ops.log1p, np.log1p, (-0.99, 10)),
    "negate": (ops.negate, np.negative, (-4, 4)),
    "relu": (ops.relu, lambda x: np.maximum(x, 0), (-4, 4)),
    "round": (ops.round, np.round, (-4, 4)),
    "rsqrt": (ops.rsqrt, lambda x: 1.0 / np.sqrt(x), (0.01, 100)),
    "sigmoid": (ops.sigmoid, lambda x: 1.0 / (1.0 + np.exp(-x)), (-10, 10)),
    "silu": (ops.silu, lambda x: x / (1.0 + np.exp(-x)), (-10, 10)),
    "sin": (ops.sin, np.sin, (-10, 10)),
    "sqrt": (ops.sqrt, np.sqrt, (0.0, 100)),
    "tanh": (ops.tanh, np.tanh, (-6, 6)),
    "trunc": (ops.trunc, np.trunc, (-4, 4)),
    "gelu": (lambda x: ops.gelu(x), _gelu, (-6, 6)),
    "gelu_tanh": (lambda x: ops.gelu(x, approximate="tanh"), _gelu_tanh, (-6, 6)),
    "gelu_quick": (lambda x: ops.gelu(x, approximate="quick"), _gelu_quick, (-6, 6)),
}
EXACT_UNARY = {"abs", "floor", "negate", "relu", "round", "trunc"}


def unary_reference(name, x):
    ref = UNARY[name][1]
    with np.errstate(all="ignore"):
        return ref(x.astype(np.float64)).astype(x.dtype)


# ---- unary -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_float(name, dtype):
    build, _, (lo, hi) = UNARY[name]
    for i, shape in enumerate(SHAPES):
        x = random(shape, dtype, lo, hi, seed=i)
        (y,) = run(build, [x])
        want = unary_reference(name, x)
        if name in EXACT_UNARY:
            assert_close(y, want, rtol=0, atol=0, err_msg=f"{name} {shape}")
        else:
            rtol, atol = float_tol(dtype, name)
            assert_close(y, want, rtol=rtol, atol=atol, err_msg=f"{name} {shape}")


@pytest.mark.parametrize("name", sorted(EXACT_UNARY))
@pytest.mark.parametrize("dtype", INTS)
def test_unary_integer(name, dtype):
    x = random((5, 9), dtype, -120, 120, seed=3)
    if dtype == np.int8:
        x.flat[0] = -128  # abs and negate wrap, as in numpy
    (y,) = run(UNARY[name][0], [x])
    with np.errstate(all="ignore"):
        want = {"abs": np.abs, "negate": np.negative, "relu": lambda v: np.maximum(v, 0)}.get(name, lambda v: v)(x)
    assert_close(y, want.astype(dtype))


def test_round_is_half_to_even():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997], np.float32)
    (y,) = run(ops.round, [x])
    assert_close(y, np.round(x), rtol=0, atol=0)


def test_unary_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 88.8, -104.0], np.float32)
    for name in ["exp", "tanh", "sigmoid", "erf", "abs", "relu", "floor", "sqrt", "log", "gelu", "silu"]:
        (y,) = run(UNARY[name][0], [x])
        want = unary_reference(name, x)
        if name == "gelu":
            want[2] = -0.0  # the limit; the formula gives -inf * 0 = NaN
        assert_close(y, want, rtol=2e-6, atol=1e-38, err_msg=name)
    big = np.array([1e6, -3e7, np.inf, np.nan], np.float32)
    (y,) = run(ops.sin, [big])
    with np.errstate(invalid="ignore"):
        want = np.sin(big.astype(np.float64)).astype(np.float32)
    assert_close(y, want, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "gelu", "sqrt", "log", "abs", "round"])
def test_unary_bfloat16(name):
    build, _, (lo, hi) = UNARY[name]
    x = to_bf16(random((4, 33), np.float32, lo, hi, seed=5))
    (y,) = run(lambda v: ops.cast(build(ops.cast(v, DType.bfloat16)), DType.float32), [x])
    assert_close(y, to_bf16(unary_reference(name, x)), rtol=BF16_TOL[0], atol=BF16_TOL[1])


# ---- binary ------------------------------------------------------------------------------------

BINARY = {
    "add": (ops.add, np.add),
    "sub": (ops.sub, np.subtract),
    "mul": (ops.mul, np.multiply),
    "div": (ops.div, np.divide),
    "mod": (ops.mod, np.mod),
    "pow": (ops.pow, np.power),
    "max": (lambda a, b: ops.max(a, b), np.maximum),
    "min": (lambda a, b: ops.min(a, b), np.minimum),
}


def binary_inputs(name, shapes, dtype, seed):
    a = random(shapes[0], dtype, -50, 50, seed=seed)
    b = random(shapes[1], dtype, -50, 50, seed=seed + 100)
    if name == "pow":
        if np.issubdtype(dtype, np.integer):
            a = random(shapes[0], dtype, -3, 3, seed=seed)
            b = random(shapes[1], dtype, 0, 5, seed=seed + 100)
        else:
            a = random(shapes[0], dtype, 0.1, 3, seed=seed)
            b = random(shapes[1], dtype, -2, 2, seed=seed + 100)
    if name in ("div", "mod"):
        b = np.where(b == 0, 7, b).astype(dtype)  # x / 0 and x % 0 are tested separately
    return a, b


def binary_reference(name, a, b, out_dtype):
    ref = BINARY[name][1]
    with np.errstate(all="ignore"):
        if np.issubdtype(out_dtype, np.integer):
            return ref(a.astype(out_dtype), b.astype(out_dtype))
        return ref(a.astype(np.float64), b.astype(np.float64)).astype(out_dtype)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_binary(name, dtype):
    for i, shapes in enumerate(BINARY_SHAPES):
        a, b = binary_inputs(name, shapes, dtype, seed=i)
        (y,) = run(BINARY[name][0], [a, b])
        out = np.float32 if name == "div" and np.issubdtype(dtype, np.integer) else dtype
        want = binary_reference(name, a, b, out)
        if np.issubdtype(out, np.integer) or (out == np.float32 and name in ("add", "sub", "mul", "div", "max", "min")):
            assert_close(y, want, rtol=0, atol=0, err_msg=f"{name} {shapes}")
        else:
            rtol, atol = float_tol(out)
            assert_close(y, want, rtol=rtol, atol=atol, err_msg=f"{name} {shapes}")


@pytest.mark.parametrize("a_dtype,b_dtype,out", [(np.int32, np.float32, np.float32),
                                                  (np.uint8, np.int8, np.int16),
                                                  (np.int8, np.int64, np.int64),
                                                  (np.float16, np.float32, np.float32),
                                                  (np.int16, np.uint16, np.int32)])
def test_binary_promotes_mixed_dtypes(a_dtype, b_dtype, out):
    a = random((3, 4), a_dtype, 0, 100, seed=1)
    b = random((4,), b_dtype, -100, 100, seed=2)
    (y,) = run(ops.add, [a, b])
    assert_close(y, a.astype(out) + b.astype(out), rtol=0, atol=0)
    (y,) = run(ops.mul, [a, b])
    with np.errstate(all="ignore"):
        assert_close(y, a.astype(out) * b.astype(out), rtol=0, atol=0)


def test_integer_division_is_true_division():
    a = np.array([[7, -7, 1, 0]], np.int32)
    b = np.array([2, 2, 3, 5], np.int32)
    (y,) = run(ops.div, [a, b])
    assert_close(y, a.astype(np.float32) / b.astype(np.float32), rtol=0, atol=0)


def test_mod_sign_and_zero_divisor():
    a = np.array([5, -5, 5, -5, 3, -3], np.float32)
    b = np.array([3, 3, -3, -3, 0, 1.5], np.float32)
    (y,) = run(ops.mod, [a, b])
    with np.errstate(all="ignore"):
        assert_close(y, np.mod(a, b), rtol=0, atol=0)
    ai, bi = a.astype(np.int32), np.array([3, 3, -3, -3, 0, -1], np.int32)
    (y,) = run(ops.mod, [ai, bi])
    with np.errstate(all="ignore"):
        assert_close(y, np.mod(ai, bi), rtol=0, atol=0)


def test_max_min_propagate_nan():
    a = np.array([np.nan, 1.0, 2.0, -np.inf], np.float32)
    b = np.array([1.0, np.nan, 3.0, 0.0], np.float32)
    (hi, lo) = run(lambda x, y: (ops.max(x, y), ops.min(x, y)), [a, b])
    assert_close(hi, np.maximum(a, b), rtol=0, atol=0)
    assert_close(lo, np.minimum(a, b), rtol=0, atol=0)


def test_pow_by_constant_exponents():
    x = random((5, 7), np.float32, -3, 3, seed=4)
    for e in [0.0, 1.0, 2.0, 3.0, -1.0, 0.5, 1.7]:
        xs = np.abs(x) + 0.1 if e in (0.5, 1.7) else x
        (y,) = run(lambda v, e=e: ops.pow(v, np.float32(e)), [xs])
        with np.errstate(all="ignore"):
            want = np.power(xs.astype(np.float64), e).astype(np.float32)
        assert_close(y, want, rtol=2e-6, atol=1e-7, err_msg=f"x ** {e}")


def test_float_division_by_zero():
    a = np.array([1.0, -1.0, 0.0], np.float32)
    b = np.zeros(3, np.float32)
    (y,) = run(ops.div, [a, b])
    with np.errstate(all="ignore"):
        assert_close(y, a / b, rtol=0, atol=0)


def test_binary_bfloat16():
    a = to_bf16(random((3, 8), np.float32, seed=1))
    b = to_bf16(random((8,), np.float32, seed=2))
    bf = DType.bfloat16
    for name in ["add", "sub", "mul", "div", "max", "min"]:
        build = BINARY[name][0]
        (y,) = run(lambda x, z: ops.cast(build(ops.cast(x, bf), ops.cast(z, bf)), DType.float32), [a, b])
        assert_close(y, to_bf16(binary_reference(name, a, b, np.float32)), rtol=BF16_TOL[0], atol=BF16_TOL[1],
                     err_msg=name)


# ---- comparison, logical, predicates ------------------------------------------------------------

COMPARISONS = {
    "equal": (ops.equal, np.equal),
    "not_equal": (ops.not_equal, np.not_equal),
    "greater": (ops.greater, np.greater),
    "greater_equal": (ops.greater_equal, np.greater_equal),
    "less": (ops.less, np.less),
    "less_equal": (ops.less_equal, np.less_equal),
}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.bool_])
def test_comparison(name, dtype):
    build, ref = COMPARISONS[name]
    for i, shapes in enumerate(BINARY_SHAPES):
        a = random(shapes[0], dtype, -3, 3, seed=i)  # a narrow range so equal values occur
        b = random(shapes[1], dtype, -3, 3, seed=i + 50)
        if np.issubdtype(dtype, np.floating):
            a, b = np.round(a), np.round(b)
        (y,) = run(build, [a, b])
        assert_close(y, ref(a, b), err_msg=f"{name} {shapes}")


def test_comparison_with_nan_and_mixed_dtypes():
    a = np.array([np.nan, 1.0, 2.0, np.inf], np.float32)
    b = np.array([np.nan, np.nan, 2.0, np.inf], np.float32)
    for name, (build, ref) in COMPARISONS.items():
        (y,) = run(build, [a, b])
        assert_close(y, ref(a, b), err_msg=name)
    ai = np.array([1, 2, 3], np.int32)
    bf = np.array([1.5, 2.0, 2.5], np.float32)
    (y,) = run(ops.greater, [ai, bf])
    assert_close(y, ai.astype(np.float32) > bf)


LOGICAL = {
    "logical_and": (ops.logical_and, np.logical_and),
    "logical_or": (ops.logical_or, np.logical_or),
    "logical_xor": (ops.logical_xor, np.logical_xor),
}


@pytest.mark.parametrize("name", sorted(LOGICAL))
def test_logical_binary(name):
    build, ref = LOGICAL[name]
    for i, shapes in enumerate(BINARY_SHAPES):
        a = random(shapes[0], np.bool_, seed=i)
        b = random(shapes[1], np.bool_, seed=i + 7)
        (y,) = run(build, [a, b])
        assert_close(y, ref(a, b), err_msg=f"{name} {shapes}")


def test_logical_not():
    for i, shape in enumerate(SHAPES):
        x = random(shape, np.bool_, seed=i)
        (y,) = run(ops.logical_not, [x])
        assert_close(y, np.logical_not(x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_is_inf_is_nan(dtype):
    x = np.array([[0.0, np.inf, -np.inf, np.nan], [1.0, -2.0, 65504.0, -0.0]], dtype)
    (i, n) = run(lambda v: (ops.is_inf(v), ops.is_nan(v)), [x])
    assert_close(i, np.isinf(x))
    assert_close(n, np.isnan(x))


# ---- where, clamp ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.bool_])
def test_where(dtype):
    cases = [((2, 3), (2, 3), (2, 3)), ((2, 1), (3,), (2, 3)), ((), (4,), (1,)), ((0, 2), (2,), (1, 2)),
             ((3, 1, 4), (1, 5, 1), (4,))]
    for i, (sc, sx, sy) in enumerate(cases):
        c = random(sc, np.bool_, seed=i)
        x = random(sx, dtype, -9, 9, seed=i + 1)
        y = random(sy, dtype, -9, 9, seed=i + 2)
        (out,) = run(ops.where, [c, x, y])
        assert_close(out, np.where(c, x, y), rtol=0, atol=0, err_msg=str((sc, sx, sy)))


def test_where_promotes_branches():
    c = np.array([True, False, True])
    x = np.array([1, 2, 3], np.int32)
    y = np.array([0.5, 1.5, 2.5], np.float32)
    (out,) = run(ops.where, [c, x, y])
    assert_close(out, np.where(c, x.astype(np.float32), y), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int8, np.uint8])
@pytest.mark.parametrize("bounds", [(-1.5, 2.25), (None, 0.5), (-0.5, None), (3.0, 3.0), (None, None)])
def test_clamp(dtype, bounds):
    lo, hi = bounds
    x = random((6, 11), dtype, -5, 5, seed=9)
    kwargs = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
    (y,) = run(lambda v: ops.clamp(v, **kwargs), [x])
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        ilo = info.min if lo is None else max(math.ceil(lo), info.min)
        ihi = info.max if hi is None else min(math.floor(hi), info.max)
        want = np.clip(x, ilo, ihi).astype(dtype)
    else:
        want = np.clip(x, dtype(-np.inf) if lo is None else dtype(lo), dtype(np.inf) if hi is None else dtype(hi))
    assert_close(y, want, rtol=0, atol=0)


def test_clamp_keeps_nan():
    x = np.array([np.nan, -5.0, 5.0], np.float32)
    (y,) = run(lambda v: ops.clamp(v, min=-1.0, max=1.0), [x])
    assert_close(y, np.array([np.nan, -1.0, 1.0], np.float32), rtol=0, atol=0)


# ---- cast ---------------------------------------------------------------------------------------

CAST_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
               np.float16, np.float32, np.float64]


def cast_source(dtype):
    """Values every destination holds or truncates in a defined way: 0..100 and fractions."""
    base = np.array([[0, 1, 2, 7, 100, 3, 64, 99]], np.float64)
    if np.issubdtype(dtype, np.floating):
        base = base + np.array([0, 0.5, 0.25, 0.75, 0, 0.9, 0.1, 0])
    return base.astype(dtype)


@pytest.mark.parametrize("src", CAST_DTYPES)
def test_cast_every_pair(src):
    x = cast_source(src)
    dsts = [d for d in CAST_DTYPES]
    outs = run(lambda v: tuple(ops.cast(v, DType.from_numpy(np.dtype(d))) for d in dsts), [x])
    for d, y in zip(dsts, outs):
        assert_close(y, x.astype(d), rtol=0, atol=0, err_msg=f"{np.dtype(src)} -> {np.dtype(d)}")


def test_cast_wraps_and_rounds_like_numpy():
    x = np.array([-1, 255, 256, -129, 300, 70000], np.int32)
    for d in [np.int8, np.uint8, np.int16, np.uint16, np.uint64, np.float16]:
        (y,) = run(lambda v, d=d: ops.cast(v, DType.from_numpy(np.dtype(d))), [x])
        with np.errstate(all="ignore"):
            assert_close(y, x.astype(d), rtol=0, atol=0, err_msg=str(np.dtype(d)))
    f = np.array([1e-8, 65519.0, 65520.0, 1e10, -3.99, 2.5, np.nan, np.inf], np.float32)
    (y,) = run(lambda v: ops.cast(v, DType.float16), [f])
    with np.errstate(all="ignore"):
        assert_close(y, f.astype(np.float16), rtol=0, atol=0)
    (y,) = run(lambda v: ops.cast(v, DType.bool), [f])
    assert_close(y, f.astype(np.bool_))


def test_cast_bfloat16_round_trip():
    x = random((5, 17), np.float32, -1000, 1000, seed=12)
    x[0, :4] = [np.nan, np.inf, -np.inf, 1e-40]
    (y,) = run(lambda v: ops.cast(ops.cast(v, DType.bfloat16), DType.float32), [x])
    assert_close(y, to_bf16(x), rtol=0, atol=0)
    (yi,) = run(lambda v: ops.cast(ops.cast(v, DType.bfloat16), DType.int32), [np.round(x[1:]) / 8])
    assert_close(yi, to_bf16(np.round(x[1:]) / 8).astype(np.int32), rtol=0, atol=0)


# ---- fusion -------------------------------------------------------------------------------------


def both(build, inputs):
    """Runs build fused and unfused; they must agree bit for bit (a fused chain narrows every
    intermediate to its dtype, exactly as the separate ops store it)."""
    fused = run(build, inputs, fuse=True)
    plain = run(build, inputs, fuse=False)
    for f, p in zip(fused, plain):
        assert f.dtype == p.dtype and f.shape == p.shape
        np.testing.assert_array_equal(f, p)
    return fused


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_fused_gelu_of_affine_matches_unfused(dtype):
    x = random((48, 96), dtype, seed=1)
    w = random((96,), dtype, seed=2)
    b = random((96,), dtype, seed=3)
    (y,) = both(lambda v, ww, bb: ops.gelu(v * ww + bb), [x, w, b])
    t = (x * w + b).astype(np.float64)  # numpy rounds each op to the dtype, as the kernels do
    rtol, atol = float_tol(dtype)
    assert_close(y, _gelu(t).astype(dtype), rtol=rtol, atol=atol)


def test_fused_dag_with_several_outputs():
    x = random((7, 1, 33), np.float32, -1, 1, seed=4)
    s = random((1, 5, 33), np.float32, -1, 1, seed=5)

    def build(v, scale):
        e = ops.exp(v) * scale        # broadcast inside the group
        t = ops.tanh(e - v)           # v read again after e
        keep = ops.greater(t, 0.1)
        return e, ops.where(keep, t, ops.negate(t)), ops.logical_not(keep)

    e, w, n = both(build, [x, s])
    assert_close(e, (np.exp(x.astype(np.float64)) * s).astype(np.float32), rtol=2e-6, atol=1e-7)
    t = np.tanh((e - x).astype(np.float64)).astype(np.float32)  # e - x in float32, as the kernel
    keep = t > np.float32(0.1)
    assert_close(w, np.where(keep, t, -t), rtol=2e-6, atol=1e-7)
    assert_close(n, ~keep)


def test_fused_integer_chain_wraps_each_step():
    a = random((9, 10), np.int8, -100, 100, seed=6)
    b = random((10,), np.int8, -100, 100, seed=7)
    (y, z) = both(lambda u, v: ((u + v) * v, ops.max(u - v, v)), [a, b])
    with np.errstate(all="ignore"):
        assert_close(y, (a + b) * b)
        assert_close(z, np.maximum(a - b, b))


def test_fused_casts_within_a_domain():
    x = random((4, 25), np.float32, -70000, 70000, seed=8)
    (y,) = both(lambda v: ops.cast(ops.cast(v, DType.float16) * 2.0, DType.float32) + v, [x])
    with np.errstate(all="ignore"):
        want = (x.astype(np.float16) * np.float16(2)).astype(np.float32) + x
    assert_close(y, want, rtol=0, atol=0)


def test_fused_casts_between_domains():
    """A cast from integers opens a float group (the attention-mask pattern); a cast to
    integers closes one (quantization)."""
    mask = random((2, 1, 1, 9), np.int64, 0, 1, seed=13)
    scores = random((2, 3, 9, 9), np.float32, seed=14)
    (y,) = both(lambda m, s: (1.0 - ops.cast(m, DType.float32)) * -10000.0 + s, [mask, scores])
    assert_close(y, (np.float32(1) - mask.astype(np.float32)) * np.float32(-10000) + scores, rtol=0, atol=0)
    x = random((5, 40), np.float32, -50, 50, seed=15)
    (q, r) = both(lambda v: (ops.cast(ops.round(v * 3.0), DType.int8), ops.round(v * 3.0) + 1.0), [x])
    with np.errstate(all="ignore"):
        assert_close(q, np.round(x * np.float32(3)).astype(np.int8))
    assert_close(r, np.round(x * np.float32(3)) + np.float32(1), rtol=0, atol=0)


def test_fusion_across_dtypes_and_reductions():
    """Casts whose value is read in another domain, reductions and max/min with one input
    end a fused group."""
    x = random((6, 20), np.float32, seed=9)

    def build(v):
        i = ops.cast(v * 10.0, DType.int32)
        m = ops.max(ops.exp(v), axis=-1)
        return ops.cast(i + 1, DType.float32) * 0.5, m + 1.0

    (a, m) = both(build, [x])
    assert_close(a, ((x * np.float32(10)).astype(np.int32) + 1).astype(np.float32) * np.float32(0.5), rtol=0, atol=0)
    assert_close(m, (np.exp(x.astype(np.float64)).max(axis=-1, keepdims=True) + 1).astype(np.float32),
                 rtol=2e-6, atol=1e-7)


def test_large_tensor_uses_threads():
    x = random((513, 1031), np.float32, seed=10)
    b = random((1031,), np.float32, seed=11)
    (y,) = both(lambda v, bb: ops.tanh(v + bb) * v, [x, b])
    xd = x.astype(np.float64)
    assert_close(y, (np.tanh((x + b).astype(np.float64)) * xd).astype(np.float32), rtol=2e-6, atol=1e-7)

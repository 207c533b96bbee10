"""Op conformance against numpy: softmax, logsoftmax, layer_norm, rms_norm (inventory §5.7 and
the rms_norm extra), and the fused residual add + layer_norm (fuse=True against fuse=False).

Inputs are random (fixed seeds); references are numpy in float64, rounded to the tested
dtype. Tolerances, per dtype: float64 1e-10 rel / 1e-12 abs, float32 1e-5 rel / 2e-6 abs
(softmax) and 1e-4 rel / 1e-5 abs (norms: a division by the row's deviation), float16
2e-3 rel / 1e-3 abs, bfloat16 2^-7 rel (one ulp) / 1e-2 abs.
"""
import numpy as np
import pytest

from harness import assert_close, run
from max_c.dtype import DType
from max_c.graph import ops

FLOATS = [np.float32, np.float64, np.float16]

rng = np.random.default_rng(4321)


def random(shape, dtype=np.float32, low=-4.0, high=4.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


def to_bf16(a):
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


SOFTMAX_TOL = {np.float64: (1e-10, 1e-12), np.float32: (1e-5, 2e-6), np.float16: (2e-3, 1e-3)}
NORM_TOL = {np.float64: (1e-10, 1e-12), np.float32: (1e-4, 1e-5), np.float16: (2e-3, 2e-3)}
BF16_TOL = (2.0 ** -7, 1e-2)


def reference_softmax(x, axis, log):
    w = x.astype(np.float64)
    if w.shape[axis] == 0:
        return w  # nothing to normalize; numpy's max has no identity
    shifted = w - np.max(w, axis=axis, keepdims=True)
    log_sum = np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return shifted - log_sum if log else np.exp(shifted - log_sum)


SOFTMAX_SHAPES_AXES = [
    ((5,), -1),
    ((1,), 0),
    ((3, 8), -1),
    ((3, 8), 0),
    ((2, 3, 4), 1),
    ((2, 3, 4), -3),
    ((4, 1, 3), 1),
    ((2, 12, 128, 128), -1),  # attention scores
    ((2, 5, 300), 1),         # the strided path past one column block
    ((3, 1000), -1),
    ((0, 4), -1),
    ((3, 0), -1),
]


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,axis", SOFTMAX_SHAPES_AXES)
def test_softmax(log, dtype, shape, axis):
    x = random(shape, dtype, -10, 10)
    op = ops.logsoftmax if log else ops.softmax
    (y,) = run(lambda v: op(v, axis=axis), [x])
    rtol, atol = SOFTMAX_TOL[dtype]
    assert_close(y, reference_softmax(x, axis, log).astype(dtype), rtol=rtol, atol=atol)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,axis", [((3, 40), -1), ((40, 3), 0)])
def test_softmax_bfloat16(log, shape, axis):
    x = to_bf16(random(shape, np.float32))
    op = ops.logsoftmax if log else ops.softmax
    (y,) = run(lambda v: ops.cast(op(ops.cast(v, DType.bfloat16), axis=axis), DType.float32), [x])
    want = to_bf16(reference_softmax(x, axis, log).astype(np.float32))
    assert_close(y, want, rtol=BF16_TOL[0], atol=BF16_TOL[1])


def test_softmax_masked_entries_large_values_and_nan():
    x = random((4, 20), np.float32)
    x[0, 3:] = -np.inf          # an attention mask
    x[1] += 1e4                 # large logits: only the max subtraction keeps them finite
    x[2, 5] = np.nan            # NaN poisons its row, as numpy's formula does
    with np.errstate(invalid="ignore"):
        want = reference_softmax(x, -1, False).astype(np.float32)
        want_log = reference_softmax(x, -1, True).astype(np.float32)
    y, ylog = run(lambda v: (ops.softmax(v), ops.logsoftmax(v)), [x])
    assert_close(y, want, rtol=1e-5, atol=2e-6)
    assert_close(ylog, want_log, rtol=1e-5, atol=2e-6)
    assert np.all(np.isnan(y[2]))
    assert np.all(y[0, 3:] == 0)


def reference_layer_norm(x, gamma, beta, eps):
    w = x.astype(np.float64)
    mean = w.mean(axis=-1, keepdims=True)
    var = ((w - mean) ** 2).mean(axis=-1, keepdims=True)
    return (w - mean) / np.sqrt(var + eps) * gamma.astype(np.float64) + beta.astype(np.float64)


NORM_SHAPES = [(4,), (1, 1), (3, 8), (2, 3, 33), (5, 384), (2, 1000), (0, 8), (1, 16)]


@pytest.mark.parametrize("eps", [1e-5, 1e-3, 0.5])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", NORM_SHAPES)
def test_layer_norm(eps, dtype, shape):
    x, g, b = random(shape, dtype), random(shape[-1:], dtype), random(shape[-1:], dtype)
    (y,) = run(lambda v, gamma, beta: ops.layer_norm(v, gamma, beta, epsilon=eps), [x, g, b])
    rtol, atol = NORM_TOL[dtype]
    assert_close(y, reference_layer_norm(x, g, b, eps).astype(dtype), rtol=rtol, atol=atol)


def test_layer_norm_keeps_precision_with_a_large_mean():
    x = random((3, 384), np.float32) + 1000.0
    g, b = np.ones(384, np.float32), np.zeros(384, np.float32)
    (y,) = run(lambda v, gamma, beta: ops.layer_norm(v, gamma, beta, epsilon=1e-5), [x, g, b])
    assert_close(y, reference_layer_norm(x, g, b, 1e-5).astype(np.float32), rtol=1e-4, atol=1e-4)


def test_layer_norm_bfloat16():
    x, g, b = (to_bf16(random(s)) for s in [(4, 64), (64,), (64,)])

    def build(v, gamma, beta):
        bf = [ops.cast(t, DType.bfloat16) for t in (v, gamma, beta)]
        return ops.cast(ops.layer_norm(*bf, epsilon=1e-5), DType.float32)

    (y,) = run(build, [x, g, b])
    want = to_bf16(reference_layer_norm(x, g, b, 1e-5).astype(np.float32))
    assert_close(y, want, rtol=BF16_TOL[0], atol=BF16_TOL[1])


def reference_rms_norm(x, w, eps, offset, multiply_before_cast, dtype):
    """MAX's nn.RMSNorm: x / sqrt(mean(x^2) + eps) * (w + offset), with the normalized value
    rounded to the dtype first when multiply_before_cast is false."""
    v = x.astype(np.float64)
    n = v / np.sqrt((v * v).mean(axis=-1, keepdims=True) + eps)
    weight = w.astype(np.float64) + offset
    if multiply_before_cast:
        return (n * weight).astype(dtype)
    return (n.astype(dtype).astype(np.float64) * weight.astype(dtype).astype(np.float64)).astype(dtype)


@pytest.mark.parametrize("multiply_before_cast", [True, False])
@pytest.mark.parametrize("offset", [0.0, 1.0])
@pytest.mark.parametrize("eps", [1e-6, 1e-2])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", NORM_SHAPES)
def test_rms_norm(multiply_before_cast, offset, eps, dtype, shape):
    x, w = random(shape, dtype), random(shape[-1:], dtype)

    def build(v, weight):
        return ops.rms_norm(v, weight, epsilon=eps, weight_offset=offset,
                            multiply_before_cast=multiply_before_cast)

    (y,) = run(build, [x, w])
    rtol, atol = NORM_TOL[dtype]
    assert_close(y, reference_rms_norm(x, w, eps, offset, multiply_before_cast, dtype), rtol=rtol, atol=atol)


@pytest.mark.parametrize("multiply_before_cast", [True, False])
def test_rms_norm_bfloat16(multiply_before_cast):
    x, w = to_bf16(random((3, 96))), to_bf16(random((96,)))

    def build(v, weight):
        y = ops.rms_norm(ops.cast(v, DType.bfloat16), ops.cast(weight, DType.bfloat16), epsilon=1e-6,
                         weight_offset=1.0, multiply_before_cast=multiply_before_cast)
        return ops.cast(y, DType.float32)

    (y,) = run(build, [x, w])
    v = x.astype(np.float64)
    n = v / np.sqrt((v * v).mean(axis=-1, keepdims=True) + 1e-6)
    if multiply_before_cast:
        want = to_bf16((n * (w + 1.0)).astype(np.float32))
    else:
        want = to_bf16(to_bf16(n.astype(np.float32)) * to_bf16(w + np.float32(1.0)))
    assert_close(y, want, rtol=BF16_TOL[0], atol=BF16_TOL[1])


# ---- residual add + layer_norm: the fused kernel against the unfused graph and numpy -------

ADD_LN_CASES = [
    # (x shape, residual shape, residual first)
    ((2, 16, 384), (2, 16, 384), False),
    ((3, 33), (3, 33), True),
    ((4, 8), (8,), False),       # a row broadcast over the batch
    ((4, 8), (1, 8), True),      # broadcast row on the left of the add
    ((2, 3, 8), (1, 1, 8), False),
    ((4, 8), (4, 1), False),     # a broadcast the kernel does not take: stays unfused
    ((1, 1), (1, 1), False),
    ((0, 8), (0, 8), False),
]


@pytest.mark.parametrize("keep_sum", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape,r_shape,residual_first", ADD_LN_CASES)
def test_add_layer_norm_fused_matches_unfused_and_numpy(keep_sum, dtype, x_shape, r_shape, residual_first):
    d = x_shape[-1]
    x, r = random(x_shape, dtype), random(r_shape, dtype)
    g, b = random((d,), dtype), random((d,), dtype)

    def build(v, res, gamma, beta):
        s = ops.add(res, v) if residual_first else ops.add(v, res)
        y = ops.layer_norm(s, gamma, beta, epsilon=1e-5)
        return (y, s * 2.0) if keep_sum else y

    fused = run(build, [x, r, g, b], fuse=True)
    unfused = run(build, [x, r, g, b], fuse=False)
    total = (x + r).astype(dtype)  # the add rounds to the dtype before the norm reads it
    want = reference_layer_norm(total, g, b, 1e-5).astype(dtype)
    rtol, atol = NORM_TOL[dtype]
    for got, name in ((fused, "fused"), (unfused, "unfused")):
        assert_close(got[0], want, rtol=rtol, atol=atol, err_msg=name)
        if keep_sum:
            assert_close(got[1], (total * 2).astype(dtype), err_msg=name)
    assert_close(fused[0], unfused[0], rtol=rtol, atol=atol, err_msg="fused vs unfused")


def test_add_layer_norm_bfloat16_fused_matches_unfused():
    x, r = to_bf16(random((4, 64))), to_bf16(random((4, 64)))
    g, b = to_bf16(random((64,))), to_bf16(random((64,)))

    def build(v, res, gamma, beta):
        bf = [ops.cast(t, DType.bfloat16) for t in (v, res, gamma, beta)]
        return ops.cast(ops.layer_norm(bf[0] + bf[1], bf[2], bf[3], epsilon=1e-5), DType.float32)

    (fused,) = run(build, [x, r, g, b], fuse=True)
    (unfused,) = run(build, [x, r, g, b], fuse=False)
    assert_close(fused, unfused)  # the same rounding points: bit-for-bit in practice
    want = to_bf16(reference_layer_norm(to_bf16(x + r), g, b, 1e-5).astype(np.float32))
    assert_close(fused, want, rtol=BF16_TOL[0], atol=BF16_TOL[1])

"""Conformance of the linear-algebra kernels against numpy: matmul (batched, broadcast, 1-D
operands, every numeric dtype family), outer, the fused matmul epilogue (bias + activation)
and the fused attention, each fused pattern checked with fuse=True against fuse=False and
numpy."""
import math

import numpy as np
import pytest

from harness import assert_close, run
from max_c.graph import ops

RNG = np.random.default_rng(1234)


def rand(*shape, dtype=np.float32):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-5 if np.dtype(dtype).kind == "i" else 0, 6, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def ref_matmul(a, b):
    """numpy's matmul computed in float64 (int64 for integers), cast back."""
    wide = np.int64 if a.dtype.kind in "iu" else np.float64
    return np.matmul(a.astype(wide), b.astype(wide)).astype(a.dtype)


# ---- matmul ----------------------------------------------------------------------------------

SHAPES = [
    ((3, 4), (4, 5)),              # plain
    ((1, 7), (7, 1)),
    ((2, 3, 4), (4, 5)),           # batch over the lhs only: one product of 6 rows
    ((3, 4), (2, 4, 5)),           # batch over the rhs only
    ((2, 3, 4), (2, 4, 5)),        # same batch
    ((2, 1, 3, 4), (5, 4, 6)),     # batch dims broadcast both ways
    ((4, 1, 2, 3), (1, 3, 3, 2)),
    ((4,), (4, 5)),                # 1-D lhs
    ((2, 3, 4), (4,)),             # 1-D rhs
    ((4,), (4,)),                  # dot product: rank 0
    ((3, 0), (0, 5)),              # K = 0: zeros
    ((0, 4), (4, 5)),              # M = 0
    ((2, 0, 3, 4), (4, 2)),        # empty batch
    ((65, 130), (130, 300)),       # beyond one tile of our gemm
]


@pytest.mark.parametrize("lhs,rhs", SHAPES)
def test_matmul_float32_shapes(lhs, rhs):
    a, b = rand(*lhs), rand(*rhs)
    (y,) = run(lambda x, z: ops.matmul(x, z), [a, b])
    assert_close(y, ref_matmul(a, b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("lhs,rhs", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64])
def test_matmul_own_kernel_dtypes(lhs, rhs, dtype):
    a, b = rand(*lhs, dtype=dtype), rand(*rhs, dtype=dtype)
    (y,) = run(lambda x, z: ops.matmul(x, z), [a, b])
    assert_close(y, ref_matmul(a, b))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint32])
def test_matmul_small_integers_wrap_like_numpy(dtype):
    a = np.full((2, 40), 100, dtype)
    b = np.full((40, 3), 7, dtype)
    (y,) = run(lambda x, z: ops.matmul(x, z), [a, b])
    assert_close(y, np.matmul(a, b))


def test_matmul_float16_through_float32():
    a, b = rand(2, 8, 16, dtype=np.float16), rand(16, 12, dtype=np.float16)
    (y,) = run(lambda x, z: ops.matmul(x, z), [a, b])
    assert_close(y, ref_matmul(a, b), rtol=2e-3, atol=2e-3)


def test_matmul_operator_and_large_square():
    a, b = rand(256, 256), rand(256, 256)
    (y,) = run(lambda x, z: x @ z, [a, b])
    assert_close(y, ref_matmul(a, b), rtol=1e-4, atol=1e-3)


# ---- outer -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.float16])
def test_outer_flattens_both_inputs(dtype):
    a, b = rand(2, 3, dtype=dtype), rand(4, dtype=dtype)
    (y,) = run(lambda x, z: ops.outer(x, z), [a, b])
    assert_close(y, np.outer(a, b).astype(dtype))


# ---- fused matmul epilogue -------------------------------------------------------------------

_erf = np.vectorize(math.erf)

ACTIVATIONS = {
    "none": (lambda v: v, lambda v: v),
    "relu": (ops.relu, lambda v: np.maximum(v, 0)),
    "gelu": (lambda v: ops.gelu(v), lambda v: 0.5 * v * (1 + _erf(v / math.sqrt(2)))),
    "gelu_tanh": (lambda v: ops.gelu(v, approximate="tanh"),
                  lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))),
    "sigmoid": (ops.sigmoid, lambda v: 1 / (1 + np.exp(-v))),
    "tanh": (ops.tanh, np.tanh),
    "silu": (ops.silu, lambda v: v / (1 + np.exp(-v))),
}


def dense_layer(act, bias_first=False):
    graph_act, _ = ACTIVATIONS[act]

    def build(x, w, b):
        y = ops.matmul(x, w)
        y = ops.add(b, y) if bias_first else ops.add(y, b)
        return graph_act(y)
    return build


@pytest.mark.parametrize("act", list(ACTIVATIONS))
@pytest.mark.parametrize("bias_shape", [(24,), (1, 24), (1, 1, 24), (1,)])
def test_matmul_bias_activation_fused_and_unfused(act, bias_shape):
    x, w, b = rand(2, 5, 16), rand(16, 24), rand(*bias_shape)
    expected = ACTIVATIONS[act][1]((x.astype(np.float64) @ w + b)).astype(np.float32)
    (fused,) = run(dense_layer(act), [x, w, b], fuse=True)
    (plain,) = run(dense_layer(act), [x, w, b], fuse=False)
    assert_close(fused, expected, rtol=1e-4, atol=1e-4)
    assert_close(plain, expected, rtol=1e-4, atol=1e-4)
    assert_close(fused, plain, rtol=1e-4, atol=1e-4)


def test_bias_on_the_left_of_the_add():
    x, w, b = rand(3, 8), rand(8, 4), rand(4)
    (y,) = run(dense_layer("relu", bias_first=True), [x, w, b])
    assert_close(y, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("act", ["relu", "gelu", "silu"])
def test_matmul_activation_without_bias(act):
    graph_act, ref = ACTIVATIONS[act]
    x, w = rand(7, 9), rand(9, 33)
    (y,) = run(lambda a, b: graph_act(ops.matmul(a, b)), [x, w])
    assert_close(y, ref(x.astype(np.float64) @ w).astype(np.float32), rtol=1e-4, atol=1e-4)


def test_intermediates_read_elsewhere_stay_correct():
    x, w, b = rand(4, 6), rand(6, 5), rand(5)
    mm, biased, out = run(lambda a, c, d: (lambda m: (m, m + d, ops.relu(m + d)))(ops.matmul(a, c)),
                          [x, w, b])
    assert_close(mm, x @ w, rtol=1e-5, atol=1e-5)
    assert_close(biased, x @ w + b, rtol=1e-5, atol=1e-5)
    assert_close(out, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)


def test_full_shaped_addend_is_not_a_bias():
    x, w, r = rand(4, 6), rand(6, 5), rand(4, 5)
    (y,) = run(lambda a, c, d: ops.relu(ops.matmul(a, c) + d), [x, w, r])
    assert_close(y, np.maximum(x @ w + r, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_fused_epilogue_on_own_kernel(dtype):
    x, w, b = rand(3, 7, dtype=dtype), rand(7, 5, dtype=dtype), rand(5, dtype=dtype)
    (y,) = run(dense_layer("relu"), [x, w, b])
    assert_close(y, np.maximum(ref_matmul(x, w) + b, 0).astype(dtype))


def test_fused_epilogue_float16():
    x, w, b = rand(3, 16, dtype=np.float16), rand(16, 8, dtype=np.float16), rand(8, dtype=np.float16)
    (y,) = run(dense_layer("relu"), [x, w, b])
    expected = np.maximum(x.astype(np.float32) @ w.astype(np.float32) + b, 0).astype(np.float16)
    assert_close(y, expected, rtol=3e-3, atol=3e-3)


# ---- attention -------------------------------------------------------------------------------


def softmax(v):
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def ref_attention(q, k, v, scale, mask=None):
    s = scale * (q.astype(np.float64) @ np.swapaxes(k, -1, -2))
    if mask is not None:
        s = s + mask
    return (softmax(s) @ v).astype(np.float32)


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 5, 8), (1, 2, 40, 16), (4, 7, 16)])
def test_attention_scale_by_mul(fuse, shape):
    q, k, v = rand(*shape), rand(*shape), rand(*shape)
    scale = 1 / math.sqrt(shape[-1])
    (y,) = run(lambda a, b, c: ops.softmax(ops.matmul(a, ops.transpose(b, -1, -2)) * scale) @ c,
               [q, k, v], fuse=fuse)
    assert_close(y, ref_attention(q, k, v, scale), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("mask_shape", [(2, 1, 1, 37), (37,), (1, 1, 9, 37), (2, 3, 9, 37)])
def test_attention_with_mask_and_division(fuse, mask_shape):
    q, k, v = rand(2, 3, 9, 8), rand(2, 3, 37, 8), rand(2, 3, 37, 12)
    mask = np.where(RNG.random(mask_shape) < 0.3, -1e4, 0).astype(np.float32)

    def build(a, b, c, m):
        scores = ops.matmul(a, ops.transpose(b, 2, 3)) / math.sqrt(8.0)
        return ops.softmax(scores + m) @ c
    (y,) = run(build, [q, k, v, mask], fuse=fuse)
    assert_close(y, ref_attention(q, k, v, 1 / math.sqrt(8.0), mask), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fuse", [True, False])
def test_attention_with_k_already_transposed(fuse):
    q, kt, v = rand(3, 6, 4), rand(3, 4, 10), rand(3, 10, 5)
    (y,) = run(lambda a, b, c: ops.softmax(a @ b) @ c, [q, kt, v], fuse=fuse)
    assert_close(y, ref_attention(q, np.swapaxes(kt, -1, -2), v, 1.0), rtol=1e-4, atol=1e-5)


def test_attention_fully_masked_row_is_nan_like_softmax():
    q, k, v = rand(1, 2, 4), rand(1, 3, 4), rand(1, 3, 2)
    mask = np.zeros((2, 3), np.float32)
    mask[1, :] = -np.inf
    results = [run(lambda a, b, c, m: ops.softmax(a @ ops.transpose(b, -1, -2) + m) @ c, [q, k, v, mask],
                   fuse=fuse)[0] for fuse in (True, False)]
    for y in results:
        assert np.all(np.isnan(y[0, 1])) and np.all(np.isfinite(y[0, 0]))

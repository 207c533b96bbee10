"""Conformance of the block-quantized ops against numpy: dequantize must equal an independent
numpy decoder of GGML's block layouts (Q4_0, Q4_K, Q5_K, Q6_K, Q8_0) to the last bit (the
K-quants within 1 ulp, see _affine), and qmatmul must match x @ dequantize(w).T within the
error of quantizing the activations to 8 bits, which it does on purpose (_qmatmul_tolerance).

Weights for Q4_0 / Q8_0 come from a small numpy quantizer; for the K-quants, from random
bytes with sane half-precision super-scales (every byte pattern of the scales and levels is a
valid block)."""
import numpy as np
import pytest

from harness import assert_close, run, session
from max_c import MaxError
from max_c.dtype import DType
from max_c.graph import Graph, TensorType, Weight, ops
from max_c.quantization import BlockParameters, QuantizationEncoding as QE

RNG = np.random.default_rng(2024)
ENCODINGS = [QE.Q4_0, QE.Q4_K, QE.Q5_K, QE.Q6_K, QE.Q8_0]


# ---- numpy decoders (one row of blocks per row of bytes) -------------------------------------


def _half(blocks, offset):
    """The float16 at byte `offset` of every block, as a float32 column."""
    return blocks[:, offset:offset + 2].copy().view(np.float16).astype(np.float32)


def _affine(scale, levels, offset):
    """scale * levels - offset with one rounding, as the library computes the K-quants
    (fused multiply-subtract): exact in float64, then rounded to float32. That rounds twice
    only when the exact result needs more than float64's 53 bits, which the scales used here
    never reach, so equality is expected; the tests still allow 1 ulp."""
    return (scale.astype(np.float64) * levels - offset.astype(np.float64)).astype(np.float32)


def _k_scales(blocks):
    """The eight 6-bit scales and mins of Q4_K / Q5_K blocks (bytes 4..15)."""
    s = blocks[:, 4:16]
    sc = np.concatenate([s[:, 0:4] & 63, (s[:, 8:12] & 15) | ((s[:, 0:4] >> 6) << 4)], axis=1)
    mn = np.concatenate([s[:, 4:8] & 63, (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)], axis=1)
    return sc.astype(np.float32), mn.astype(np.float32)


def _nibble_pairs(qs):
    """Levels of sub-blocks 2c (low nibbles) and 2c + 1 (high) from 32-byte chunks c."""
    chunks = qs.reshape(len(qs), -1, 32)
    return np.stack([chunks & 15, chunks >> 4], axis=2).reshape(len(qs), -1, 32)


def decode_q8_0(blocks):
    return blocks[:, 2:34].copy().view(np.int8).astype(np.float32) * _half(blocks, 0)


def decode_q4_0(blocks):
    qs = blocks[:, 2:18]
    levels = np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.float32)
    return (levels - 8) * _half(blocks, 0)


def _decode_k(blocks, levels):
    sc, mn = _k_scales(blocks)
    scale = (_half(blocks, 0) * sc)[:, :, None]    # d * sc, rounded to float32
    offset = (_half(blocks, 2) * mn)[:, :, None]   # dmin * m
    return _affine(scale, levels.astype(np.float64), offset).reshape(len(blocks), 256)


def decode_q4_k(blocks):
    return _decode_k(blocks, _nibble_pairs(blocks[:, 16:144]))


def decode_q5_k(blocks):
    qh = blocks[:, 16:48]
    high = ((qh[:, None, :] >> np.arange(8, dtype=np.uint8)[None, :, None]) & 1) << 4
    return _decode_k(blocks, _nibble_pairs(blocks[:, 48:176]) | high)


def decode_q6_k(blocks):
    ql, qh = blocks[:, 0:128], blocks[:, 128:192]
    halves = []
    for h in range(2):
        low, high = ql[:, 64 * h:64 * h + 64], qh[:, 32 * h:32 * h + 32]
        halves += [(low[:, :32] & 15) | ((high & 3) << 4),
                   (low[:, 32:] & 15) | (((high >> 2) & 3) << 4),
                   (low[:, :32] >> 4) | (((high >> 4) & 3) << 4),
                   (low[:, 32:] >> 4) | (((high >> 6) & 3) << 4)]
    levels = np.concatenate(halves, axis=1).astype(np.float32)
    scales = np.repeat(blocks[:, 192:208].copy().view(np.int8).astype(np.float32), 16, axis=1)
    return (_half(blocks, 208) * scales) * (levels - 32)


DECODERS = {QE.Q4_0: decode_q4_0, QE.Q4_K: decode_q4_k, QE.Q5_K: decode_q5_k,
            QE.Q6_K: decode_q6_k, QE.Q8_0: decode_q8_0}


def np_dequantize(encoding, q):
    """uint8 [..., row_bytes] -> float32 [..., k] by the numpy decoders."""
    q = np.ascontiguousarray(q)
    blocks = q.reshape(-1, encoding.block_size)
    out = DECODERS[encoding](blocks)
    return out.reshape(*q.shape[:-1], q.shape[-1] // encoding.block_size
                       * encoding.elements_per_block)


# ---- making quantized bytes ------------------------------------------------------------------


def _with_half(blocks, offset, values):
    blocks[:, offset:offset + 2] = np.asarray(values, np.float16).reshape(-1, 1).view(np.uint8)


def np_quantize_q8_0(x):
    b = x.reshape(-1, 32)
    d = (np.abs(b).max(axis=1) / 127).astype(np.float16)
    inv = np.divide(1, d.astype(np.float32), out=np.zeros(len(b), np.float32), where=d != 0)
    out = np.empty((len(b), 34), np.uint8)
    _with_half(out, 0, d)
    out[:, 2:] = np.clip(np.rint(b * inv[:, None]), -127, 127).astype(np.int8).view(np.uint8)
    return out


def np_quantize_q4_0(x):
    b = x.reshape(-1, 32)
    top = np.take_along_axis(b, np.abs(b).argmax(axis=1)[:, None], axis=1)[:, 0]
    d = (top / -8).astype(np.float16)
    inv = np.divide(1, d.astype(np.float32), out=np.zeros(len(b), np.float32), where=d != 0)
    q = np.clip(np.rint(b * inv[:, None]) + 8, 0, 15).astype(np.uint8)
    out = np.empty((len(b), 18), np.uint8)
    _with_half(out, 0, d)
    out[:, 2:] = q[:, :16] | (q[:, 16:] << 4)
    return out


def random_k_blocks(encoding, count):
    """Random K-quant blocks whose half scales are sane (d, dmin in [1e-3, 2e-2])."""
    out = RNG.integers(0, 256, size=(count, encoding.block_size), dtype=np.uint8)
    d = RNG.uniform(1e-3, 2e-2, count)
    if encoding == QE.Q6_K:
        _with_half(out, 208, d)
    else:
        _with_half(out, 0, d)
        _with_half(out, 2, RNG.uniform(1e-3, 2e-2, count))
    return out


def make_weights(encoding, n, k):
    """uint8 [n, row_bytes] in `encoding`."""
    blocks = k // encoding.elements_per_block
    if encoding == QE.Q8_0:
        data = np_quantize_q8_0(RNG.standard_normal((n, k)).astype(np.float32))
    elif encoding == QE.Q4_0:
        data = np_quantize_q4_0(RNG.standard_normal((n, k)).astype(np.float32))
    else:
        data = random_k_blocks(encoding, n * blocks)
    return data.reshape(n, blocks * encoding.block_size)


# ---- dequantize ------------------------------------------------------------------------------


def assert_decoded(actual, expected):
    assert actual.dtype == np.float32 and actual.shape == expected.shape
    np.testing.assert_array_max_ulp(actual, expected, maxulp=1)


@pytest.mark.parametrize("encoding", ENCODINGS, ids=lambda e: e.name)
@pytest.mark.parametrize("lead", [(3,), (2, 5), ()])
def test_dequantize_matches_numpy_decoder(encoding, lead):
    q = make_weights(encoding, int(np.prod(lead, dtype=np.int64)), 2 * encoding.elements_per_block)
    q = q.reshape(*lead, q.shape[-1])
    for fuse in (True, False):
        (y,) = run(lambda v: ops.dequantize(encoding, v), [q], fuse=fuse)
        assert_decoded(y, np_dequantize(encoding, q))


@pytest.mark.parametrize("encoding", ENCODINGS, ids=lambda e: e.name)
def test_dequantize_any_bytes(encoding):
    """Every byte pattern decodes (subnormal, infinite and NaN scales included) like numpy."""
    q = RNG.integers(0, 256, size=(4, encoding.block_size * 2), dtype=np.uint8)
    (y,) = run(lambda v: ops.dequantize(encoding, v), [q])
    expected = np_dequantize(encoding, q)
    finite = np.isfinite(expected)
    assert np.array_equal(np.isnan(y), np.isnan(expected))
    np.testing.assert_array_max_ulp(y[finite], expected[finite], maxulp=1)


def test_dequantize_names_and_registry_order():
    q = make_weights(QE.Q4_0, 2, 64)
    expected = np_dequantize(QE.Q4_0, q)
    for build in (lambda v: ops.dequantize("q4_0", v), lambda v: ops.dequantize("Q4_0", v),
                  lambda v: ops.dequantize(v, QE.Q4_0),
                  lambda v: ops.dequantize(quantized=v, encoding="q4_0"),
                  lambda v: ops.add_op("dequantize", [v], {"encoding": QE.Q4_0})):
        (y,) = run(build, [q])
        assert_decoded(y, expected)


# ---- qmatmul ---------------------------------------------------------------------------------


def _act_block(encoding):
    return 32 if encoding in (QE.Q4_0, QE.Q8_0) else 256


def _qmatmul_tolerance(encoding, x, wf):
    """qmatmul quantizes each activation block (32 elements for Q4_0 / Q8_0, 256 for the
    K-quants) to int8 with step d = max|x| / 127, at most d / 2 off, so each output is within
    Σ_blocks d / 2 · Σ_block |w| of x @ wᵀ, plus float rounding (1e-5 · |x| @ |w|ᵀ)."""
    b = _act_block(encoding)
    xs = x.reshape(-1, x.shape[-1]).astype(np.float64)
    half_step = np.abs(xs).reshape(len(xs), -1, b).max(axis=2) / 127 / 2     # [m, blocks]
    w_abs = np.abs(wf.astype(np.float64))
    w_sums = w_abs.reshape(len(wf), -1, b).sum(axis=2)                          # [n, blocks]
    bound = half_step @ w_sums.T * (1 + 1e-3) + 1e-5 * (np.abs(xs) @ w_abs.T) + 1e-6
    return bound.reshape(*x.shape[:-1], len(wf))


def check_qmatmul(encoding, y, x, q):
    wf = np_dequantize(encoding, q)
    ref = np.matmul(x.astype(np.float64), wf.astype(np.float64).T)
    assert y.dtype == np.float32 and y.shape == ref.shape
    err = np.abs(y - ref)
    tol = _qmatmul_tolerance(encoding, x, wf)
    assert np.all(err <= tol), (f"{np.sum(err > tol)} of {err.size} outside the bound; worst "
                                f"excess {np.max(err - tol):.3g}")


SHAPES = [((1, 2), 7), ((3, 1), 5), ((2, 3, 4), 33), ((5, 3), 64), ((1, 2), 1)]


@pytest.mark.parametrize("encoding", ENCODINGS, ids=lambda e: e.name)
@pytest.mark.parametrize("lhs,n", SHAPES)
def test_qmatmul_matches_dequantized_matmul(encoding, lhs, n):
    *lead, blocks = lhs
    k = blocks * encoding.elements_per_block
    x = RNG.standard_normal((*lead, k)).astype(np.float32)
    q = make_weights(encoding, n, k)
    for fuse in (True, False):
        (y,) = run(lambda a, w: ops.qmatmul(encoding, None, a, w), [x, q], fuse=fuse)
        check_qmatmul(encoding, y, x, q)


def test_qmatmul_call_forms():
    x = RNG.standard_normal((2, 256)).astype(np.float32)
    q = make_weights(QE.Q4_K, 3, 256)
    for build in (lambda a, w: ops.qmatmul("q4_k", None, a, w),
                  lambda a, w: ops.qmatmul(QE.Q4_K, None, a, w),
                  lambda a, w: ops.qmatmul(a, w, "Q4_K"),
                  lambda a, w: ops.qmatmul(encoding=QE.Q4_K, lhs=a, rhs=w),
                  lambda a, w: ops.add_op("qmatmul", [a, w], {"encoding": QE.Q4_K})):
        (y,) = run(build, [x, q])
        check_qmatmul(QE.Q4_K, y, x, q)


@pytest.mark.parametrize("encoding", [QE.Q4_K, QE.Q8_0], ids=lambda e: e.name)
def test_qmatmul_symbolic_rows_and_weight(encoding):
    """A quantized Weight bound by name, and symbolic leading dims: one model, several shapes."""
    k, n = 2 * encoding.elements_per_block, 9
    q = make_weights(encoding, n, k)
    weight = Weight("w", DType.uint8, list(q.shape), quantization_encoding=encoding)
    assert weight.quantization_encoding is encoding
    graph = Graph("qlinear", lambda x: ops.qmatmul(encoding, None, x, weight),
                  input_types=[TensorType(DType.float32, ["batch", "seq", k])])
    model = session().load(graph, weights_registry={"w": q})
    with model:
        for batch, seq in ((1, 1), (2, 3), (4, 1)):
            x = RNG.standard_normal((batch, seq, k)).astype(np.float32)
            (y,) = [t.to_numpy() for t in model.execute(x)]
            check_qmatmul(encoding, y, x, q)


def test_qmatmul_then_float_ops():
    """qmatmul feeds ordinary ops (here an add and a relu, which fusion may merge)."""
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    q = make_weights(QE.Q8_0, 6, 64)
    b = RNG.standard_normal(6).astype(np.float32)
    wf = np_dequantize(QE.Q8_0, q)
    for fuse in (True, False):
        (y,) = run(lambda a, w, c: ops.relu(ops.qmatmul(QE.Q8_0, None, a, w) + c), [x, q, b],
                   fuse=fuse)
        assert_close(y, np.maximum(x.astype(np.float64) @ wf.T + b, 0).astype(np.float32),
                     rtol=0, atol=float(np.max(_qmatmul_tolerance(QE.Q8_0, x, wf))) + 1e-5)


# ---- errors ----------------------------------------------------------------------------------


def test_errors_name_the_problem():
    x = np.zeros((2, 256), np.float32)
    q = make_weights(QE.Q4_K, 3, 256)
    with pytest.raises(MaxError, match=r"'q3_k'.*q4_0, q4_k, q5_k, q6_k, q8_0"):
        run(lambda a, w: ops.qmatmul("q3_k", None, a, w), [x, q])
    with pytest.raises(MaxError, match=r"is 512 .*as q4_k is 256"):
        run(lambda a, w: ops.qmatmul(QE.Q4_K, None, a, w), [np.zeros((2, 512), np.float32), q])
    with pytest.raises(MaxError, match="not a multiple of q4_k's block of 144 bytes"):
        run(lambda v: ops.dequantize(QE.Q4_K, v), [np.zeros((2, 100), np.uint8)])
    with pytest.raises(MaxError, match="must be uint8"):
        run(lambda a, w: ops.qmatmul(QE.Q4_K, None, a, w), [x, q.astype(np.float32)])
    with pytest.raises(MaxError, match="GPTQ"):
        run(lambda a, w: ops.qmatmul(QE.Q4_K, object(), a, w), [x, q])


# ---- QuantizationEncoding --------------------------------------------------------------------


def test_quantization_encoding_properties():
    expected = {QE.Q4_0: (32, 18), QE.Q4_K: (256, 144), QE.Q5_K: (256, 176),
                QE.Q6_K: (256, 210), QE.Q8_0: (32, 34)}
    for e, (elements, size) in expected.items():
        assert e.elements_per_block == elements and e.block_size == size
        assert e.block_parameters == BlockParameters(elements, size)
        assert e.is_gguf
        assert e.name == e.value.lower()
        assert QE.from_name(e.name) is e and QE.from_name(e.value) is e
    assert QE.Q4_K.row_bytes(4096) == 16 * 144
    with pytest.raises(ValueError, match="q4_0, q4_k, q5_k, q6_k, q8_0"):
        QE.from_name("gptq")

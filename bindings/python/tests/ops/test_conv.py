"""Conformance of conv2d, max_pool2d and avg_pool2d against numpy references written here:
layouts, stride, dilation, asymmetric padding, groups, bias, ceil_mode and count_boundary."""
import numpy as np
import pytest

from harness import assert_close, run
from max_c.graph import ops

RNG = np.random.default_rng(4321)


def rand(*shape, dtype=np.float32):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-50, 50, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# ---- conv2d ----------------------------------------------------------------------------------


def conv2d_ref(x, w, bias=None, stride=(1, 1), dilation=(1, 1), padding=(0, 0, 0, 0), groups=1):
    """NHWC x, RSCF w [kH, kW, C/groups, F]; float64 sums, cast to x's dtype."""
    n, h, wd, c = x.shape
    kh, kw, cg, f = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    xp = np.pad(x.astype(np.float64), ((0, 0), padding[0:2], padding[2:4], (0, 0)))
    oh = (h + padding[0] + padding[1] - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + padding[2] + padding[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, oh, ow, f))
    fg = f // groups
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i * dh: i * dh + sh * (oh - 1) + 1: sh, j * dw: j * dw + sw * (ow - 1) + 1: sw, :]
            for g in range(groups):
                out[..., g * fg:(g + 1) * fg] += patch[..., g * cg:(g + 1) * cg] @ w[i, j, :, g * fg:(g + 1) * fg]
    if bias is not None:
        out += bias
    return out.astype(x.dtype)


CONV_CASES = [
    # x shape (NHWC), filter (RSCF), attributes
    ((1, 5, 5, 3), (3, 3, 3, 4), {}),
    ((2, 7, 6, 3), (3, 3, 3, 8), {"stride": (2, 2)}),
    ((1, 9, 9, 2), (3, 3, 2, 5), {"dilation": (2, 2)}),
    ((2, 6, 7, 4), (3, 2, 4, 6), {"padding": (1, 0, 2, 1), "stride": (2, 1)}),
    ((1, 8, 8, 4), (3, 3, 2, 6), {"groups": 2, "padding": (1, 1, 1, 1)}),
    ((2, 6, 6, 8), (3, 3, 1, 8), {"groups": 8, "padding": (1, 1, 1, 1)}),  # depthwise
    ((1, 4, 4, 16), (1, 1, 16, 32), {}),                                   # pointwise
    ((1, 10, 10, 3), (7, 7, 3, 8), {"stride": (2, 2), "padding": (3, 3, 3, 3)}),
]


@pytest.mark.parametrize("xs,ws,attrs", CONV_CASES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_conv2d_nhwc_rscf(xs, ws, attrs, with_bias):
    x, w = rand(*xs), rand(*ws)
    inputs = [x, w]
    if with_bias:
        inputs.append(rand(ws[3]))
        (y,) = run(lambda a, f, b: ops.conv2d(a, f, b, **attrs), inputs)
    else:
        (y,) = run(lambda a, f: ops.conv2d(a, f, **attrs), inputs)
    expected = conv2d_ref(x, w, inputs[2] if with_bias else None, **attrs)
    assert_close(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs,ws,attrs", CONV_CASES[:5])
def test_conv2d_nchw_fcrs(xs, ws, attrs):
    x, w, b = rand(*xs), rand(*ws), rand(ws[3])
    x_nchw = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    w_fcrs = np.ascontiguousarray(w.transpose(3, 2, 0, 1))
    (y,) = run(lambda a, f, c: ops.conv2d(a, f, c, input_layout="NCHW", filter_layout="FCRS", **attrs),
               [x_nchw, w_fcrs, b])
    expected = conv2d_ref(x, w, b, **attrs).transpose(0, 3, 1, 2)
    assert_close(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs,ws,attrs", [CONV_CASES[0], CONV_CASES[3], CONV_CASES[4]])
def test_conv2d_float64_direct_kernel(xs, ws, attrs):
    x, w, b = rand(*xs, dtype=np.float64), rand(*ws, dtype=np.float64), rand(ws[3], dtype=np.float64)
    (y,) = run(lambda a, f, c: ops.conv2d(a, f, c, **attrs), [x, w, b])
    assert_close(y, conv2d_ref(x, w, b, **attrs))


def test_conv2d_float16_through_float32():
    x, w = rand(1, 6, 6, 4, dtype=np.float16), rand(3, 3, 4, 4, dtype=np.float16)
    (y,) = run(lambda a, f: ops.conv2d(a, f, padding=(1, 1, 1, 1)), [x, w])
    assert_close(y, conv2d_ref(x, w, padding=(1, 1, 1, 1)), rtol=3e-3, atol=3e-3)


def test_conv2d_with_a_constant_filter():
    x, w = rand(2, 5, 5, 3), rand(3, 3, 3, 4)
    (y,) = run(lambda a: ops.conv2d(a, ops.constant(w, device=a.device)), [x])
    assert_close(y, conv2d_ref(x, w), rtol=1e-4, atol=1e-4)


# ---- pooling ---------------------------------------------------------------------------------


def pool_ref(x, kind, kernel_size, stride=1, dilation=1, padding=0, ceil_mode=False, count_boundary=True):
    """NHWC pooling following kernels/cpu/pool.h: taps outside the input are skipped; the
    average divides by the taps inside the input, or with count_boundary by those inside
    the padded input; a window of padding only gives -inf or the integer type's lowest value
    (max), or 0 (average)."""
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)
    (kh, kw), (sh, sw), (dh, dw), (ph, pw) = pair(kernel_size), pair(stride), pair(dilation), pair(padding)
    n, h, w, c = x.shape

    def out_size(size, k, s, d, p):
        span = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
        return span // s + 1

    oh, ow = out_size(h, kh, sh, dh, ph), out_size(w, kw, sw, dw, pw)
    wide = np.float64 if x.dtype.kind == "f" else np.int64
    out = np.zeros((n, oh, ow, c), wide)
    for i in range(oh):
        rows = [i * sh - ph + t * dh for t in range(kh)]
        in_rows = [r for r in rows if 0 <= r < h]
        pad_rows = [r for r in rows if -ph <= r < h + ph]
        for j in range(ow):
            cols = [j * sw - pw + t * dw for t in range(kw)]
            in_cols = [q for q in cols if 0 <= q < w]
            pad_cols = [q for q in cols if -pw <= q < w + pw]
            window = x[:, in_rows][:, :, in_cols].astype(wide).reshape(n, -1, c)
            if kind == "max":
                lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
                out[:, i, j] = window.max(axis=1) if window.shape[1] else lowest
            else:
                divisor = len(pad_rows) * len(pad_cols) if count_boundary else len(in_rows) * len(in_cols)
                out[:, i, j] = window.sum(axis=1) / divisor if divisor else 0
    return out.astype(x.dtype)


POOL_CASES = [
    {"kernel_size": (2, 2), "stride": 2},
    {"kernel_size": (3, 3), "stride": 2, "padding": 1},
    {"kernel_size": (3, 2), "stride": (1, 2)},
    {"kernel_size": (2, 2), "dilation": 2},
    {"kernel_size": (3, 3), "stride": 2, "ceil_mode": True},
    {"kernel_size": (3, 3), "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": (2, 3), "stride": 3, "padding": (1, 1), "ceil_mode": True},
]


@pytest.mark.parametrize("attrs", POOL_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_max_pool2d(attrs, dtype):
    x = rand(2, 7, 8, 3, dtype=dtype)
    (y,) = run(lambda a: ops.max_pool2d(a, **attrs), [x])
    assert_close(y, pool_ref(x, "max", **attrs))


def test_max_pool2d_propagates_nan():
    x = rand(1, 4, 4, 2)
    x[0, 1, 1, 0] = np.nan
    (y,) = run(lambda a: ops.max_pool2d(a, kernel_size=(2, 2), stride=2), [x])
    assert np.isnan(y[0, 0, 0, 0]) and not np.isnan(y[0, 0, 0, 1]) and not np.isnan(y[0, 1, 1, 0])


@pytest.mark.parametrize("attrs", POOL_CASES)
@pytest.mark.parametrize("count_boundary", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool2d(attrs, count_boundary, dtype):
    x = rand(2, 7, 8, 3, dtype=dtype)
    (y,) = run(lambda a: ops.avg_pool2d(a, count_boundary=count_boundary, **attrs), [x])
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert_close(y, pool_ref(x, "avg", count_boundary=count_boundary, **attrs), rtol=tol, atol=tol)


def test_pools_float16():
    x = rand(1, 6, 6, 4, dtype=np.float16)
    y_max, y_avg = run(lambda a: (ops.max_pool2d(a, kernel_size=(3, 3), stride=2, padding=1),
                                  ops.avg_pool2d(a, kernel_size=(3, 3), stride=2, padding=1)), [x])
    assert_close(y_max, pool_ref(x, "max", (3, 3), 2, padding=1))
    assert_close(y_avg, pool_ref(x, "avg", (3, 3), 2, padding=1), rtol=2e-3, atol=2e-3)

"""bfloat16, float8, float4 and the 2- and 4-bit integers with numpy through the ml_dtypes
package: the DType mapping, tensors to and from numpy (the sub-byte types packed 2 or 4 per
byte on our side, one per byte in numpy), and casts in a graph checked against ml_dtypes'
own conversions. Without ml_dtypes the mapping fails with a ValueError that names the dtype
and the package."""
import sys

import numpy as np
import pytest

from max_c.driver import Tensor
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import Graph, TensorType, ops

ml_dtypes = pytest.importorskip("ml_dtypes")

PACKED_INTS = ["uint2", "int2", "uint4", "int4"]
NAMES = ["bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn"] + PACKED_INTS
NAMES.append("float8_e8m0fnu")
FLOAT8 = NAMES[1:5]  # the sign-exponent-mantissa float8s
SHAPES = [(), (1,), (7,), (3, 5), (2, 0, 3), (4, 33)]


def every_code(name):
    """Every bit pattern of the dtype, as an array of it."""
    np_dtype = np.dtype(getattr(ml_dtypes, name))
    if name == "bfloat16":
        return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np_dtype)
    return np.arange(1 << DType[name].size_in_bits, dtype=np.uint32).astype(np.uint8).view(np_dtype)


def bits(a):
    return a.view(np.uint16 if a.dtype.itemsize == 2 else np.uint8)


@pytest.mark.parametrize("name", NAMES)
def test_dtype_maps_both_ways(name):
    dt = DType[name]
    np_dtype = np.dtype(getattr(ml_dtypes, name))
    assert dt.to_numpy() == np_dtype
    assert DType.from_numpy(np_dtype) is dt
    assert DType.from_numpy(getattr(ml_dtypes, name)) is dt
    assert DType.from_numpy(name) is dt


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", SHAPES)
def test_tensor_round_trip_is_bit_exact(name, shape):
    codes = every_code(name)
    n = int(np.prod(shape))
    a = np.resize(codes, n).reshape(shape)
    t = Tensor.from_numpy(a)
    assert t.dtype is DType[name] and t.shape == shape
    assert t.nbytes == (n * DType[name].size_in_bits + 7) // 8
    back = t.to_numpy()
    assert back.dtype == a.dtype and back.shape == shape
    np.testing.assert_array_equal(bits(back), bits(a))
    assert np.asarray(t).dtype == a.dtype
    if n:
        assert Tensor.from_dlpack(a).dtype is DType[name]


def test_bfloat16_and_float8_share_memory_with_numpy():
    a = np.zeros(4, ml_dtypes.bfloat16)
    t = Tensor.from_numpy(a)
    a[1] = 3.5
    assert t.to_numpy()[1] == 3.5  # borrowed, not copied
    f = np.zeros(3, ml_dtypes.float8_e5m2)
    Tensor.from_numpy(f).to_numpy()[2] = 2.0
    assert f[2] == 2.0


def test_float4_is_packed_low_nibble_first():
    a = np.array([0.5, 1.0, -6.0], ml_dtypes.float4_e2m1fn)  # codes 1, 2, 0xF
    t = Tensor.from_numpy(a)
    np.testing.assert_array_equal(t.view(DType.uint8, (2,)).to_numpy(), [0x21, 0x0F])


def test_sub_byte_integers_are_packed_low_bits_first():
    t = Tensor.from_numpy(np.array([1, -2, 7], ml_dtypes.int4))  # codes 1, 0xE, 7
    np.testing.assert_array_equal(t.view(DType.uint8, (2,)).to_numpy(), [0xE1, 0x07])
    t = Tensor.from_numpy(np.array([1, 2, 3, 0, 1], ml_dtypes.uint2))
    np.testing.assert_array_equal(t.view(DType.uint8, (2,)).to_numpy(), [0b00111001, 0b01])
    t = Tensor.from_numpy(np.array([-1, 1, -2], ml_dtypes.int2))  # codes 3, 1, 2
    np.testing.assert_array_equal(t.view(DType.uint8, (1,)).to_numpy(), [0b100111])


def test_sub_byte_integers_read_back_from_packed_bytes():
    packed = Tensor.from_numpy(np.array([0x8F, 0x27], np.uint8))
    np.testing.assert_array_equal(packed.view(DType.int4, (3,)).to_numpy(), np.array([-1, -8, 7], ml_dtypes.int4))
    np.testing.assert_array_equal(packed.view(DType.uint2, (8,)).to_numpy(),
                                  np.array([3, 3, 0, 2, 3, 1, 2, 0], ml_dtypes.uint2))


def run_cast(x, dtype, **attrs):
    graph = Graph("cast", lambda v: ops.cast(v, dtype, **attrs), input_types=[TensorType(DType.from_numpy(x.dtype), x.shape)])
    try:
        model = InferenceSession().load(graph)
    finally:
        graph.close()
    with model:
        return model.execute(x)[0].to_numpy()


def float_samples():
    rng = np.random.default_rng(0)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1e6, -1e6, 1e-7, -1e-7, 464, 465, 248, 61440, 0.25, 0.75, 5, 7],
                       np.float32)
    return np.concatenate([special, rng.uniform(-300, 300, 2000).astype(np.float32),
                           rng.uniform(-0.02, 0.02, 2000).astype(np.float32)])


@pytest.mark.parametrize("name", FLOAT8)
@pytest.mark.parametrize("saturate", [True, False])
def test_cast_to_float8_matches_onnx_reference(name, saturate):
    """ONNX's reference: saturate clips to the finite range, then ml_dtypes rounds (to
    nearest even, inf/NaN past the range)."""
    np_dtype = np.dtype(getattr(ml_dtypes, name))
    x = float_samples()
    info = ml_dtypes.finfo(np_dtype)
    want = (np.clip(x, float(info.min), float(info.max)) if saturate else x).astype(np_dtype)
    got = run_cast(x, DType[name], saturate=saturate)
    assert got.dtype == np_dtype
    np.testing.assert_array_equal(bits(got), bits(want))


def test_cast_to_float4_matches_ml_dtypes():
    x = float_samples()
    got = run_cast(x, DType.float4_e2m1fn)
    np.testing.assert_array_equal(bits(got), bits(x.astype(ml_dtypes.float4_e2m1fn)))
    nan = run_cast(np.array([np.nan, -np.nan], np.float32), DType.float4_e2m1fn)
    np.testing.assert_array_equal(bits(nan), [0, 0])  # no NaN in float4: our choice is +0


@pytest.mark.parametrize("saturate", [True, False])
@pytest.mark.parametrize("src", ["float32", "float16", "float64"])
def test_cast_to_float8_e8m0fnu_matches_onnx_reference(src, saturate):
    """ONNX Cast's round_mode "up" (onnx.numpy_helper.to_float8e8m0, which takes a value's
    float32 exponent): the sign dropped, up one for any mantissa bit, NaN for inf and NaN."""
    from onnx.numpy_helper import to_float8e8m0
    rng = np.random.default_rng(3)
    edges = np.array([2.0**127 * 1.5, 3e38, 1e-40, -1e-45, np.nan, 2.0**-127], np.float32)
    patterns = rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.concatenate([float_samples(), edges, patterns]).astype(src)
    want = to_float8e8m0(x, saturate, "up")
    got = run_cast(x, DType.float8_e8m0fnu, saturate=saturate)
    assert got.dtype == np.dtype(ml_dtypes.float8_e8m0fnu)
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("to", ["float16", "bfloat16", "float64"])
def test_cast_every_float8_e8m0fnu_code_to_floats(to):
    codes = every_code("float8_e8m0fnu")
    with np.errstate(over="ignore"):
        want = codes.astype(np.float32).astype(DType[to].to_numpy())  # exact in float32, then rounded
    np.testing.assert_array_equal(bits(run_cast(codes, DType[to])), bits(want))


def test_cast_every_float8_e8m0fnu_code_to_integers_and_bool():
    codes = every_code("float8_e8m0fnu")
    value = codes.astype(np.float64)
    small = value < 2.0**31  # NaN is not
    np.testing.assert_array_equal(run_cast(codes, DType.int32)[small], np.trunc(value[small]).astype(np.int32))
    assert run_cast(codes, DType.bool).all()  # no code is zero, and NaN is true


def onnx_packed_codes(x, name):
    """The codes ONNX's rule gives x cast to packed integer `name` (onnx docs, technical/int4.md,
    "Cast"): integers keep their low bits; floats round to the nearest integer, ties to even,
    saturate at int64's range (NaN is 0) and are then truncated to the low bits the same way.
    Computed here, not by ml_dtypes, whose float conversions changed between versions."""
    mask = (1 << DType[name].size_in_bits) - 1
    if np.issubdtype(x.dtype, np.floating):
        r = np.rint(x.astype(np.float64))
        fits = np.abs(r) < 2.0**63
        x = np.where(fits, np.where(fits, r, 0).astype(np.int64), np.where(r > 0, 2**63 - 1, -2**63))
        x[np.isnan(r)] = 0
    return (x.astype(np.int64) & mask).astype(np.uint8)


@pytest.mark.parametrize("name", PACKED_INTS)
def test_cast_floats_to_packed_ints_rounds_half_to_even_and_keeps_the_low_bits(name):
    rng = np.random.default_rng(1)
    x = np.concatenate([np.arange(-9, 16, dtype=np.float32),
                        [0.5, -0.5, 1.5, 2.5, -2.5, 7.9, -8.5, 1e6, -1e6, 1e30, -1e30, np.nan, np.inf, -np.inf],
                        rng.uniform(-300, 300, 3001).astype(np.float32)]).astype(np.float32)
    np_dtype = np.dtype(getattr(ml_dtypes, name))
    got = run_cast(x, DType[name])
    assert got.dtype == np_dtype and got.shape == x.shape
    np.testing.assert_array_equal(bits(got), onnx_packed_codes(x, name))
    half = x[~(np.abs(x) >= 60000)].astype(np.float16)  # float16 has no 1e6; NaN stays
    np.testing.assert_array_equal(bits(run_cast(half, DType[name])), onnx_packed_codes(half, name))
    f64 = x.astype(np.float64) + 0.25  # float64 keeps its own rounding: 0.75 -> 1, 2.25 -> 2
    np.testing.assert_array_equal(bits(run_cast(f64, DType[name])), onnx_packed_codes(f64, name))


def test_packed_int_rule_agrees_with_onnx_generated_cases():
    """The ONNX cast cases feed the integers -9..15 as floats: every ml_dtypes whose result
    agrees with the rule there would pass them, and the pinned one must."""
    x = np.arange(-9, 16, dtype=np.float32)
    for name in PACKED_INTS:
        np.testing.assert_array_equal(bits(x.astype(getattr(ml_dtypes, name))), onnx_packed_codes(x, name))


@pytest.mark.parametrize("name", PACKED_INTS)
def test_cast_integers_to_packed_ints_keeps_the_low_bits(name):
    rng = np.random.default_rng(2)
    x = np.concatenate([[0, 1, -1, 300, -300, 2**40 + 5, -2**63, 2**63 - 1],
                        rng.integers(-2**62, 2**62, 1001)]).astype(np.int64)
    np.testing.assert_array_equal(bits(run_cast(x, DType[name])), onnx_packed_codes(x, name))
    u8 = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(bits(run_cast(u8, DType[name])), onnx_packed_codes(u8, name))


@pytest.mark.parametrize("name", PACKED_INTS)
@pytest.mark.parametrize("to", ["int8", "uint8", "int32", "int64", "float16", "float64", "bool"])
def test_cast_every_packed_code_to_wider_types(name, to):
    codes = every_code(name)
    want = codes.astype(np.int64).astype(to)  # the value, then a cast numpy defines
    got = run_cast(np.tile(codes, 9), DType[to])
    np.testing.assert_array_equal(got, np.tile(want, 9))


def test_cast_between_packed_ints_and_float4():
    i4 = every_code("int4")
    np.testing.assert_array_equal(bits(run_cast(i4, DType.uint2)), onnx_packed_codes(i4.astype(np.int64), "uint2"))
    f4 = run_cast(i4, DType.float4_e2m1fn)  # rounded to nearest even, saturated at 6
    want = np.clip(i4.astype(np.float32), -6, 6).astype(ml_dtypes.float4_e2m1fn)
    np.testing.assert_array_equal(bits(f4), bits(want))
    np.testing.assert_array_equal(bits(run_cast(f4, DType.int4)), onnx_packed_codes(f4.astype(np.float32), "int4"))


@pytest.mark.parametrize("name", NAMES)
def test_cast_from_every_code_to_float32_is_exact(name):
    codes = every_code(name)
    got = run_cast(codes, DType.float32)
    np.testing.assert_array_equal(got, codes.astype(np.float32))  # NaNs compare equal here


def test_missing_ml_dtypes_names_the_dtype(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # `import ml_dtypes` now fails
    with pytest.raises(ValueError, match="DType.bfloat16 .*ml_dtypes"):
        DType.bfloat16.to_numpy()
    with pytest.raises(ValueError, match="float8_e5m2"):
        Tensor(DType.float8_e5m2, (2,)).to_numpy()
    with pytest.raises(ValueError, match="DType.int4 .*ml_dtypes"):
        Tensor(DType.int4, (3,)).to_numpy()
    assert DType.float32.to_numpy() == np.float32


def test_ml_dtypes_without_int2_names_the_version_needed(monkeypatch):
    monkeypatch.delattr(ml_dtypes, "int2")
    with pytest.raises(ValueError, match=r"DType.int2 .*ml_dtypes >= 0.5"):
        DType.int2.to_numpy()
    assert DType.int4.to_numpy() == np.dtype(ml_dtypes.int4)

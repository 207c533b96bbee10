"""max_c.dtype: MAX's DType with MAX's member values; traits answered by libmax_c."""
import enum
import sys

import numpy as np

from . import _errors
from ._lib import lib
import ctypes


class DType(enum.Enum):
    bool = 1
    float4_e2m1fn = 64
    float8_e8m0fnu = 73
    float8_e4m3fn = 75
    float8_e4m3fnuz = 76
    float8_e5m2 = 77
    float8_e5m2fnuz = 78
    float16 = 79
    bfloat16 = 80
    float32 = 81
    float64 = 82
    uint2 = 130
    int2 = 131
    uint4 = 132
    int4 = 133
    uint8 = 134
    int8 = 135
    uint16 = 136
    int16 = 137
    uint32 = 138
    int32 = 139
    uint64 = 140
    int64 = 141

    def __repr__(self):
        return f"DType.{self.name}"

    @property
    def size_in_bits(self) -> int:
        return int(lib.max_dtype_size_in_bits(self.value))

    @property
    def size_in_bytes(self) -> int:
        return int(lib.max_dtype_size_in_bytes(self.value))

    @property
    def align(self) -> int:
        return int(lib.max_dtype_align(self.value))

    def is_float(self) -> bool:
        return bool(lib.max_dtype_is_float(self.value))

    def is_float8(self) -> bool:
        return bool(lib.max_dtype_is_float8(self.value))

    def is_half(self) -> bool:
        return bool(lib.max_dtype_is_half(self.value))

    def is_integral(self) -> bool:
        return bool(lib.max_dtype_is_integral(self.value))

    def is_signed_integral(self) -> bool:
        return bool(lib.max_dtype_is_signed_integral(self.value))

    def is_unsigned_integral(self) -> bool:
        return bool(lib.max_dtype_is_unsigned_integral(self.value))

    def to_numpy(self):
        """The numpy dtype: bfloat16, float8, float4 and the 2- and 4-bit integers are the
        ml_dtypes package's, and ValueError (naming the dtype) when it is not installed or
        too old to have it."""
        dt = _TO_NUMPY.get(self)
        if dt is not None:
            return dt
        ml = _ml_dtypes()
        if ml is None:
            raise ValueError(f"DType.{self.name} has no numpy equivalent without the ml_dtypes "
                             "package (pip install ml_dtypes)")
        dt = _ml_dtype(self.name)
        if dt is None:
            raise ValueError(f"DType.{self.name} has no numpy equivalent in ml_dtypes "
                             f"{getattr(ml, '__version__', '?')} "
                             "(int2, uint2 and float8_e8m0fnu need ml_dtypes >= 0.5)")
        return dt

    @classmethod
    def from_numpy(cls, dtype) -> "DType":
        """The DType of a numpy dtype (or anything np.dtype accepts, ml_dtypes' included);
        ValueError otherwise."""
        try:
            dt = np.dtype(dtype)
        except TypeError as e:
            dt = _ml_dtype(dtype) if isinstance(dtype, str) and dtype in _ML_DTYPE_NAMES else None
            if dt is None:
                raise ValueError(f"{dtype!r} is not a numpy dtype: {e}") from None
        found = _FROM_NUMPY.get(dt)
        if found is None and _is_ml_dtype(dt):
            found = cls[dt.name]
        if found is None:
            raise ValueError(f"numpy dtype {dt} has no max_c DType")
        return found

    @classmethod
    def from_name(cls, name: str) -> "DType":
        out = ctypes.c_int32()
        _errors.check(lib.max_dtype_from_name(name.encode(), ctypes.byref(out)), dtype=True)
        return cls(out.value)


_TO_NUMPY = {
    DType.bool: np.dtype(np.bool_),
    DType.float16: np.dtype(np.float16),
    DType.float32: np.dtype(np.float32),
    DType.float64: np.dtype(np.float64),
    DType.uint8: np.dtype(np.uint8),
    DType.int8: np.dtype(np.int8),
    DType.uint16: np.dtype(np.uint16),
    DType.int16: np.dtype(np.int16),
    DType.uint32: np.dtype(np.uint32),
    DType.int32: np.dtype(np.int32),
    DType.uint64: np.dtype(np.uint64),
    DType.int64: np.dtype(np.int64),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}

# numpy has no bfloat16, float8, float4 or 2- and 4-bit integers: the ml_dtypes package (JAX's
# and onnx's) adds them as numpy dtypes of the same names, one element per byte. An optional
# dependency: imported on first need only.
_ML_DTYPE_NAMES = ("bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                   "float8_e8m0fnu", "float4_e2m1fn", "uint2", "int2", "uint4", "int4")


def _ml_dtypes():
    """The ml_dtypes module, or None when it is not installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes


def _ml_dtype(name):
    """ml_dtypes' numpy dtype of that name; None without the package or in a version that
    lacks it."""
    ml = _ml_dtypes()
    found = getattr(ml, name, None) if ml is not None else None
    return np.dtype(found) if found is not None else None


def _is_ml_dtype(dt) -> bool:
    """Whether numpy dtype `dt` is one of ml_dtypes' that we have (only possible once it is
    imported, so this never imports it)."""
    ml = sys.modules.get("ml_dtypes")
    return ml is not None and dt.name in _ML_DTYPE_NAMES and dt == _ml_dtype(dt.name)


def as_dtype(x) -> DType:
    """A DType from a DType, its value, its name or a numpy dtype; TypeError otherwise."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        try:
            return DType.from_name(x)
        except _errors.MaxError:
            pass
    elif isinstance(x, int) and not isinstance(x, bool):
        try:
            return DType(x)
        except ValueError:
            pass
    else:
        try:
            return DType.from_numpy(x)
        except ValueError:
            pass
    raise _errors.MaxTypeError(f"{x!r} is not a dtype", _errors.INVALID_ARGUMENT)


__all__ = ["DType"]

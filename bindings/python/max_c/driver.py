"""max_c.driver: devices and tensors (MAX's max.driver), with DLPack 1.x exchange."""
import ctypes
import itertools
import threading
import weakref
from ctypes import byref, c_char_p, c_int32, c_int64, c_size_t, c_void_p
from typing import Optional, Sequence

import numpy as np

from . import _errors
from ._errors import check
from ._lib import (DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPACK_DELETER,
                   RELEASE_FN, lib)
from .dtype import _ML_DTYPE_NAMES, DType, _is_ml_dtype, as_dtype

KIND_CPU, KIND_CUDA, KIND_HIP = 1, 2, 3
kDLCPU, kDLCUDA, kDLROCM = 1, 2, 10
DLPACK_FLAG_READ_ONLY = 1
DLPACK_VERSION = (1, 1)


class _Handle:
    """Owns one reference to a C handle, released by close() or the finalizer, once."""

    _kind = "handle"
    _release = None

    def _adopt(self, ptr):
        self._ptr = ptr
        self._finalizer = weakref.finalize(self, type(self)._release, ptr)

    @property
    def _h(self):
        f = getattr(self, "_finalizer", None)
        if f is None or not f.alive:
            raise _errors.closed_error(self._kind)
        return self._ptr

    @property
    def closed(self) -> bool:
        f = getattr(self, "_finalizer", None)
        return f is None or not f.alive

    def close(self) -> None:
        """Releases the handle; idempotent. Later use raises MaxRuntimeError."""
        f = getattr(self, "_finalizer", None)
        if f is not None:
            f()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---- devices ---------------------------------------------------------------------------------


def accelerator_count() -> int:
    n = c_int32()
    check(lib.max_accelerator_count(byref(n)))
    return n.value


def _str_out(fn, h):
    s = c_char_p()
    check(fn(h, byref(s)))
    return s.value.decode()


def _int_out(fn, h, ctype=c_int32):
    v = ctype()
    check(fn(h, byref(v)))
    return v.value


class Device(_Handle):
    """A device (MAX's driver.Device). Use CPU() or Accelerator() to get one."""

    _kind = "Device"
    _release = staticmethod(lib.max_device_release)

    def __init__(self, *args, **kwargs):
        raise TypeError("use driver.CPU() or driver.Accelerator()")

    @classmethod
    def _wrap(cls, ptr):
        kind = _int_out(lib.max_device_kind, ptr)
        sub = CPU if kind == KIND_CPU else Accelerator
        obj = object.__new__(sub)
        obj._adopt(ptr)
        return obj

    @classmethod
    def _create(cls, kind, id):
        out = c_void_p()
        check(lib.max_device_create(kind, int(id), byref(out)))
        return cls._wrap(out.value)

    @property
    def label(self) -> str:
        return _str_out(lib.max_device_label, self._h)

    @property
    def api(self) -> str:
        return _str_out(lib.max_device_api, self._h)

    @property
    def id(self) -> int:
        return _int_out(lib.max_device_id, self._h)

    @property
    def is_host(self) -> bool:
        return bool(_int_out(lib.max_device_is_host, self._h))

    def synchronize(self) -> None:
        check(lib.max_device_synchronize(self._h))

    def __eq__(self, other):
        return isinstance(other, Device) and (self.label, self.id) == (other.label, other.id)

    def __hash__(self):
        return hash((self.label, self.id))

    def __repr__(self):
        if self.closed:
            return "Device(<closed>)"
        return f"Device(type={self.label},id={self.id})"

    def __str__(self):
        return f"{self.label}:{self.id}"


class CPU(Device):
    """The host. id -1 and 0 both mean the host (MAX's driver.CPU)."""

    def __new__(cls, id: int = -1):
        return Device._create(KIND_CPU, id)

    def __init__(self, id: int = -1):
        pass


class Accelerator(Device):
    """An accelerator; id -1 is the first. Raises where none exists (MAX's driver.Accelerator)."""

    def __new__(cls, id: int = -1, device_memory_limit: int = -1):
        if accelerator_count() == 0:
            raise _errors.MaxNotFoundError(
                "no accelerator is available (driver.accelerator_count() is 0)", _errors.NOT_FOUND)
        last = None
        for kind in (KIND_CUDA, KIND_HIP):
            try:
                return Device._create(kind, id)
            except _errors.MaxNotFoundError as e:
                last = e
        raise last

    def __init__(self, id: int = -1, device_memory_limit: int = -1):
        pass


# ---- tensors ---------------------------------------------------------------------------------

# Borrowed numpy arrays, kept alive until libmax_c calls the release callback.
_borrowed = {}
_borrowed_lock = threading.Lock()
_borrow_ids = itertools.count(1)


def _release_borrowed(user_data):
    with _borrowed_lock:
        _borrowed.pop(user_data, None)


_RELEASE_CB = RELEASE_FN(_release_borrowed)  # lives as long as the module (and the process)

_pyapi = ctypes.pythonapi
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, c_void_p)
_pyapi.PyCapsule_New.restype = ctypes.py_object
_pyapi.PyCapsule_New.argtypes = [c_void_p, c_char_p, _CAPSULE_DESTRUCTOR]
_pyapi.PyCapsule_IsValid.restype = ctypes.c_int
_pyapi.PyCapsule_IsValid.argtypes = [ctypes.py_object, c_char_p]
_pyapi.PyCapsule_GetPointer.restype = c_void_p
_pyapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
_pyapi.PyCapsule_SetName.restype = ctypes.c_int
_pyapi.PyCapsule_SetName.argtypes = [ctypes.py_object, c_char_p]
# The destructor sees the capsule while it is being freed: raw pointers only, no refcounting.
_IsValidRaw = ctypes.PYFUNCTYPE(ctypes.c_int, c_void_p, c_char_p)(("PyCapsule_IsValid", _pyapi))
_GetPointerRaw = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", _pyapi))

# Capsule names must outlive the capsules: module-level bytes objects.
_NAME_VERSIONED = b"dltensor_versioned"
_NAME_USED_VERSIONED = b"used_dltensor_versioned"
_NAME_UNVERSIONED = b"dltensor"
_NAME_USED_UNVERSIONED = b"used_dltensor"


def _call_deleter(ptr, struct):
    managed = struct.from_address(ptr)
    if managed.deleter:
        DLPACK_DELETER(managed.deleter)(ptr)


def _capsule_destructor_versioned(capsule):
    # Per the DLPack Python spec: a consumer renames the capsule when it takes the tensor; an
    # unconsumed capsule still carries its name and its deleter must run, exactly once (here).
    if _IsValidRaw(capsule, _NAME_VERSIONED):
        ptr = _GetPointerRaw(capsule, _NAME_VERSIONED)
        if ptr:
            _call_deleter(ptr, DLManagedTensorVersioned)


def _capsule_destructor_unversioned(capsule):
    if _IsValidRaw(capsule, _NAME_UNVERSIONED):
        ptr = _GetPointerRaw(capsule, _NAME_UNVERSIONED)
        if ptr:
            _call_deleter(ptr, DLManagedTensor)


_DESTRUCTOR_VERSIONED = _CAPSULE_DESTRUCTOR(_capsule_destructor_versioned)
_DESTRUCTOR_UNVERSIONED = _CAPSULE_DESTRUCTOR(_capsule_destructor_unversioned)


def _borrow_numpy(arr) -> int:
    """A new max_tensor_t handle over a numpy array's memory (see Tensor.from_numpy); the
    caller owns the reference. The engine uses it for inputs it releases right after a call."""
    arr = np.asarray(arr)
    dtype = DType.from_numpy(arr.dtype)
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)  # MAX: non-contiguous arrays give a contiguous copy
    dims, rank = _dims_array(arr.shape)
    if dtype.size_in_bits < 8:
        arr = _pack_sub_byte(arr, dtype.size_in_bits)
    key = next(_borrow_ids)
    with _borrowed_lock:
        _borrowed[key] = arr
    out = c_void_p()
    status = lib.max_tensor_create_borrowed(
        dtype.value, dims, rank, None, c_void_p(arr.ctypes.data),
        0 if arr.flags.writeable else 1, _RELEASE_CB, c_void_p(key), byref(out))
    if status:
        with _borrowed_lock:
            _borrowed.pop(key, None)
        check(status)
    return out.value


def _pack_sub_byte(arr, bits):
    """A copy of an array of a `bits`-wide dtype (float4_e2m1fn, int4, uint2, ...; ml_dtypes
    holds one element per byte, in its low bits) packed as max_c stores it: 8 / bits per byte,
    the earliest element in the lowest bits, a last byte's unused bits 0."""
    per_byte = 8 // bits
    codes = arr.reshape(-1).view(np.uint8) & np.uint8((1 << bits) - 1)
    codes = np.append(codes, np.zeros(-codes.size % per_byte, np.uint8)).reshape(-1, per_byte)
    shifts = np.arange(0, 8, bits, dtype=np.uint8)
    return np.bitwise_or.reduce(codes << shifts, axis=1).astype(np.uint8)


def _unpack_sub_byte(packed, shape, np_dtype, bits):
    """The inverse of _pack_sub_byte: a new array of `shape` from the packed bytes."""
    n = int(np.prod(shape, dtype=np.int64))
    shifts = np.arange(0, 8, bits, dtype=np.uint8)
    codes = (packed.reshape(-1, 1) >> shifts) & np.uint8((1 << bits) - 1)
    return codes.reshape(-1)[:n].view(np_dtype).reshape(shape)


def _dims_array(shape):
    dims = [int(d) for d in shape]
    return (c_int64 * max(len(dims), 1))(*dims), len(dims)


# The stream a consumer names to a producer on each GPU device type (DLPack's __dlpack__):
# CUDA's legacy default stream is 1, ROCm's default stream 0. Every stream of ours waits for
# the default stream, so work the producer ordered before it is done when we read.
_DEFAULT_STREAM = {kDLCUDA: 1, kDLROCM: 0}


def _dlpack_device_type(array):
    """The producer's DLPack device type, or None when it does not say."""
    device = getattr(array, "__dlpack_device__", None)
    return int(device()[0]) if device is not None else None


class Tensor(_Handle):
    """A tensor on a device (MAX's driver.Tensor).

    Tensor(dtype, shape, device=None) is zero-filled; see also zeros, from_numpy, from_dlpack.
    """

    _kind = "Tensor"
    _release = staticmethod(lib.max_tensor_release)

    def __init__(self, dtype, shape: Sequence[int], device: Optional[Device] = None,
                 pinned: bool = False):
        dtype = as_dtype(dtype)
        dims, rank = _dims_array(shape)
        dev = device._h if device is not None else None
        out = c_void_p()
        check(lib.max_tensor_create(dev, dtype.value, dims, rank, byref(out)))
        self._adopt(out.value)

    @classmethod
    def _wrap(cls, ptr) -> "Tensor":
        obj = object.__new__(cls)
        obj._adopt(ptr)
        return obj

    @classmethod
    def zeros(cls, shape, dtype=None, device: Optional[Device] = None) -> "Tensor":
        """A zero-filled tensor: zeros(shape, dtype, device=None) (also zeros(dtype, shape))."""
        if isinstance(shape, (DType, str)) or dtype is None:
            shape, dtype = dtype, shape
        if dtype is None:
            dtype = DType.float32
        return cls(dtype, shape if shape is not None else (), device)

    @classmethod
    def scalar(cls, value, dtype, device: Optional[Device] = None) -> "Tensor":
        t = cls.from_numpy(np.asarray(value, dtype=as_dtype(dtype).to_numpy()))
        return t if device is None or device.is_host else t.copy(device)

    @classmethod
    def from_numpy(cls, arr) -> "Tensor":
        """Borrows a C-contiguous host array without copying (the tensor keeps the array alive
        through libmax_c's release callback); a non-contiguous array is copied first. A
        read-only array gives a read-only tensor."""
        return cls._wrap(_borrow_numpy(arr))

    # ---- DLPack --------------------------------------------------------------------------

    def __dlpack_device__(self):
        d = DLDevice()
        check(lib.max_tensor_dlpack_device(self._h, byref(d)))
        return (int(d.device_type), int(d.device_id))

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule sharing this tensor's memory: "dltensor_versioned" when
        max_version >= (1, 0), else the unversioned "dltensor".

        `stream` (the consumer's, per the DLPack spec) needs no wait: a tensor's values are
        final when the call that made it returns (execute and copies wait for their streams)."""
        h = self._h
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"cannot export a tensor on {self.__dlpack_device__()} to "
                              f"{tuple(dl_device)} without a copy")
        src = self
        if copy:
            src = self.copy()
            h = src._h
        out = c_void_p()
        if max_version is not None and tuple(max_version)[0] >= 1:
            check(lib.max_tensor_to_dlpack(h, byref(out)))
            ptr = out.value
            if copy:
                DLManagedTensorVersioned.from_address(ptr).flags |= 2  # IS_COPIED
            try:
                cap = _pyapi.PyCapsule_New(ptr, _NAME_VERSIONED, _DESTRUCTOR_VERSIONED)
            except BaseException:
                _call_deleter(ptr, DLManagedTensorVersioned)
                raise
        else:
            ro = c_int32()
            check(lib.max_tensor_is_read_only(h, byref(ro)))
            if ro.value:
                raise BufferError("a read-only tensor cannot be exported through the unversioned "
                                  "DLPack protocol (it has no read-only flag)")
            check(lib.max_tensor_to_dlpack_unversioned(h, byref(out)))
            ptr = out.value
            try:
                cap = _pyapi.PyCapsule_New(ptr, _NAME_UNVERSIONED, _DESTRUCTOR_UNVERSIONED)
            except BaseException:
                _call_deleter(ptr, DLManagedTensor)
                raise
        if copy:
            src.close()  # the capsule keeps the copy's memory alive
        return cap

    @classmethod
    def from_dlpack(cls, array, *, copy=None) -> "Tensor":
        """A tensor over any DLPack producer's memory (numpy arrays, other Tensors, ...).

        Asks for a versioned capsule first and falls back to the unversioned protocol. The
        capsule is marked used only when the tensor was made; on failure it stays the
        producer's."""
        if isinstance(array, Tensor) and not copy:
            out = c_void_p()
            check(lib.max_tensor_view(array._h, array.dtype.value, None, -1, byref(out)))
            return cls._wrap(out.value)
        if isinstance(array, np.ndarray) and _is_ml_dtype(array.dtype):
            # numpy exports no ml_dtypes array (bfloat16, float8, int4, ...) through DLPack: borrow it.
            return cls.from_numpy(array.copy() if copy else array)
        kwargs = {}
        stream = _DEFAULT_STREAM.get(_dlpack_device_type(array))
        if stream is not None:
            kwargs["stream"] = stream
        try:
            cap = array.__dlpack__(max_version=DLPACK_VERSION, copy=copy, **kwargs)
        except TypeError:
            if copy:
                raise
            cap = array.__dlpack__(**kwargs)
        out = c_void_p()
        if _pyapi.PyCapsule_IsValid(cap, _NAME_VERSIONED):
            ptr = _pyapi.PyCapsule_GetPointer(cap, _NAME_VERSIONED)
            check(lib.max_tensor_from_dlpack(ptr, byref(out)))
            _pyapi.PyCapsule_SetName(cap, _NAME_USED_VERSIONED)
        elif _pyapi.PyCapsule_IsValid(cap, _NAME_UNVERSIONED):
            ptr = _pyapi.PyCapsule_GetPointer(cap, _NAME_UNVERSIONED)
            check(lib.max_tensor_from_dlpack_unversioned(ptr, byref(out)))
            _pyapi.PyCapsule_SetName(cap, _NAME_USED_UNVERSIONED)
        else:
            raise _errors.MaxValueError(
                f"{type(array).__name__}.__dlpack__() did not return a DLPack capsule",
                _errors.INVALID_ARGUMENT)
        return cls._wrap(out.value)

    # ---- properties -----------------------------------------------------------------------

    @property
    def dtype(self) -> DType:
        return DType(_int_out(lib.max_tensor_dtype, self._h))

    @property
    def rank(self) -> int:
        return _int_out(lib.max_tensor_rank, self._h)

    @property
    def shape(self) -> tuple:
        h = self._h
        rank = self.rank
        p = ctypes.POINTER(c_int64)()
        check(lib.max_tensor_dims(h, byref(p)))
        return tuple(p[i] for i in range(rank))

    @property
    def strides(self) -> tuple:
        """Strides in elements (as DLPack counts them)."""
        h = self._h
        rank = self.rank
        p = ctypes.POINTER(c_int64)()
        check(lib.max_tensor_strides(h, byref(p)))
        return tuple(p[i] for i in range(rank))

    @property
    def num_elements(self) -> int:
        return _int_out(lib.max_tensor_num_elements, self._h, c_int64)

    @property
    def element_size(self) -> int:
        return self.dtype.size_in_bytes

    @property
    def nbytes(self) -> int:
        return _int_out(lib.max_tensor_byte_size, self._h, c_size_t)

    @property
    def device(self) -> Device:
        out = c_void_p()
        check(lib.max_tensor_device(self._h, byref(out)))
        return Device._wrap(out.value)

    @property
    def is_host(self) -> bool:
        d = self.device
        try:
            return d.is_host
        finally:
            d.close()

    @property
    def is_contiguous(self) -> bool:
        return bool(_int_out(lib.max_tensor_is_contiguous, self._h))

    @property
    def is_read_only(self) -> bool:
        return bool(_int_out(lib.max_tensor_is_read_only, self._h))

    # ---- data -----------------------------------------------------------------------------

    def to_numpy(self) -> np.ndarray:
        """A numpy array sharing this host tensor's memory (through DLPack); it keeps the
        memory alive after the tensor is closed. Read-only tensors give read-only arrays."""
        h = self._h
        dtype = self.dtype
        np_dtype = dtype.to_numpy()  # ValueError for dtypes numpy lacks
        if not self.is_host:
            raise _errors.MaxRuntimeError("to_numpy() needs a host tensor; copy it to CPU() first",
                                          _errors.FAILED_PRECONDITION)
        del h
        if dtype.name not in _ML_DTYPE_NAMES:
            return np.from_dlpack(self)
        # ml_dtypes' dtypes (bfloat16, float8, float4, int4, ...): numpy's DLPack import has no
        # codes for them, so the memory goes through as unsigned integers of the same width.
        src = self.contiguous()
        if dtype.size_in_bits < 8:  # packed here, one per byte in numpy: a copy
            packed = np.from_dlpack(src.view(DType.uint8, (src.nbytes,)))
            return _unpack_sub_byte(packed, self.shape, np_dtype, dtype.size_in_bits)
        bits = DType.uint16 if np_dtype.itemsize == 2 else DType.uint8
        return np.from_dlpack(src.view(bits, self.shape)).view(np_dtype)

    def __array__(self, dtype=None, copy=None):
        a = self.to_numpy()
        if copy:
            a = a.copy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def item(self):
        """The element of a rank-0 tensor as a Python builtin."""
        if self.rank != 0:
            raise _errors.MaxValueError(f"item() needs a rank-0 tensor, this one has rank "
                                        f"{self.rank}", _errors.INVALID_ARGUMENT)
        return self.to_numpy()[()].item()

    def copy(self, device: Optional[Device] = None) -> "Tensor":
        """A deep contiguous copy on `device` (None: this tensor's device)."""
        out = c_void_p()
        check(lib.max_tensor_copy(self._h, device._h if device is not None else None,
                                  byref(out)))
        return Tensor._wrap(out.value)

    def contiguous(self) -> "Tensor":
        return self if self.is_contiguous else self.copy()

    def to(self, device: Device) -> "Tensor":
        return self if device == self.device else self.copy(device)

    def inplace_copy_from(self, src: "Tensor") -> None:
        check(lib.max_tensor_copy_from(self._h, src._h))

    def view(self, dtype, shape: Optional[Sequence[int]] = None) -> "Tensor":
        """This memory with another dtype and/or shape. Without a shape, the last dim is
        rescaled when the element size changes."""
        h = self._h
        dtype = as_dtype(dtype)
        out = c_void_p()
        if shape is None and dtype.size_in_bits != self.dtype.size_in_bits and self.rank > 0:
            old, new = self.dtype.size_in_bits, dtype.size_in_bits
            s = list(self.shape)
            if (s[-1] * old) % new:
                raise _errors.MaxValueError(
                    f"cannot view shape {tuple(s)} of {self.dtype.name} as {dtype.name}: the last "
                    f"dim does not divide; give a shape", _errors.INVALID_ARGUMENT)
            s[-1] = s[-1] * old // new
            shape = s
        if shape is None:
            check(lib.max_tensor_view(h, dtype.value, None, -1, byref(out)))
        else:
            dims, rank = _dims_array(shape)
            check(lib.max_tensor_view(h, dtype.value, dims, rank, byref(out)))
        return Tensor._wrap(out.value)

    def __repr__(self):
        if self.closed:
            return "Tensor(<closed>)"
        return f"Tensor(dtype={self.dtype.name}, shape={list(self.shape)}, device={self.device})"

    def __len__(self):
        s = self.shape
        if not s:
            raise TypeError("len() of a rank-0 tensor")
        return s[0]


Buffer = Tensor  # MAX's newer name

__all__ = ["Device", "CPU", "Accelerator", "accelerator_count", "Tensor", "Buffer"]

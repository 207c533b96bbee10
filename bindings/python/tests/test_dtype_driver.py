import gc
import weakref

import numpy as np
import pytest

import max_c
from max_c import driver
from max_c.driver import CPU, Tensor
from max_c.dtype import DType


def test_dtype_members_and_traits():
    assert len(DType) == 23
    assert DType.float8_e8m0fnu.value == 73 and DType.float8_e8m0fnu.size_in_bits == 8
    assert DType.float8_e8m0fnu.is_float8() and DType.float8_e8m0fnu.is_float()
    assert not DType.float8_e8m0fnu.is_integral() and not DType.float8_e8m0fnu.is_half()
    assert DType.bool.value == 1 and DType.float32.value == 81 and DType.int64.value == 141
    assert DType.bfloat16.value == 80 and DType.float8_e4m3fn.value == 75
    assert DType.float64.size_in_bytes == 8 and DType.float4_e2m1fn.size_in_bits == 4
    assert DType.int4.value == 133 and DType.int4.size_in_bits == 4 and DType.int4.size_in_bytes == 1
    assert DType.uint2.value == 130 and DType.uint2.size_in_bits == 2 and DType.uint2.is_unsigned_integral()
    assert DType.int2.is_signed_integral() and DType.uint4.is_integral() and not DType.int4.is_float()
    assert DType.int64.is_integral() and DType.int64.is_signed_integral()
    assert DType.uint8.is_unsigned_integral() and not DType.uint8.is_signed_integral()
    assert DType.float32.is_float() and not DType.float32.is_half()
    assert DType.bfloat16.is_half() and DType.float16.is_half()
    assert DType.float8_e5m2.is_float8() and not DType.float16.is_float8()
    assert DType.float32.align == 4
    assert DType.from_name("float32") is DType.float32


def test_dtype_numpy_mapping():
    for dt in DType:
        try:
            npdt = dt.to_numpy()
        except ValueError:  # bfloat16, float8, float4, int4... without ml_dtypes (test_ml_dtypes.py)
            assert dt is DType.bfloat16 or dt.is_float8() or dt.size_in_bits < 8
            continue
        assert DType.from_numpy(npdt) is dt
        assert npdt.itemsize == dt.size_in_bytes
    with pytest.raises(ValueError):
        DType.from_numpy(np.complex64)
    with pytest.raises(max_c.MaxNotFoundError):
        DType.from_name("float33")


def test_devices():
    cpu = CPU()
    assert cpu.label == "cpu" and cpu.id == 0 and cpu.api == "cpu" and cpu.is_host
    assert cpu == CPU(0)
    assert driver.accelerator_count() >= 0
    if driver.accelerator_count() == 0:
        with pytest.raises(max_c.MaxError, match="accelerator"):
            driver.Accelerator()
    cpu.close()
    cpu.close()
    with pytest.raises(max_c.MaxRuntimeError, match="closed"):
        cpu.label


def test_tensor_zeros_and_props():
    t = Tensor(DType.float32, (2, 3))
    assert t.shape == (2, 3) and t.dtype is DType.float32 and t.rank == 2
    assert t.num_elements == 6 and t.element_size == 4 and t.is_contiguous
    assert t.device == CPU()
    np.testing.assert_array_equal(t.to_numpy(), np.zeros((2, 3), np.float32))
    z = Tensor.zeros((4,), DType.int32)
    assert z.shape == (4,) and z.dtype is DType.int32
    s = Tensor(DType.int64, ())
    assert s.rank == 0 and s.num_elements == 1 and s.item() == 0


def test_from_numpy_zero_copy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = Tensor.from_numpy(a)
    a[1, 2] = 99.0
    v = t.to_numpy()
    assert v[1, 2] == 99.0
    v[0, 0] = -5
    assert a[0, 0] == -5  # the view shares memory both ways
    np.testing.assert_array_equal(v, a)


def test_from_numpy_noncontiguous_copies():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    t = Tensor.from_numpy(a[:, ::2])
    assert t.is_contiguous and t.shape == (3, 2)
    np.testing.assert_array_equal(t.to_numpy(), a[:, ::2])
    a[0, 0] = 100
    assert t.to_numpy()[0, 0] == 0


def test_copy_view_inplace():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = Tensor.from_numpy(a)
    c = t.copy()
    a[0, 0] = 7
    assert c.to_numpy()[0, 0] == 0 and t.to_numpy()[0, 0] == 7
    v = t.view(DType.int32)
    np.testing.assert_array_equal(v.to_numpy(), a.view(np.int32))
    r = t.view(DType.float32, (3, 2))
    np.testing.assert_array_equal(r.to_numpy(), a.reshape(3, 2))
    u8 = t.view(DType.uint8)
    assert u8.shape == (2, 12)
    dst = Tensor(DType.float32, (2, 3))
    dst.inplace_copy_from(t)
    np.testing.assert_array_equal(dst.to_numpy(), a)


def test_errors_map_to_classes():
    t = Tensor(DType.float32, (2, 3))
    with pytest.raises(max_c.MaxValueError) as e:
        t.view(DType.float32, (4, 4))
    assert isinstance(e.value, ValueError) and e.value.code == 3
    assert e.value.code_name == "INVALID_ARGUMENT" and str(e.value.message)
    with pytest.raises(ValueError):
        Tensor(DType.float32, (2, 3)).inplace_copy_from(Tensor(DType.int32, (2, 3)))
    with pytest.raises(ValueError):
        Tensor(DType.float32, (-1,))
    with pytest.raises(TypeError):
        Tensor("not_a_dtype", (2,))
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    tr = Tensor.from_numpy(ro)
    assert tr.is_read_only
    with pytest.raises(max_c.MaxRuntimeError) as e:
        tr.inplace_copy_from(Tensor(DType.float32, (3,)))
    assert e.value.code_name == "FAILED_PRECONDITION"
    with pytest.raises(ValueError):
        t.item()


def test_dlpack_roundtrip_numpy():
    a = np.arange(10, dtype=np.int64)
    t = Tensor.from_dlpack(a)
    a[3] = 33
    assert t.to_numpy()[3] == 33
    b = np.from_dlpack(t)
    b[4] = 44
    assert a[4] == 44
    assert t.__dlpack_device__() == (1, 0)
    # versioned and unversioned capsules
    cap = t.__dlpack__(max_version=(1, 1))
    assert "dltensor_versioned" in repr(cap)
    cap0 = t.__dlpack__()
    assert '"dltensor"' in repr(cap0)
    del cap, cap0  # unconsumed: the destructor runs the deleter
    gc.collect()
    t2 = Tensor.from_dlpack(t)
    np.testing.assert_array_equal(t2.to_numpy(), a)


class _Unversioned:
    def __init__(self, arr):
        self.arr = arr

    def __dlpack__(self, stream=None):
        return self.arr.__dlpack__()

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()


def test_dlpack_unversioned_fallback():
    a = np.arange(4, dtype=np.float64)
    t = Tensor.from_dlpack(_Unversioned(a))
    a[0] = 9
    assert t.to_numpy()[0] == 9


def test_dlpack_deleter_once_and_source_collected():
    a = np.arange(8, dtype=np.float32)
    ref = weakref.ref(a)
    t = Tensor.from_dlpack(a)
    b = np.from_dlpack(t)
    del a
    gc.collect()
    assert ref() is not None
    t.close()
    assert ref() is not None  # b still views the memory
    assert b.sum() == 28
    del b
    gc.collect()
    assert ref() is None


def test_from_numpy_source_collected():
    a = np.ones(5, np.float32)
    ref = weakref.ref(a)
    t = Tensor.from_numpy(a)
    del a
    gc.collect()
    assert ref() is not None
    del t
    gc.collect()
    assert ref() is None


def test_dlpack_read_only():
    a = np.arange(3, dtype=np.float32)
    a.flags.writeable = False
    t = Tensor.from_dlpack(a)
    assert t.is_read_only
    b = np.from_dlpack(t)
    assert not b.flags.writeable
    assert not t.to_numpy().flags.writeable


class _Producer:
    """A DLPack producer on `device_type` that records the keywords it is asked with."""

    def __init__(self, array, device_type):
        self.array, self.device_type, self.asked = array, device_type, None

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, **kw):
        self.asked = kw
        return self.array.__dlpack__()


def test_dlpack_import_orders_a_gpu_producer_before_the_default_stream():
    a = np.arange(3, dtype=np.float32)
    cuda = _Producer(a, 2)
    Tensor.from_dlpack(cuda)
    assert cuda.asked.get("stream") == 1  # DLPack's legacy default stream, which ours wait for
    rocm = _Producer(a, 10)
    Tensor.from_dlpack(rocm)
    assert rocm.asked.get("stream") == 0  # ROCm's default stream
    cpu = _Producer(a, 1)
    Tensor.from_dlpack(cpu)
    assert "stream" not in cpu.asked


def test_dlpack_failure_leaves_capsule_unconsumed():
    class Bad:
        def __dlpack__(self, **kw):
            return "nope"

    with pytest.raises(ValueError):
        Tensor.from_dlpack(Bad())


def test_lifetime():
    t = Tensor(DType.float32, (2,))
    v = t.view(DType.int32)
    with Tensor(DType.float32, (1,)) as w:
        pass
    with pytest.raises(max_c.MaxRuntimeError):
        w.shape
    t.close()
    t.close()
    with pytest.raises(max_c.MaxRuntimeError, match="closed"):
        t.shape
    with pytest.raises(max_c.MaxRuntimeError):
        np.from_dlpack(t)
    assert v.shape == (2,)  # the child keeps the storage alive
    arr = v.to_numpy()
    dev = v.device
    del v
    gc.collect()
    assert arr.shape == (2,) and dev.is_host
    assert "closed" in repr(t)

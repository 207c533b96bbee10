package maxc

/*
#include <stdlib.h>
#include <max_c.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Tensor is storage on a device plus dtype, shape and strides (MAX's driver Tensor).
// Tensor handles may be used from many goroutines at once.
type Tensor struct {
	mu sync.RWMutex
	p  *C.max_tensor_t
}

func wrapTensor(p *C.max_tensor_t) *Tensor {
	t := &Tensor{p: p}
	runtime.SetFinalizer(t, func(t *Tensor) { t.Close() })
	return t
}

func (t *Tensor) rlock(method string) error {
	if t == nil {
		return closedError("Tensor", method)
	}
	t.mu.RLock()
	if t.p == nil {
		t.mu.RUnlock()
		return closedError("Tensor", method)
	}
	return nil
}

// Close releases the tensor handle (views and copies stay valid). It is idempotent.
func (t *Tensor) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.p != nil {
		C.max_tensor_release(t.p)
		t.p = nil
		runtime.SetFinalizer(t, nil)
	}
	return nil
}

// Zeros is a new zero-filled contiguous CPU tensor.
func Zeros(dtype DType, shape []int64) (*Tensor, error) {
	return ZerosOn(nil, dtype, shape)
}

// ZerosOn is a new zero-filled contiguous tensor on dev (nil: the CPU).
func ZerosOn(dev *Device, dtype DType, shape []int64) (*Tensor, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	var dp *C.max_device_t
	if dev != nil {
		if err := dev.rlock("ZerosOn"); err != nil {
			return nil, err
		}
		defer dev.mu.RUnlock()
		dp = dev.p
	}
	var p *C.max_tensor_t
	err := statusError(C.max_tensor_create(dp, dtype.c(), cInt64s(shape), C.int32_t(len(shape)), &p))
	runtime.KeepAlive(shape)
	if err != nil {
		return nil, err
	}
	return wrapTensor(p), nil
}

func fromHost(dtype DType, shape []int64, data unsafe.Pointer, numBytes uintptr) (*Tensor, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	var p *C.max_tensor_t
	err := statusError(C.max_tensor_create_from_host(nil, dtype.c(), cInt64s(shape),
		C.int32_t(len(shape)), data, C.size_t(numBytes), &p))
	runtime.KeepAlive(shape)
	if err != nil {
		return nil, err
	}
	return wrapTensor(p), nil
}

// FromFloat32s is a new float32 CPU tensor of the given shape holding a copy of data.
func FromFloat32s(data []float32, shape []int64) (*Tensor, error) {
	var ptr unsafe.Pointer
	if len(data) > 0 {
		ptr = unsafe.Pointer(&data[0])
	}
	t, err := fromHost(Float32, shape, ptr, uintptr(len(data))*4)
	runtime.KeepAlive(data)
	return t, err
}

// FromInt64s is a new int64 CPU tensor of the given shape holding a copy of data.
func FromInt64s(data []int64, shape []int64) (*Tensor, error) {
	var ptr unsafe.Pointer
	if len(data) > 0 {
		ptr = unsafe.Pointer(&data[0])
	}
	t, err := fromHost(Int64, shape, ptr, uintptr(len(data))*8)
	runtime.KeepAlive(data)
	return t, err
}

// FromBytes is a new CPU tensor holding a copy of raw row-major bytes.
func FromBytes(dtype DType, data []byte, shape []int64) (*Tensor, error) {
	var ptr unsafe.Pointer
	if len(data) > 0 {
		ptr = unsafe.Pointer(&data[0])
	}
	t, err := fromHost(dtype, shape, ptr, uintptr(len(data)))
	runtime.KeepAlive(data)
	return t, err
}

// DType is the tensor's element type.
func (t *Tensor) DType() (DType, error) {
	d, err := tensorQuery(t, "DType", func(p *C.max_tensor_t, o *C.max_dtype_t) *C.max_status_t {
		return C.max_tensor_dtype(p, o)
	})
	return DType(d), err
}

// tensorQuery runs one scalar getter of the C ABI under the tensor's read lock.
func tensorQuery[T any](t *Tensor, method string, get func(*C.max_tensor_t, *T) *C.max_status_t) (T, error) {
	var out T
	if err := t.rlock(method); err != nil {
		return out, err
	}
	defer t.mu.RUnlock()
	err := statusError(get(t.p, &out))
	return out, err
}

func (t *Tensor) int64Array(method string, get func(*C.max_tensor_t, **C.int64_t) *C.max_status_t) ([]int64, error) {
	if err := t.rlock(method); err != nil {
		return nil, err
	}
	defer t.mu.RUnlock()
	var rank C.int32_t
	if err := statusError(C.max_tensor_rank(t.p, &rank)); err != nil {
		return nil, err
	}
	out := make([]int64, int(rank))
	if rank == 0 {
		return out, nil
	}
	var arr *C.int64_t
	if err := statusError(get(t.p, &arr)); err != nil {
		return nil, err
	}
	copy(out, unsafe.Slice((*int64)(unsafe.Pointer(arr)), int(rank)))
	return out, nil
}

// Shape is a copy of the tensor's dims.
func (t *Tensor) Shape() ([]int64, error) {
	return t.int64Array("Shape", func(p *C.max_tensor_t, o **C.int64_t) *C.max_status_t {
		return C.max_tensor_dims(p, o)
	})
}

// Strides is a copy of the tensor's strides, in elements.
func (t *Tensor) Strides() ([]int64, error) {
	return t.int64Array("Strides", func(p *C.max_tensor_t, o **C.int64_t) *C.max_status_t {
		return C.max_tensor_strides(p, o)
	})
}

// Rank is the number of dims.
func (t *Tensor) Rank() (int, error) {
	r, err := tensorQuery(t, "Rank", func(p *C.max_tensor_t, o *C.int32_t) *C.max_status_t {
		return C.max_tensor_rank(p, o)
	})
	return int(r), err
}

// NumElements is the product of the dims.
func (t *Tensor) NumElements() (int64, error) {
	n, err := tensorQuery(t, "NumElements", func(p *C.max_tensor_t, o *C.int64_t) *C.max_status_t {
		return C.max_tensor_num_elements(p, o)
	})
	return int64(n), err
}

// ByteSize is the bytes the elements occupy when contiguous.
func (t *Tensor) ByteSize() (int, error) {
	n, err := tensorQuery(t, "ByteSize", func(p *C.max_tensor_t, o *C.size_t) *C.max_status_t {
		return C.max_tensor_byte_size(p, o)
	})
	return int(n), err
}

// IsContiguous reports whether the tensor is row-major contiguous.
func (t *Tensor) IsContiguous() (bool, error) {
	v, err := tensorQuery(t, "IsContiguous", func(p *C.max_tensor_t, o *C.int32_t) *C.max_status_t {
		return C.max_tensor_is_contiguous(p, o)
	})
	return v != 0, err
}

// IsReadOnly reports whether writes through the library fail (a view of a weights file, a
// read-only DLPack import).
func (t *Tensor) IsReadOnly() (bool, error) {
	v, err := tensorQuery(t, "IsReadOnly", func(p *C.max_tensor_t, o *C.int32_t) *C.max_status_t {
		return C.max_tensor_is_read_only(p, o)
	})
	return v != 0, err
}

// Device gives a new handle to the tensor's device; the caller closes it.
func (t *Tensor) Device() (*Device, error) {
	if err := t.rlock("Device"); err != nil {
		return nil, err
	}
	defer t.mu.RUnlock()
	var d *C.max_device_t
	if err := statusError(C.max_tensor_device(t.p, &d)); err != nil {
		return nil, err
	}
	return wrapDevice(d), nil
}

// Bytes copies the elements, in row-major order, into a new byte slice.
func (t *Tensor) Bytes() ([]byte, error) {
	if err := t.rlock("Bytes"); err != nil {
		return nil, err
	}
	defer t.mu.RUnlock()
	var n C.size_t
	if err := statusError(C.max_tensor_byte_size(t.p, &n)); err != nil {
		return nil, err
	}
	out := make([]byte, int(n))
	if n == 0 {
		return out, nil
	}
	err := statusError(C.max_tensor_to_host(t.p, unsafe.Pointer(&out[0]), n))
	runtime.KeepAlive(out)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (t *Tensor) readInto(method string, want DType, elemSize int, dst func(n int) unsafe.Pointer) error {
	if err := t.rlock(method); err != nil {
		return err
	}
	defer t.mu.RUnlock()
	var d C.max_dtype_t
	if err := statusError(C.max_tensor_dtype(t.p, &d)); err != nil {
		return err
	}
	if DType(d) != want {
		return newError(CodeInvalidArgument, "Tensor.%s: the tensor's dtype is %s, not %s", method, DType(d), want)
	}
	var n C.size_t
	if err := statusError(C.max_tensor_byte_size(t.p, &n)); err != nil {
		return err
	}
	ptr := dst(int(n) / elemSize)
	if n == 0 {
		return nil
	}
	return statusError(C.max_tensor_to_host(t.p, ptr, n))
}

// Float32s copies a float32 tensor's elements, in row-major order, into a new slice.
func (t *Tensor) Float32s() ([]float32, error) {
	var out []float32
	err := t.readInto("Float32s", Float32, 4, func(n int) unsafe.Pointer {
		out = make([]float32, n)
		if n == 0 {
			return nil
		}
		return unsafe.Pointer(&out[0])
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Int64s copies an int64 tensor's elements, in row-major order, into a new slice.
func (t *Tensor) Int64s() ([]int64, error) {
	var out []int64
	err := t.readInto("Int64s", Int64, 8, func(n int) unsafe.Pointer {
		out = make([]int64, n)
		if n == 0 {
			return nil
		}
		return unsafe.Pointer(&out[0])
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Copy is a deep contiguous copy on the tensor's own device.
func (t *Tensor) Copy() (*Tensor, error) {
	if err := t.rlock("Copy"); err != nil {
		return nil, err
	}
	defer t.mu.RUnlock()
	var p *C.max_tensor_t
	if err := statusError(C.max_tensor_copy(t.p, nil, &p)); err != nil {
		return nil, err
	}
	return wrapTensor(p), nil
}

// CopyFrom copies src's elements into t (same dtype and shape).
func (t *Tensor) CopyFrom(src *Tensor) error {
	if err := t.rlock("CopyFrom"); err != nil {
		return err
	}
	defer t.mu.RUnlock()
	if src == t {
		return nil
	}
	if err := src.rlock("CopyFrom"); err != nil {
		return err
	}
	defer src.mu.RUnlock()
	return statusError(C.max_tensor_copy_from(t.p, src.p))
}

// View is a view of the tensor's memory with another dtype and/or shape; the byte size must
// stay the same. A nil shape keeps the shape (only when the element size is unchanged).
func (t *Tensor) View(dtype DType, shape []int64) (*Tensor, error) {
	if err := t.rlock("View"); err != nil {
		return nil, err
	}
	defer t.mu.RUnlock()
	rank := C.int32_t(len(shape))
	if shape == nil {
		rank = -1
	}
	var p *C.max_tensor_t
	err := statusError(C.max_tensor_view(t.p, dtype.c(), cInt64s(shape), rank, &p))
	runtime.KeepAlive(shape)
	if err != nil {
		return nil, err
	}
	return wrapTensor(p), nil
}

package maxc

/*
#include <stdint.h>
#include <max_c.h>

// Defined in borrow_export.go (a Go function exported to C).
extern void maxcGoUnpin(uintptr_t handle);

// The release callback the library calls once, on any thread, when the last view of the
// borrowed memory goes away; the handle travels as user_data.
static void maxc_unpin(void* user_data) { maxcGoUnpin((uintptr_t)user_data); }

// Go cannot take the address of a C function or turn a handle into a void* without vet
// complaints, so both happen here.
static max_status_t* maxc_create_borrowed_pinned(max_dtype_t dtype, const int64_t* dims,
                                                 int32_t rank, const int64_t* strides,
                                                 void* data, uintptr_t handle,
                                                 max_tensor_t** out) {
  return max_tensor_create_borrowed(dtype, dims, rank, strides, data, 0, maxc_unpin,
                                    (void*)handle, out);
}
*/
import "C"

import (
	"math"
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// livePins counts borrowed slices still pinned (for tests: it must drop back once the
// library lets go).
var livePins atomic.Int64

// Element is the Go element types with a MAX dtype of the same size and layout.
type Element interface {
	float32 | float64 | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

func dtypeOf[T Element]() DType {
	var zero T
	switch any(zero).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	default:
		return Uint64
	}
}

// Borrow makes a CPU tensor over data's memory without copying: it is row-major with the
// given shape, whose element count must be len(data).
//
// cgo forbids C to keep a Go pointer unless the memory is pinned, so the slice's backing
// array is pinned with runtime.Pinner (it can neither move nor be freed) until the library
// lets go of it: when the last view of the tensor is released (Close, the finalizer, or a
// model that had it as a weight going away), the pin is dropped on whatever thread that
// happens. Writing to data while the tensor or a model using it may read it is a data
// race; use FromFloat32s and friends for a copy instead.
//
// Errors: INVALID_ARGUMENT naming the shape when it is negative, too large or does not hold
// len(data) elements.
func Borrow[T Element](data []T, shape []int64) (*Tensor, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	n, err := elementCount("Borrow", shape)
	if err != nil {
		return nil, err
	}
	if n != int64(len(data)) {
		return nil, newError(CodeInvalidArgument, "Borrow: shape %v holds %d elements but the slice has %d", shape, n, len(data))
	}
	if n == 0 {
		return Zeros(dtypeOf[T](), shape) // nothing to borrow
	}
	return borrowPinned(data, 0, shape, nil)
}

// BorrowStrided is Borrow for a strided view of data: element (i0, i1, ...) is
// data[base + i0*strides[0] + i1*strides[1] + ...], strides counted in elements as in
// DLPack, where base is the offset that makes the lowest element data[0] (0 unless a stride
// is negative). Every element the view can reach must lie inside data; the slice may hold
// more (a column of a matrix, every other row). Pinning and the data-race rule are Borrow's.
//
// Errors: INVALID_ARGUMENT naming the shape or strides when their lengths differ, a dim is
// negative, or the view reaches outside the slice.
func BorrowStrided[T Element](data []T, shape, strides []int64) (*Tensor, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	if len(strides) != len(shape) {
		return nil, newError(CodeInvalidArgument, "BorrowStrided: %d strides for the %d dims of shape %v", len(strides), len(shape), shape)
	}
	n, err := elementCount("BorrowStrided", shape)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return Zeros(dtypeOf[T](), shape) // nothing to borrow
	}
	base, err := stridedSpan(len(data), shape, strides)
	if err != nil {
		return nil, err
	}
	return borrowPinned(data, base, shape, strides)
}

// borrowPinned pins data and hands &data[base] to the library, which unpins it through
// maxcGoUnpin when the last view goes away.
func borrowPinned[T Element](data []T, base int, shape, strides []int64) (*Tensor, error) {
	pinner := new(runtime.Pinner)
	pinner.Pin(&data[0])
	livePins.Add(1)
	handle := cgo.NewHandle(pinner)
	var p *C.max_tensor_t
	err := statusError(C.maxc_create_borrowed_pinned(dtypeOf[T]().c(), cInt64s(shape),
		C.int32_t(len(shape)), cInt64s(strides), unsafe.Pointer(&data[base]), C.uintptr_t(handle), &p))
	runtime.KeepAlive(shape)
	runtime.KeepAlive(strides)
	if err != nil {
		// On failure the library never calls release: unpin here.
		unpinHandle(handle)
		return nil, err
	}
	return wrapTensor(p), nil
}

// elementCount is the product of shape, refusing negative dims and overflow: the library
// cannot check a borrowed buffer's length, so a wrong shape would read past the slice.
func elementCount(method string, shape []int64) (int64, error) {
	count := int64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, newError(CodeInvalidArgument, "%s: dim %d of shape %v is negative", method, i, shape)
		}
		if d != 0 && count > math.MaxInt64/d {
			return 0, newError(CodeInvalidArgument, "%s: shape %v is too large", method, shape)
		}
		count *= d
	}
	return count, nil
}

// stridedSpan checks that a non-empty view of shape and strides stays inside a slice of n
// elements and gives the index of its element (0, 0, ...): the lowest element it reaches is
// data[0]. Each step is bounded by n before it is added, so nothing overflows.
func stridedSpan(n int, shape, strides []int64) (int, error) {
	var low, high int64 // offsets of the lowest and highest element from element (0, ...)
	for i, d := range shape {
		s := strides[i]
		if d == 1 || s == 0 {
			continue
		}
		if s == math.MinInt64 || d-1 > int64(n)/abs64(s) {
			return 0, newError(CodeInvalidArgument, "BorrowStrided: dim %d (size %d, stride %d) reaches past the slice of %d elements", i, d, s, n)
		}
		if s > 0 {
			high += (d - 1) * s
		} else {
			low += (d - 1) * s
		}
		if high-low >= int64(n) {
			return 0, newError(CodeInvalidArgument, "BorrowStrided: shape %v with strides %v spans %d elements but the slice has %d", shape, strides, high-low+1, n)
		}
	}
	if n == 0 { // every dim had size 1 or stride 0: one element, which an empty slice lacks
		return 0, newError(CodeInvalidArgument, "BorrowStrided: shape %v needs an element but the slice is empty", shape)
	}
	return int(-low), nil
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func unpinHandle(h cgo.Handle) {
	h.Value().(*runtime.Pinner).Unpin()
	h.Delete()
	livePins.Add(-1)
}

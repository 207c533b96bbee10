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
                                                 int32_t rank, void* data, uintptr_t handle,
                                                 max_tensor_t** out) {
  return max_tensor_create_borrowed(dtype, dims, rank, NULL, data, 0, maxc_unpin,
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
func Borrow[T Element](data []T, shape []int64) (*Tensor, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	if err := checkElementCount(len(data), shape); err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return Zeros(dtypeOf[T](), shape) // nothing to borrow
	}
	pinner := new(runtime.Pinner)
	pinner.Pin(&data[0])
	livePins.Add(1)
	handle := cgo.NewHandle(pinner)
	var p *C.max_tensor_t
	err := statusError(C.maxc_create_borrowed_pinned(dtypeOf[T]().c(), cInt64s(shape),
		C.int32_t(len(shape)), unsafe.Pointer(&data[0]), C.uintptr_t(handle), &p))
	runtime.KeepAlive(shape)
	if err != nil {
		// On failure the library never calls release: unpin here.
		unpinHandle(handle)
		return nil, err
	}
	return wrapTensor(p), nil
}

// checkElementCount refuses a shape that does not cover exactly n elements: the library
// cannot check a borrowed buffer's length, so a bigger shape would read past the slice.
func checkElementCount(n int, shape []int64) error {
	count := int64(1)
	for i, d := range shape {
		if d < 0 {
			return newError(CodeInvalidArgument, "Borrow: dim %d of shape %v is negative", i, shape)
		}
		if d != 0 && count > math.MaxInt64/d {
			return newError(CodeInvalidArgument, "Borrow: shape %v is too large", shape)
		}
		count *= d
	}
	if count != int64(n) {
		return newError(CodeInvalidArgument, "Borrow: shape %v holds %d elements but the slice has %d", shape, count, n)
	}
	return nil
}

func unpinHandle(h cgo.Handle) {
	h.Value().(*runtime.Pinner).Unpin()
	h.Delete()
	livePins.Add(-1)
}

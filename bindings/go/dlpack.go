package maxc

/*
#include <stdlib.h>
#include <max_c.h>

// cgo cannot call a C function pointer, so the deleters are called from here.
static void maxc_dlpack_delete(DLManagedTensorVersioned* m) {
  if (m != NULL && m->deleter != NULL) m->deleter(m);
}
static void maxc_dlpack_delete_unversioned(DLManagedTensor* m) {
  if (m != NULL && m->deleter != NULL) m->deleter(m);
}
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// DLPack device types (DLDeviceType) this package names; others pass through as numbers.
const (
	DLCPU  int32 = 1
	DLCUDA int32 = 2
	DLROCM int32 = 10
)

// DLPackTensor owns one DLManagedTensorVersioned (DLPack ≥ 1.0), which lives in C memory:
// exchanging it with another library passes no Go pointer. Close calls its deleter exactly
// once (a finalizer does it for a forgotten one); giving it to FromDLPack or taking it with
// Release hands that duty on. Safe for concurrent use.
type DLPackTensor struct {
	mu sync.Mutex
	p  *C.DLManagedTensorVersioned
}

func wrapDLPack(p *C.DLManagedTensorVersioned) *DLPackTensor {
	d := &DLPackTensor{p: p}
	runtime.SetFinalizer(d, func(d *DLPackTensor) { d.Close() })
	return d
}

// AdoptDLPack takes ownership of a producer's DLManagedTensorVersioned*, given as a C
// pointer (never Go memory): the result calls its deleter once, unless it is imported or
// released. nil gives nil.
func AdoptDLPack(managed unsafe.Pointer) *DLPackTensor {
	if managed == nil {
		return nil
	}
	return wrapDLPack((*C.DLManagedTensorVersioned)(managed))
}

// ToDLPack exports the tensor to DLPack 1.x, sharing its memory (no copy); shape and
// strides are always filled and a read-only tensor sets the read-only flag. The tensor
// handle may be closed before or after the export.
func (t *Tensor) ToDLPack() (*DLPackTensor, error) {
	p, err := t.retain("ToDLPack")
	if err != nil {
		return nil, err
	}
	defer C.max_tensor_release(p)
	var m *C.DLManagedTensorVersioned
	if err := statusError(C.max_tensor_to_dlpack(p, &m)); err != nil {
		return nil, err
	}
	return wrapDLPack(m), nil
}

// FromDLPack imports a DLPack tensor without copying. On success the new Tensor owns the
// struct (its deleter runs once, when the last view of the memory goes away) and d becomes
// empty; on failure d is left as it was and still owned by the caller (close it). Errors:
// INVALID_ARGUMENT or UNIMPLEMENTED naming an unsupported version, device, dtype or lanes;
// FAILED_PRECONDITION for an empty d.
func FromDLPack(d *DLPackTensor) (*Tensor, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	if err := d.lock("FromDLPack"); err != nil {
		return nil, err
	}
	defer d.mu.Unlock()
	var t *C.max_tensor_t
	if err := statusError(C.max_tensor_from_dlpack(d.p, &t)); err != nil {
		return nil, err
	}
	d.p = nil
	runtime.SetFinalizer(d, nil)
	return wrapTensor(t), nil
}

func (d *DLPackTensor) lock(method string) error {
	if d == nil {
		return closedError("DLPackTensor", method)
	}
	d.mu.Lock()
	if d.p == nil {
		d.mu.Unlock()
		return closedError("DLPackTensor", method)
	}
	return nil
}

// Close calls the deleter (once) unless ownership was handed on. It is idempotent.
func (d *DLPackTensor) Close() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p != nil {
		C.maxc_dlpack_delete(d.p)
		d.p = nil
		runtime.SetFinalizer(d, nil)
	}
	return nil
}

// Release gives up ownership and returns the DLManagedTensorVersioned* (C memory) for
// another consumer, which must call its deleter; nil when already empty.
func (d *DLPackTensor) Release() unsafe.Pointer {
	if d.lock("Release") != nil {
		return nil
	}
	defer d.mu.Unlock()
	p := unsafe.Pointer(d.p)
	d.p = nil
	runtime.SetFinalizer(d, nil)
	return p
}

// Pointer is the DLManagedTensorVersioned* without giving up ownership (nil when empty).
func (d *DLPackTensor) Pointer() unsafe.Pointer {
	if d.lock("Pointer") != nil {
		return nil
	}
	defer d.mu.Unlock()
	return unsafe.Pointer(d.p)
}

// DLPackInfo is what a DLPack tensor describes, copied into Go values.
type DLPackInfo struct {
	Version    [2]uint32 // major, minor; zero for an unversioned (pre-1.0) struct
	DeviceType int32     // DLCPU, DLCUDA, ...
	DeviceID   int32
	Code       uint8 // DLDataTypeCode
	Bits       uint8
	Lanes      uint16
	Shape      []int64
	Strides    []int64 // in elements; nil when the producer left them out (row-major)
	ByteOffset uint64
	ReadOnly   bool // only versioned structs carry the flag
}

// Info reads the struct's fields.
func (d *DLPackTensor) Info() (DLPackInfo, error) {
	if err := d.lock("Info"); err != nil {
		return DLPackInfo{}, err
	}
	defer d.mu.Unlock()
	m := d.p
	info := dlTensorInfo(&m.dl_tensor)
	info.Version = [2]uint32{uint32(m.version.major), uint32(m.version.minor)}
	info.ReadOnly = m.flags&C.DLPACK_FLAG_BITMASK_READ_ONLY != 0
	return info, nil
}

// dlTensorInfo copies a DLTensor's fields (the pointers it holds are only read here).
func dlTensorInfo(dl *C.DLTensor) DLPackInfo {
	info := DLPackInfo{
		DeviceType: int32(dl.device.device_type),
		DeviceID:   int32(dl.device.device_id),
		Code:       uint8(dl.dtype.code),
		Bits:       uint8(dl.dtype.bits),
		Lanes:      uint16(dl.dtype.lanes),
		ByteOffset: uint64(dl.byte_offset),
		Shape:      []int64{},
	}
	n := int(dl.ndim)
	if n > 0 && dl.shape != nil {
		info.Shape = append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(dl.shape)), n)...)
	}
	if n > 0 && dl.strides != nil {
		info.Strides = append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(dl.strides)), n)...)
	}
	return info
}

// ---- the unversioned DLManagedTensor (DLPack < 1.0) ----

// DLPackUnversionedTensor owns one unversioned DLManagedTensor, the struct of DLPack before
// 1.0 that older producers and consumers still exchange (no version, no read-only flag). It
// lives in C memory and follows DLPackTensor's rules: Close calls its deleter exactly once
// (a finalizer does it for a forgotten one); FromDLPackUnversioned or Release hands that
// duty on. Safe for concurrent use.
type DLPackUnversionedTensor struct {
	mu sync.Mutex
	p  *C.DLManagedTensor
}

func wrapDLPackUnversioned(p *C.DLManagedTensor) *DLPackUnversionedTensor {
	d := &DLPackUnversionedTensor{p: p}
	runtime.SetFinalizer(d, func(d *DLPackUnversionedTensor) { d.Close() })
	return d
}

// AdoptDLPackUnversioned takes ownership of a producer's DLManagedTensor*, given as a C
// pointer (never Go memory): the result calls its deleter once, unless it is imported or
// released. nil gives nil.
func AdoptDLPackUnversioned(managed unsafe.Pointer) *DLPackUnversionedTensor {
	if managed == nil {
		return nil
	}
	return wrapDLPackUnversioned((*C.DLManagedTensor)(managed))
}

// ToDLPackUnversioned exports the tensor as an unversioned DLManagedTensor sharing its
// memory, for consumers older than DLPack 1.0. A read-only tensor cannot say so in this
// struct; prefer ToDLPack where the consumer takes DLPack 1.x.
func (t *Tensor) ToDLPackUnversioned() (*DLPackUnversionedTensor, error) {
	p, err := t.retain("ToDLPackUnversioned")
	if err != nil {
		return nil, err
	}
	defer C.max_tensor_release(p)
	var m *C.DLManagedTensor
	if err := statusError(C.max_tensor_to_dlpack_unversioned(p, &m)); err != nil {
		return nil, err
	}
	return wrapDLPackUnversioned(m), nil
}

// FromDLPackUnversioned imports an unversioned DLPack tensor without copying, with
// FromDLPack's ownership rules: on success the new Tensor owns the struct and d becomes
// empty; on failure d is left as it was. Errors: INVALID_ARGUMENT or UNIMPLEMENTED naming an
// unsupported device, dtype or lanes; FAILED_PRECONDITION for an empty d.
func FromDLPackUnversioned(d *DLPackUnversionedTensor) (*Tensor, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	if err := d.lock("FromDLPackUnversioned"); err != nil {
		return nil, err
	}
	defer d.mu.Unlock()
	var t *C.max_tensor_t
	if err := statusError(C.max_tensor_from_dlpack_unversioned(d.p, &t)); err != nil {
		return nil, err
	}
	d.p = nil
	runtime.SetFinalizer(d, nil)
	return wrapTensor(t), nil
}

func (d *DLPackUnversionedTensor) lock(method string) error {
	if d == nil {
		return closedError("DLPackUnversionedTensor", method)
	}
	d.mu.Lock()
	if d.p == nil {
		d.mu.Unlock()
		return closedError("DLPackUnversionedTensor", method)
	}
	return nil
}

// Close calls the deleter (once) unless ownership was handed on. It is idempotent.
func (d *DLPackUnversionedTensor) Close() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p != nil {
		C.maxc_dlpack_delete_unversioned(d.p)
		d.p = nil
		runtime.SetFinalizer(d, nil)
	}
	return nil
}

// Release gives up ownership and returns the DLManagedTensor* (C memory) for another
// consumer, which must call its deleter; nil when already empty.
func (d *DLPackUnversionedTensor) Release() unsafe.Pointer {
	if d.lock("Release") != nil {
		return nil
	}
	defer d.mu.Unlock()
	p := unsafe.Pointer(d.p)
	d.p = nil
	runtime.SetFinalizer(d, nil)
	return p
}

// Pointer is the DLManagedTensor* without giving up ownership (nil when empty).
func (d *DLPackUnversionedTensor) Pointer() unsafe.Pointer {
	if d.lock("Pointer") != nil {
		return nil
	}
	defer d.mu.Unlock()
	return unsafe.Pointer(d.p)
}

// Info reads the struct's fields (Version is zero and ReadOnly false: the struct has
// neither).
func (d *DLPackUnversionedTensor) Info() (DLPackInfo, error) {
	if err := d.lock("Info"); err != nil {
		return DLPackInfo{}, err
	}
	defer d.mu.Unlock()
	return dlTensorInfo(&d.p.dl_tensor), nil
}

// DLPackDevice is the tensor's DLPack device (type and id), as __dlpack_device__ gives.
func (t *Tensor) DLPackDevice() (deviceType, deviceID int32, err error) {
	dev, err := tensorQuery(t, "DLPackDevice", func(p *C.max_tensor_t, o *C.DLDevice) *C.max_status_t {
		return C.max_tensor_dlpack_device(p, o)
	})
	return int32(dev.device_type), int32(dev.device_id), err
}

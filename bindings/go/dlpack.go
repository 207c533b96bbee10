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
type DLPackTensor struct{ o *dlpackOwner }

func wrapDLPack(p unsafe.Pointer) *DLPackTensor {
	return &DLPackTensor{newDLPackOwner(p, func(p unsafe.Pointer) {
		C.maxc_dlpack_delete((*C.DLManagedTensorVersioned)(p))
	})}
}

// owner lets a nil DLPackTensor read as an empty one.
func (d *DLPackTensor) owner() *dlpackOwner {
	if d == nil {
		return nil
	}
	return d.o
}

// AdoptDLPack takes ownership of a producer's DLManagedTensorVersioned*, given as a C
// pointer (never Go memory): the result calls its deleter once, unless it is imported or
// released. nil gives nil.
func AdoptDLPack(managed unsafe.Pointer) *DLPackTensor {
	if managed == nil {
		return nil
	}
	return wrapDLPack(managed)
}

// ToDLPack exports the tensor to DLPack 1.x, sharing its memory (no copy); shape and
// strides are always filled and a read-only tensor sets the read-only flag. The tensor
// handle may be closed before or after the export.
func (t *Tensor) ToDLPack() (*DLPackTensor, error) {
	m, err := exportDLPack(t, "ToDLPack", func(p *C.max_tensor_t, m **C.DLManagedTensorVersioned) *C.max_status_t {
		return C.max_tensor_to_dlpack(p, m)
	})
	if err != nil {
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
	return d.owner().importTensor("DLPackTensor", "FromDLPack", func(m unsafe.Pointer, t **C.max_tensor_t) *C.max_status_t {
		return C.max_tensor_from_dlpack((*C.DLManagedTensorVersioned)(m), t)
	})
}

// Close calls the deleter (once) unless ownership was handed on. It is idempotent.
func (d *DLPackTensor) Close() error {
	d.owner().close()
	return nil
}

// Release gives up ownership and returns the DLManagedTensorVersioned* (C memory) for
// another consumer, which must call its deleter; nil when already empty.
func (d *DLPackTensor) Release() unsafe.Pointer { return d.owner().release() }

// Pointer is the DLManagedTensorVersioned* without giving up ownership (nil when empty).
func (d *DLPackTensor) Pointer() unsafe.Pointer { return d.owner().pointer() }

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
	return d.owner().info("DLPackTensor", func(p unsafe.Pointer) DLPackInfo {
		m := (*C.DLManagedTensorVersioned)(p)
		info := dlTensorInfo(&m.dl_tensor)
		info.Version = [2]uint32{uint32(m.version.major), uint32(m.version.minor)}
		info.ReadOnly = m.flags&C.DLPACK_FLAG_BITMASK_READ_ONLY != 0
		return info
	})
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
type DLPackUnversionedTensor struct{ o *dlpackOwner }

func wrapDLPackUnversioned(p unsafe.Pointer) *DLPackUnversionedTensor {
	return &DLPackUnversionedTensor{newDLPackOwner(p, func(p unsafe.Pointer) {
		C.maxc_dlpack_delete_unversioned((*C.DLManagedTensor)(p))
	})}
}

// owner lets a nil DLPackUnversionedTensor read as an empty one.
func (d *DLPackUnversionedTensor) owner() *dlpackOwner {
	if d == nil {
		return nil
	}
	return d.o
}

// AdoptDLPackUnversioned takes ownership of a producer's DLManagedTensor*, given as a C
// pointer (never Go memory): the result calls its deleter once, unless it is imported or
// released. nil gives nil.
func AdoptDLPackUnversioned(managed unsafe.Pointer) *DLPackUnversionedTensor {
	if managed == nil {
		return nil
	}
	return wrapDLPackUnversioned(managed)
}

// ToDLPackUnversioned exports the tensor as an unversioned DLManagedTensor sharing its
// memory, for consumers older than DLPack 1.0. A read-only tensor cannot say so in this
// struct; prefer ToDLPack where the consumer takes DLPack 1.x.
func (t *Tensor) ToDLPackUnversioned() (*DLPackUnversionedTensor, error) {
	m, err := exportDLPack(t, "ToDLPackUnversioned", func(p *C.max_tensor_t, m **C.DLManagedTensor) *C.max_status_t {
		return C.max_tensor_to_dlpack_unversioned(p, m)
	})
	if err != nil {
		return nil, err
	}
	return wrapDLPackUnversioned(m), nil
}

// FromDLPackUnversioned imports an unversioned DLPack tensor without copying, with
// FromDLPack's ownership rules: on success the new Tensor owns the struct and d becomes
// empty; on failure d is left as it was. Errors: INVALID_ARGUMENT or UNIMPLEMENTED naming an
// unsupported device, dtype or lanes; FAILED_PRECONDITION for an empty d.
func FromDLPackUnversioned(d *DLPackUnversionedTensor) (*Tensor, error) {
	return d.owner().importTensor("DLPackUnversionedTensor", "FromDLPackUnversioned",
		func(m unsafe.Pointer, t **C.max_tensor_t) *C.max_status_t {
			return C.max_tensor_from_dlpack_unversioned((*C.DLManagedTensor)(m), t)
		})
}

// Close calls the deleter (once) unless ownership was handed on. It is idempotent.
func (d *DLPackUnversionedTensor) Close() error {
	d.owner().close()
	return nil
}

// Release gives up ownership and returns the DLManagedTensor* (C memory) for another
// consumer, which must call its deleter; nil when already empty.
func (d *DLPackUnversionedTensor) Release() unsafe.Pointer { return d.owner().release() }

// Pointer is the DLManagedTensor* without giving up ownership (nil when empty).
func (d *DLPackUnversionedTensor) Pointer() unsafe.Pointer { return d.owner().pointer() }

// Info reads the struct's fields (Version is zero and ReadOnly false: the struct has
// neither).
func (d *DLPackUnversionedTensor) Info() (DLPackInfo, error) {
	return d.owner().info("DLPackUnversionedTensor", func(p unsafe.Pointer) DLPackInfo {
		return dlTensorInfo(&(*C.DLManagedTensor)(p).dl_tensor)
	})
}

// ---- what both kinds share ----

// dlpackOwner holds one DLPack struct of either kind in C memory and runs its deleter at
// most once. It is reachable only through its DLPackTensor or DLPackUnversionedTensor, so
// its finalizer runs when that one is dropped. A nil owner reads as empty.
type dlpackOwner struct {
	mu     sync.Mutex
	p      unsafe.Pointer // nil once deleted or handed on
	delete func(unsafe.Pointer)
}

func newDLPackOwner(p unsafe.Pointer, del func(unsafe.Pointer)) *dlpackOwner {
	o := &dlpackOwner{p: p, delete: del}
	runtime.SetFinalizer(o, (*dlpackOwner).close)
	return o
}

// exportDLPack runs a C export on a retained handle, so that t may be closed meanwhile.
func exportDLPack[M any](t *Tensor, method string, export func(*C.max_tensor_t, **M) *C.max_status_t) (unsafe.Pointer, error) {
	p, err := t.retain(method)
	if err != nil {
		return nil, err
	}
	defer C.max_tensor_release(p)
	var m *M
	if err := statusError(export(p, &m)); err != nil {
		return nil, err
	}
	return unsafe.Pointer(m), nil
}

// lock locks a non-empty owner; kind is the Go type an error names.
func (o *dlpackOwner) lock(kind, method string) error {
	if o == nil {
		return closedError(kind, method)
	}
	o.mu.Lock()
	if o.p == nil {
		o.mu.Unlock()
		return closedError(kind, method)
	}
	return nil
}

// disown forgets the struct without deleting it, for whoever took it over. Callers hold o.mu.
func (o *dlpackOwner) disown() unsafe.Pointer {
	p := o.p
	o.p = nil
	runtime.SetFinalizer(o, nil)
	return p
}

// importTensor hands the struct to a C import, keeping it if the import fails.
func (o *dlpackOwner) importTensor(kind, method string, from func(unsafe.Pointer, **C.max_tensor_t) *C.max_status_t) (*Tensor, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	if err := o.lock(kind, method); err != nil {
		return nil, err
	}
	defer o.mu.Unlock()
	var t *C.max_tensor_t
	if err := statusError(from(o.p, &t)); err != nil {
		return nil, err
	}
	o.disown()
	return wrapTensor(t), nil
}

func (o *dlpackOwner) close() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.p != nil {
		o.delete(o.disown())
	}
}

func (o *dlpackOwner) release() unsafe.Pointer {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.disown()
}

func (o *dlpackOwner) pointer() unsafe.Pointer {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.p
}

// info reads the struct under the lock, so a concurrent Close cannot free it meanwhile.
func (o *dlpackOwner) info(kind string, read func(unsafe.Pointer) DLPackInfo) (DLPackInfo, error) {
	if err := o.lock(kind, "Info"); err != nil {
		return DLPackInfo{}, err
	}
	defer o.mu.Unlock()
	return read(o.p), nil
}

// DLPackDevice is the tensor's DLPack device (type and id), as __dlpack_device__ gives.
func (t *Tensor) DLPackDevice() (deviceType, deviceID int32, err error) {
	dev, err := tensorQuery(t, "DLPackDevice", func(p *C.max_tensor_t, o *C.DLDevice) *C.max_status_t {
		return C.max_tensor_dlpack_device(p, o)
	})
	return int32(dev.device_type), int32(dev.device_id), err
}

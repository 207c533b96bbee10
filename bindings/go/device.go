package maxc

/*
#include <stdlib.h>
#include <max_c.h>
*/
import "C"

import (
	"runtime"
	"sync"
)

// DeviceKind is the kind of a device.
type DeviceKind int32

const (
	DeviceCPU  DeviceKind = 1
	DeviceCUDA DeviceKind = 2
	DeviceHIP  DeviceKind = 3
)

// Device is a CPU or an accelerator. Devices are thread-safe.
type Device struct {
	mu sync.RWMutex
	p  *C.max_device_t
}

func wrapDevice(p *C.max_device_t) *Device {
	d := &Device{p: p}
	runtime.SetFinalizer(d, func(d *Device) { d.Close() })
	return d
}

// NewDevice gets the device of a kind and id (-1: the first / the host).
func NewDevice(kind DeviceKind, id int) (*Device, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	var p *C.max_device_t
	if err := statusError(C.max_device_create(C.max_device_kind_t(kind), C.int32_t(id), &p)); err != nil {
		return nil, err
	}
	return wrapDevice(p), nil
}

// CPU is the host device.
func CPU() (*Device, error) { return NewDevice(DeviceCPU, -1) }

// AcceleratorCount is the number of accelerators this process can use.
func AcceleratorCount() (int, error) {
	if err := CheckABI(); err != nil {
		return 0, err
	}
	var n C.int32_t
	if err := statusError(C.max_accelerator_count(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

func (d *Device) rlock(method string) error {
	if d == nil {
		return closedError("Device", method)
	}
	d.mu.RLock()
	if d.p == nil {
		d.mu.RUnlock()
		return closedError("Device", method)
	}
	return nil
}

// Close releases the device handle. It is idempotent.
func (d *Device) Close() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p != nil {
		C.max_device_release(d.p)
		d.p = nil
		runtime.SetFinalizer(d, nil)
	}
	return nil
}

// Kind is the device's kind.
func (d *Device) Kind() (DeviceKind, error) {
	if err := d.rlock("Kind"); err != nil {
		return 0, err
	}
	defer d.mu.RUnlock()
	var k C.max_device_kind_t
	err := statusError(C.max_device_kind(d.p, &k))
	return DeviceKind(k), err
}

// ID is the zero-based device id (0 for the CPU).
func (d *Device) ID() (int, error) {
	if err := d.rlock("ID"); err != nil {
		return 0, err
	}
	defer d.mu.RUnlock()
	var id C.int32_t
	err := statusError(C.max_device_id(d.p, &id))
	return int(id), err
}

// Label is "cpu" or "gpu".
func (d *Device) Label() (string, error) {
	if err := d.rlock("Label"); err != nil {
		return "", err
	}
	defer d.mu.RUnlock()
	var s *C.char
	if err := statusError(C.max_device_label(d.p, &s)); err != nil {
		return "", err
	}
	return C.GoString(s), nil
}

// API is "cpu", "cuda" or "hip".
func (d *Device) API() (string, error) {
	if err := d.rlock("API"); err != nil {
		return "", err
	}
	defer d.mu.RUnlock()
	var s *C.char
	if err := statusError(C.max_device_api(d.p, &s)); err != nil {
		return "", err
	}
	return C.GoString(s), nil
}

// IsHost reports whether this is the host.
func (d *Device) IsHost() (bool, error) {
	if err := d.rlock("IsHost"); err != nil {
		return false, err
	}
	defer d.mu.RUnlock()
	var v C.int32_t
	err := statusError(C.max_device_is_host(d.p, &v))
	return v != 0, err
}

// Synchronize waits for every operation queued on the device.
func (d *Device) Synchronize() error {
	if err := d.rlock("Synchronize"); err != nil {
		return err
	}
	defer d.mu.RUnlock()
	return statusError(C.max_device_synchronize(d.p))
}

// Context is MAX's InferenceSession: the devices and thread team models run on. It is
// thread-safe.
type Context struct {
	mu sync.RWMutex
	p  *C.max_context_t
}

// NewContext creates a context on the CPU with numThreads threads (0: one per core).
func NewContext(numThreads int) (*Context, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	var opts C.max_context_options_t
	if err := statusError(C.max_context_options_init(&opts, C.size_t(C.sizeof_max_context_options_t))); err != nil {
		return nil, err
	}
	opts.num_threads = C.int32_t(numThreads)
	var p *C.max_context_t
	if err := statusError(C.max_context_create(&opts, &p)); err != nil {
		return nil, err
	}
	c := &Context{p: p}
	runtime.SetFinalizer(c, func(c *Context) { c.Close() })
	return c, nil
}

func (c *Context) rlock(method string) error {
	if c == nil {
		return closedError("Context", method)
	}
	c.mu.RLock()
	if c.p == nil {
		c.mu.RUnlock()
		return closedError("Context", method)
	}
	return nil
}

// Close releases the context. It is idempotent.
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p != nil {
		C.max_context_release(c.p)
		c.p = nil
		runtime.SetFinalizer(c, nil)
	}
	return nil
}

// NumThreads is the size of the context's thread team.
func (c *Context) NumThreads() (int, error) {
	if err := c.rlock("NumThreads"); err != nil {
		return 0, err
	}
	defer c.mu.RUnlock()
	var n C.int32_t
	err := statusError(C.max_context_num_threads(c.p, &n))
	return int(n), err
}

// Devices gives new handles to the context's devices; the caller closes them.
func (c *Context) Devices() ([]*Device, error) {
	if err := c.rlock("Devices"); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	var n C.size_t
	if err := statusError(C.max_context_num_devices(c.p, &n)); err != nil {
		return nil, err
	}
	out := make([]*Device, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		var d *C.max_device_t
		if err := statusError(C.max_context_device(c.p, i, &d)); err != nil {
			for _, x := range out {
				x.Close()
			}
			return nil, err
		}
		out = append(out, wrapDevice(d))
	}
	return out, nil
}

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

// Attrs is a builder of op attributes (a name -> typed value map). Setters chain; the first
// failure sticks and is returned by Err and by Graph.AddOp.
type Attrs struct {
	mu     sync.Mutex
	p      *C.max_attrs_t
	err    error
	closed bool
}

// NewAttrs is an empty attribute map.
func NewAttrs() *Attrs {
	a := &Attrs{}
	if err := CheckABI(); err != nil {
		a.err = err
		return a
	}
	if err := statusError(C.max_attrs_create(&a.p)); err != nil {
		a.err = err
		return a
	}
	runtime.SetFinalizer(a, func(a *Attrs) { a.Close() })
	return a
}

func (a *Attrs) lock(method string) error {
	if a == nil {
		return closedError("Attrs", method)
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return closedError("Attrs", method)
	}
	return nil
}

// Err is the first failure of a setter (or of creation), nil if none.
func (a *Attrs) Err() error {
	if err := a.lock("Err"); err != nil {
		return err
	}
	defer a.mu.Unlock()
	return a.err
}

// Close releases the attributes. It is idempotent.
func (a *Attrs) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.p != nil {
		C.max_attrs_release(a.p)
		a.p = nil
		runtime.SetFinalizer(a, nil)
	}
	a.closed = true
	return nil
}

func (a *Attrs) set(method, name string, f func(*C.max_attrs_t, *C.char) *C.max_status_t) *Attrs {
	if err := a.lock(method); err != nil {
		return a // closed: Err and Graph.AddOp report it
	}
	defer a.mu.Unlock()
	if a.err != nil {
		return a
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	a.err = statusError(f(a.p, cn))
	return a
}

func (a *Attrs) Int(name string, v int64) *Attrs {
	return a.set("Int", name, func(p *C.max_attrs_t, n *C.char) *C.max_status_t {
		return C.max_attrs_set_int(p, n, C.int64_t(v))
	})
}

func (a *Attrs) Float(name string, v float64) *Attrs {
	return a.set("Float", name, func(p *C.max_attrs_t, n *C.char) *C.max_status_t {
		return C.max_attrs_set_float(p, n, C.double(v))
	})
}

func (a *Attrs) Bool(name string, v bool) *Attrs {
	var i C.int32_t
	if v {
		i = 1
	}
	return a.set("Bool", name, func(p *C.max_attrs_t, n *C.char) *C.max_status_t {
		return C.max_attrs_set_bool(p, n, i)
	})
}

func (a *Attrs) Str(name string, v string) *Attrs {
	return a.set("Str", name, func(p *C.max_attrs_t, n *C.char) *C.max_status_t {
		cv := C.CString(v)
		defer C.free(unsafe.Pointer(cv))
		return C.max_attrs_set_string(p, n, cv)
	})
}

func (a *Attrs) DType(name string, v DType) *Attrs {
	return a.set("DType", name, func(p *C.max_attrs_t, n *C.char) *C.max_status_t {
		return C.max_attrs_set_dtype(p, n, v.c())
	})
}

func (a *Attrs) Ints(name string, v []int64) *Attrs {
	return a.set("Ints", name, func(p *C.max_attrs_t, n *C.char) *C.max_status_t {
		s := C.max_attrs_set_ints(p, n, cInt64s(v), C.size_t(len(v)))
		runtime.KeepAlive(v)
		return s
	})
}

func (a *Attrs) Floats(name string, v []float64) *Attrs {
	return a.set("Floats", name, func(p *C.max_attrs_t, n *C.char) *C.max_status_t {
		var ptr *C.double
		if len(v) > 0 {
			ptr = (*C.double)(unsafe.Pointer(&v[0]))
		}
		s := C.max_attrs_set_floats(p, n, ptr, C.size_t(len(v)))
		runtime.KeepAlive(v)
		return s
	})
}

func (a *Attrs) Dims(name string, v []Dim) *Attrs {
	return a.set("Dims", name, func(p *C.max_attrs_t, n *C.char) *C.max_status_t {
		cd := newCDimArray(v)
		defer cd.free()
		return C.max_attrs_set_dims(p, n, cd.arr, C.size_t(len(v)))
	})
}

func (a *Attrs) Graph(name string, subgraphIndex int64) *Attrs {
	return a.set("Graph", name, func(p *C.max_attrs_t, n *C.char) *C.max_status_t {
		return C.max_attrs_set_graph(p, n, C.int64_t(subgraphIndex))
	})
}

func (a *Attrs) Device(name string, d DeviceRef) *Attrs {
	return a.set("Device", name, func(p *C.max_attrs_t, n *C.char) *C.max_status_t {
		return C.max_attrs_set_device(p, n, d.kind(), C.int32_t(d.ID))
	})
}

package maxc

// ABI 1.5: model files placed on a device (CompileOptions.FileDevice) and constants placed on
// a device (Graph.AddConstantOn). Both are used only when asked for, so the package keeps
// working with a 1.4 library: the new function is looked up at run time instead of linked
// (a 1.4 library's symbol table lacks it), and the new struct field stays zero unless set,
// which a 1.4 library accepts as the tail of a newer struct.

/*
#cgo linux LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <max_c.h>

typedef max_status_t* (*maxc_add_constant_on_fn)(max_graph_t*, const max_tensor_t*,
                                                  max_device_ref_kind_t, int32_t, max_value_t**);

// max_graph_add_constant_on from the loaded library, or NULL. RTLD_DEFAULT searches this
// object's scope, which holds libmax_c.
static void* maxc_lookup_add_constant_on(void) {
  return dlsym(RTLD_DEFAULT, "max_graph_add_constant_on");
}

static max_status_t* maxc_add_constant_on(void* fn, max_graph_t* graph, const max_tensor_t* tensor,
                                          max_device_ref_kind_t kind, int32_t id, max_value_t** out) {
  return ((maxc_add_constant_on_fn)fn)(graph, tensor, kind, id, out);
}

// Sets options->file_device; 0 when the header this package is built with predates it.
static int maxc_set_file_device(max_compile_options_t* options, const max_device_t* device) {
#if MAX_ABI_VERSION_MAJOR == 1 && MAX_ABI_VERSION_MINOR >= 5
  options->file_device = device;
  return 1;
#else
  (void)options;
  (void)device;
  return 0;
#endif
}
*/
import "C"

import (
	"sync"
	"unsafe"
)

// requireABIMinor is an UNIMPLEMENTED *Error unless the loaded library has ABI 1.minor.
func requireABIMinor(minor uint32, what string) error {
	if err := CheckABI(); err != nil {
		return err
	}
	have := LibraryABIVersion()
	if have>>16 == 1 && have&0xFFFF >= minor {
		return nil
	}
	return newError(CodeUnimplemented, "%s needs libmax_c ABI 1.%d; the loaded library has ABI %d.%d",
		what, minor, have>>16, have&0xFFFF)
}

var addConstantOn struct {
	once sync.Once
	fn   unsafe.Pointer
}

// addConstantOnFn is max_graph_add_constant_on, after checking that the library has it.
func addConstantOnFn() (unsafe.Pointer, error) {
	if err := requireABIMinor(5, "a constant placed on a device (max_graph_add_constant_on)"); err != nil {
		return nil, err
	}
	addConstantOn.once.Do(func() { addConstantOn.fn = C.maxc_lookup_add_constant_on() })
	if addConstantOn.fn == nil {
		return nil, newError(CodeUnimplemented, "max_graph_add_constant_on is not found in the loaded libmax_c")
	}
	return addConstantOn.fn, nil
}

// AddConstantOn adds a constant holding a copy of t's elements placed on dev (ABI 1.5; MAX's
// ops.constant(value, dtype, device)): a GPU graph's scalars and tables live on its GPU, as a
// graph does not span devices. t may be on any device (its elements are read now), and no
// GPU is needed to build the graph. CPURef() is AddConstant. Errors: INVALID_ARGUMENT for a
// bad device id; UNIMPLEMENTED for another device than the host with a library older than
// ABI 1.5.
func (g *Graph) AddConstantOn(t *Tensor, dev DeviceRef) (*Value, error) {
	if dev == CPURef() {
		return g.AddConstant(t)
	}
	fn, err := addConstantOnFn()
	if err != nil {
		return nil, err
	}
	if err := g.lock("AddConstantOn"); err != nil {
		return nil, err
	}
	defer g.mu.Unlock()
	if err := t.rlock("AddConstantOn"); err != nil {
		return nil, err
	}
	defer t.mu.RUnlock()
	var v *C.max_value_t
	if err := statusError(C.maxc_add_constant_on(fn, g.p, t.p, dev.kind(), C.int32_t(dev.ID), &v)); err != nil {
		return nil, err
	}
	return g.value(v), nil
}

// setFileDevice points r.file_device at d, which the caller keeps alive and locked for the
// call that reads r.
func setFileDevice(r *C.max_compile_options_t, d *C.max_device_t) error {
	if err := requireABIMinor(5, "CompileOptions.FileDevice (a model file placed on a device)"); err != nil {
		return err
	}
	if C.maxc_set_file_device(r, d) == 0 {
		return newError(CodeUnimplemented, "CompileOptions.FileDevice: this package was built with a max_c.h older than ABI 1.5")
	}
	return nil
}

package maxc

/*
#include <stdlib.h>
#include <max_c.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// The engine (ABI 1.2): Context.Compile turns a Graph into a CompiledModel, NewModel binds
// its weights, and Model.Execute runs it (MAX's InferenceSession.load and Model.execute).
//
// Concurrency: Context, CompiledModel and Model are safe for concurrent use by multiple
// goroutines, and concurrent Execute calls on one Model run in parallel (the C library
// gives each call its own working memory). Every call takes its own reference to the C
// handles it uses, so a Close racing with a running Execute never frees memory under it:
// the running call finishes, later calls get a "closed" *Error.

// ---- compile options ----

// CompileOptions says how Compile optimizes a graph. The zero value (or a nil pointer)
// means the library's defaults: fusion and constant folding on, a 1 MiB fold limit and 16
// cached plans.
type CompileOptions struct {
	// DisableFusion turns pattern and elementwise fusion off (results stay the same).
	DisableFusion bool
	// DisableConstantFolding turns off folding of ops whose inputs are all constants.
	DisableConstantFolding bool
	// FoldLimitBytes caps the bytes constant folding may produce; 0 keeps the default (to
	// fold nothing, set DisableConstantFolding).
	FoldLimitBytes uint64
	// PlanCacheCapacity is how many execution plans (one per distinct set of concrete input
	// shapes) a compiled model keeps; 0 keeps the default.
	PlanCacheCapacity int
	// FileDevice (ABI 1.5), for CompileFile: the device, one of the context's, that
	// a model file wholly on the host (an ONNX model, which carries no placement, or a MAXG
	// file of a host graph) is moved onto before it compiles, so that it runs there (MAX's
	// InferenceSession.load(path, device=...)). nil keeps the file's own placement. Compile
	// ignores it: a graph names its own devices. CompileFile fails with FAILED_PRECONDITION
	// when the file already places a value elsewhere ("already placed on gpu:0"), and with
	// UNIMPLEMENTED on a library older than ABI 1.5 (left nil, such a library is fine).
	FileDevice *Device
}

// raw fills the C struct from the library's defaults (so a newer library's defaults win)
// and applies the fields that are set.
func (o *CompileOptions) raw() (C.max_compile_options_t, error) {
	var r C.max_compile_options_t
	if err := statusError(C.max_compile_options_init(&r, C.size_t(C.sizeof_max_compile_options_t))); err != nil {
		return r, err
	}
	if o == nil {
		return r, nil
	}
	if o.DisableFusion {
		r.enable_fusion = 0
	}
	if o.DisableConstantFolding {
		r.enable_constant_folding = 0
	}
	if o.FoldLimitBytes != 0 {
		r.fold_limit_bytes = C.uint64_t(o.FoldLimitBytes)
	}
	if o.PlanCacheCapacity != 0 {
		r.plan_cache_capacity = C.int64_t(o.PlanCacheCapacity)
	}
	return r, nil
}

// ---- compiling ----

// Compile compiles g for the context's CPU. The graph is only read: it may be changed or
// closed afterwards. opts may be nil for the defaults. Errors: INVALID_ARGUMENT for a graph
// that does not verify or has no outputs; UNIMPLEMENTED naming the op when a node has no
// CPU kernel for its dtypes.
func (c *Context) Compile(g *Graph, opts *CompileOptions) (*CompiledModel, error) {
	raw, err := opts.raw()
	if err != nil {
		return nil, err
	}
	if err := c.rlock("Compile"); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	// The graph lock keeps other goroutines from changing the graph while it is read.
	if err := g.lock("Compile"); err != nil {
		return nil, err
	}
	defer g.mu.Unlock()
	var p *C.max_compiled_model_t
	if err := statusError(C.max_context_compile(c.p, g.p, &raw, &p)); err != nil {
		return nil, err
	}
	return wrapCompiledModel(p), nil
}

// CompileFile compiles a model file: a path ending in ".onnx" is imported as an ONNX model
// (opset 7 or newer), whose initializers become the compiled model's own weights (NewModel
// binds them unless given; NewModel(nil) takes them all), anything else is read as a MAXG
// file (see Graph.Save). With opts.FileDevice set, the file is moved onto that device first.
// Errors: NOT_FOUND naming a missing file; DATA_LOSS or INVALID_ARGUMENT, with the offset,
// for a damaged one; UNIMPLEMENTED naming an ONNX node whose operator the importer does not
// know; FAILED_PRECONDITION for a FileDevice when the file already places a value elsewhere;
// and Compile's.
func (c *Context) CompileFile(path string, opts *CompileOptions) (*CompiledModel, error) {
	raw, err := opts.raw()
	if err != nil {
		return nil, err
	}
	if opts != nil && opts.FileDevice != nil {
		// The device stays locked (so not closed) while the library reads the pointer.
		d := opts.FileDevice
		if err := d.rlock("CompileFile"); err != nil {
			return nil, err
		}
		defer d.mu.RUnlock()
		if err := setFileDevice(&raw, d.p); err != nil {
			return nil, err
		}
	}
	if err := c.rlock("CompileFile"); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var p *C.max_compiled_model_t
	if err := statusError(C.max_context_compile_file(c.p, cpath, &raw, &p)); err != nil {
		return nil, err
	}
	return wrapCompiledModel(p), nil
}

// ---- tensor specs ----

// TensorSpec is the signature of one input, output or weight (MAX's TensorSpec). It is a
// plain value copied out of the library.
type TensorSpec struct {
	Name  string
	DType DType
	// Dims holds Static(n), or Sym("batch") for a symbolic dim or expression.
	Dims   []Dim
	Device DeviceRef
}

// Rank is the number of dims.
func (s TensorSpec) Rank() int { return len(s.Dims) }

// Shape is MAX's TensorSpec.shape, with -1 where a dim is symbolic (unknown until run).
func (s TensorSpec) Shape() []int64 {
	out := make([]int64, len(s.Dims))
	for i, d := range s.Dims {
		out[i] = d.Size()
	}
	return out
}

// DimNames is each dim's symbol or expression, "" where the dim is static.
func (s TensorSpec) DimNames() []string {
	out := make([]string, len(s.Dims))
	for i, d := range s.Dims {
		if !d.IsStatic() {
			out[i] = d.String()
		}
	}
	return out
}

// String is "x: [batch, 4] float32".
func (s TensorSpec) String() string {
	dims := make([]string, len(s.Dims))
	for i, d := range s.Dims {
		dims[i] = d.String()
	}
	return fmt.Sprintf("%s: [%s] %s", s.Name, strings.Join(dims, ", "), s.DType)
}

// readSpec copies a spec out of the library and releases it.
func readSpec(p *C.max_tensor_spec_t) (TensorSpec, error) {
	defer C.max_tensor_spec_release(p)
	var s TensorSpec
	var name *C.char
	if err := statusError(C.max_tensor_spec_name(p, &name)); err != nil {
		return s, err
	}
	s.Name = C.GoString(name)
	var dtype C.max_dtype_t
	if err := statusError(C.max_tensor_spec_dtype(p, &dtype)); err != nil {
		return s, err
	}
	s.DType = DType(dtype)
	dims, err := specDims(p)
	if err != nil {
		return s, err
	}
	s.Dims = dims
	s.Device, err = specDevice(p)
	return s, err
}

func specDims(p *C.max_tensor_spec_t) ([]Dim, error) {
	var rank C.size_t
	if err := statusError(C.max_tensor_spec_rank(p, &rank)); err != nil {
		return nil, err
	}
	dims := make([]Dim, int(rank))
	for a := range dims {
		var size C.int64_t
		var name *C.char
		if err := statusError(C.max_tensor_spec_dim(p, C.size_t(a), &size, &name)); err != nil {
			return nil, err
		}
		if size >= 0 {
			dims[a] = Static(int64(size))
		} else {
			dims[a] = Sym(C.GoString(name))
		}
	}
	return dims, nil
}

func specDevice(p *C.max_tensor_spec_t) (DeviceRef, error) {
	var d *C.max_device_t
	if err := statusError(C.max_tensor_spec_device(p, &d)); err != nil {
		return DeviceRef{}, err
	}
	defer C.max_device_release(d)
	var kind C.max_device_kind_t
	var id C.int32_t
	if err := statusError(C.max_device_kind(d, &kind)); err != nil {
		return DeviceRef{}, err
	}
	if err := statusError(C.max_device_id(d, &id)); err != nil {
		return DeviceRef{}, err
	}
	return DeviceRef{GPU: kind != C.MAX_DEVICE_KIND_CPU, ID: int32(id)}, nil
}

// ---- compiled models ----

// CompiledModel is a graph compiled for a context, without weights. It keeps its context
// alive; one compiled model can back many Models with different weights. Safe for
// concurrent use.
type CompiledModel struct {
	mu sync.RWMutex
	p  *C.max_compiled_model_t
}

func wrapCompiledModel(p *C.max_compiled_model_t) *CompiledModel {
	cm := &CompiledModel{p: p}
	runtime.SetFinalizer(cm, func(cm *CompiledModel) { cm.Close() })
	return cm
}

// Close releases the compiled model handle (models made from it stay valid). It is
// idempotent.
func (cm *CompiledModel) Close() error {
	if cm == nil {
		return nil
	}
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if cm.p != nil {
		C.max_compiled_model_release(cm.p)
		cm.p = nil
		runtime.SetFinalizer(cm, nil)
	}
	return nil
}

func (cm *CompiledModel) rlock(method string) error {
	if cm == nil {
		return closedError("CompiledModel", method)
	}
	cm.mu.RLock()
	if cm.p == nil {
		cm.mu.RUnlock()
		return closedError("CompiledModel", method)
	}
	return nil
}

type specCount func(*C.max_compiled_model_t, *C.size_t) *C.max_status_t
type specAt func(*C.max_compiled_model_t, C.size_t, **C.max_tensor_spec_t) *C.max_status_t

func (cm *CompiledModel) specs(method string, count specCount, at specAt) ([]TensorSpec, error) {
	if err := cm.rlock(method); err != nil {
		return nil, err
	}
	defer cm.mu.RUnlock()
	var n C.size_t
	if err := statusError(count(cm.p, &n)); err != nil {
		return nil, err
	}
	out := make([]TensorSpec, int(n))
	for i := range out {
		var p *C.max_tensor_spec_t
		if err := statusError(at(cm.p, C.size_t(i), &p)); err != nil {
			return nil, err
		}
		s, err := readSpec(p)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// Inputs are the model's inputs, in the order Execute takes them.
func (cm *CompiledModel) Inputs() ([]TensorSpec, error) {
	return cm.specs("Inputs",
		func(p *C.max_compiled_model_t, n *C.size_t) *C.max_status_t {
			return C.max_compiled_model_num_inputs(p, n)
		},
		func(p *C.max_compiled_model_t, i C.size_t, o **C.max_tensor_spec_t) *C.max_status_t {
			return C.max_compiled_model_input(p, i, o)
		})
}

// Outputs are the model's outputs, in the order Execute returns them.
func (cm *CompiledModel) Outputs() ([]TensorSpec, error) {
	return cm.specs("Outputs",
		func(p *C.max_compiled_model_t, n *C.size_t) *C.max_status_t {
			return C.max_compiled_model_num_outputs(p, n)
		},
		func(p *C.max_compiled_model_t, i C.size_t, o **C.max_tensor_spec_t) *C.max_status_t {
			return C.max_compiled_model_output(p, i, o)
		})
}

// Weights are the weights NewModel must be given, each exactly once.
func (cm *CompiledModel) Weights() ([]TensorSpec, error) {
	return cm.specs("Weights",
		func(p *C.max_compiled_model_t, n *C.size_t) *C.max_status_t {
			return C.max_compiled_model_num_weights(p, n)
		},
		func(p *C.max_compiled_model_t, i C.size_t, o **C.max_tensor_spec_t) *C.max_status_t {
			return C.max_compiled_model_weight(p, i, o)
		})
}

// NewModel binds the weights by name and gives a runnable Model (MAX's
// InferenceSession.load with a weights_registry). The model keeps the compiled model alive;
// closing the weight tensors afterwards is fine.
//
// Contiguous CPU tensors are used in place, not copied: writing to one afterwards (CopyFrom,
// a DLPack consumer) changes the model's results and races with running Executes. Pass
// t.Copy() to decouple.
//
// Errors: NOT_FOUND names a missing weight; INVALID_ARGUMENT an unknown name or a weight
// whose dtype or shape differs from its declaration.
func (cm *CompiledModel) NewModel(weights map[string]*Tensor) (*Model, error) {
	w, err := namedHandles("NewModel", "weight", weights)
	if err != nil {
		return nil, err
	}
	defer w.release()
	if err := cm.rlock("NewModel"); err != nil {
		return nil, err
	}
	defer cm.mu.RUnlock()
	var p *C.max_model_t
	if err := statusError(C.max_model_create(cm.p, w.namesPtr(), w.tensorsPtr(), w.len(), &p)); err != nil {
		return nil, err
	}
	return wrapModel(p), nil
}

// NewModel is cm.NewModel(weights).
func NewModel(cm *CompiledModel, weights map[string]*Tensor) (*Model, error) {
	return cm.NewModel(weights)
}

// ---- C arrays of tensors for one call ----

// retain gives a new reference to the tensor's C handle, taken under its read lock so a
// concurrent Close cannot release the handle mid-call. The caller releases it.
func (t *Tensor) retain(method string) (*C.max_tensor_t, error) {
	if err := t.rlock(method); err != nil {
		return nil, err
	}
	defer t.mu.RUnlock()
	C.max_tensor_retain(t.p)
	return t.p, nil
}

// cHandles holds retained tensor handles (and C strings for their names) for one call.
// Both slices live in Go memory but hold only C pointers, which cgo allows passing.
type cHandles struct {
	names   []*C.char
	tensors []*C.max_tensor_t
}

func (h *cHandles) release() {
	for _, n := range h.names {
		C.free(unsafe.Pointer(n))
	}
	for _, t := range h.tensors {
		C.max_tensor_release(t)
	}
}

func (h *cHandles) len() C.size_t { return C.size_t(len(h.tensors)) }

func (h *cHandles) namesPtr() **C.char {
	if len(h.names) == 0 {
		return nil
	}
	return &h.names[0]
}

func (h *cHandles) tensorsPtr() **C.max_tensor_t {
	if len(h.tensors) == 0 {
		return nil
	}
	return &h.tensors[0]
}

// prefixError says which argument a binding-side error is about, keeping its code.
func prefixError(err error, format string, args ...any) error {
	if e, ok := err.(*Error); ok {
		return &Error{Code: e.Code, CodeName: e.CodeName, Message: fmt.Sprintf(format, args...) + ": " + e.Message}
	}
	return err
}

// positionalHandles retains inputs in order; a nil or closed one is named by its index.
func positionalHandles(method string, inputs []*Tensor) (*cHandles, error) {
	h := &cHandles{tensors: make([]*C.max_tensor_t, 0, len(inputs))}
	for i, t := range inputs {
		p, err := t.retain(method)
		if err != nil {
			h.release()
			return nil, prefixError(err, "Model.%s: input %d", method, i)
		}
		h.tensors = append(h.tensors, p)
	}
	return h, nil
}

// namedHandles retains a map's tensors in name order (so errors are deterministic); a nil
// or closed one is named.
func namedHandles(method, what string, m map[string]*Tensor) (*cHandles, error) {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	h := &cHandles{names: make([]*C.char, 0, len(m)), tensors: make([]*C.max_tensor_t, 0, len(m))}
	for _, n := range names {
		p, err := m[n].retain(method)
		if err != nil {
			h.release()
			return nil, prefixError(err, "%s: %s %q", method, what, n)
		}
		h.tensors = append(h.tensors, p)
		h.names = append(h.names, C.CString(n))
	}
	return h, nil
}

// ---- models ----

// Model is a compiled model with its weights bound: what runs (MAX's engine.Model). It is
// safe for concurrent use by multiple goroutines: Execute calls run in parallel, also
// beside a Reload (running calls finish with the old weights).
type Model struct {
	mu sync.RWMutex
	p  *C.max_model_t
}

func wrapModel(p *C.max_model_t) *Model {
	m := &Model{p: p}
	runtime.SetFinalizer(m, func(m *Model) { m.Close() })
	return m
}

// Close releases the model handle. Executes already running finish; later calls get an
// *Error. It is idempotent.
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.p != nil {
		C.max_model_release(m.p)
		m.p = nil
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

// retain gives a new reference to the C model, so a long Execute holds no Go lock (a Close
// meanwhile only drops the Go handle's reference). The caller releases it.
func (m *Model) retain(method string) (*C.max_model_t, error) {
	if m == nil {
		return nil, closedError("Model", method)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.p == nil {
		return nil, closedError("Model", method)
	}
	C.max_model_retain(m.p)
	return m.p, nil
}

// takeOutputs wraps a returned tensor list's tensors and releases the list.
func takeOutputs(list *C.max_tensor_list_t) ([]*Tensor, error) {
	defer C.max_tensor_list_release(list)
	var n C.size_t
	if err := statusError(C.max_tensor_list_size(list, &n)); err != nil {
		return nil, err
	}
	out := make([]*Tensor, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		var t *C.max_tensor_t
		if err := statusError(C.max_tensor_list_get(list, i, &t)); err != nil {
			for _, x := range out {
				x.Close()
			}
			return nil, err
		}
		out = append(out, wrapTensor(t))
	}
	return out, nil
}

// Execute runs the model on inputs, by position, and returns new output tensors in the
// order of OutputMetadata (the caller closes them, or leaves them to the finalizer). Inputs
// are only read.
//
// Errors: INVALID_ARGUMENT naming the input and the mismatch (count, dtype, rank, a static
// dim, a symbolic dim bound to two values, a tensor not on the CPU), checked before
// anything runs, so the model stays usable.
func (m *Model) Execute(inputs ...*Tensor) ([]*Tensor, error) {
	in, err := positionalHandles("Execute", inputs)
	if err != nil {
		return nil, err
	}
	defer in.release()
	return m.run("Execute", func(p *C.max_model_t, out **C.max_tensor_list_t) *C.max_status_t {
		return C.max_model_execute(p, in.tensorsPtr(), in.len(), out)
	})
}

// ExecuteWithOptions is Execute under run options (ABI 1.8): the call stops at opts.Timeout
// (a *Error with CodeDeadlineExceeded) or once opts.Cancel is called from any goroutine
// (CodeCancelled), checked before every step and every loop iteration; the message names the
// op, and the model stays usable. A nil opts is Execute.
func (m *Model) ExecuteWithOptions(opts *RunOptions, inputs ...*Tensor) ([]*Tensor, error) {
	if opts == nil {
		return m.Execute(inputs...)
	}
	in, err := positionalHandles("ExecuteWithOptions", inputs)
	if err != nil {
		return nil, err
	}
	defer in.release()
	var o C.max_run_options_t
	if err := statusError(C.max_run_options_init(&o, C.size_t(unsafe.Sizeof(o)))); err != nil {
		return nil, err
	}
	if opts.Timeout > 0 {
		us := opts.Timeout.Microseconds()
		if us < 1 {
			us = 1
		}
		o.timeout_us = C.int64_t(us)
	}
	o.cancel_flag = opts.flag
	defer runtime.KeepAlive(opts) // its flag is freed only once opts is unreachable
	return m.run("ExecuteWithOptions", func(p *C.max_model_t, out **C.max_tensor_list_t) *C.max_status_t {
		return C.max_model_execute_with_options(p, in.tensorsPtr(), in.len(), &o, out)
	})
}

// RunOptions limits Model.ExecuteWithOptions calls, as onnxruntime's RunOptions: Timeout is
// counted from each call's start (0: no limit), and Cancel, from any goroutine, stops every
// call running under these options and refuses new ones until Reset. Make it with
// NewRunOptions; it is safe for concurrent use. Its cancel flag lives in C memory, which the
// library polls while a call runs (cgo forbids C keeping Go memory); a finalizer frees it.
type RunOptions struct {
	Timeout time.Duration
	flag    *C.int32_t
}

// NewRunOptions makes run options without a timeout, not cancelled.
func NewRunOptions() *RunOptions {
	o := &RunOptions{flag: (*C.int32_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int32_t(0)))))}
	runtime.SetFinalizer(o, func(o *RunOptions) { C.free(unsafe.Pointer(o.flag)) })
	return o
}

// Cancel stops the calls running under o, each before its next step or loop iteration.
func (o *RunOptions) Cancel() { atomic.StoreInt32((*int32)(unsafe.Pointer(o.flag)), 1) }

// Reset clears a Cancel, so that calls under o run again.
func (o *RunOptions) Reset() { atomic.StoreInt32((*int32)(unsafe.Pointer(o.flag)), 0) }

// Cancelled says whether Cancel was called since the last Reset.
func (o *RunOptions) Cancelled() bool { return atomic.LoadInt32((*int32)(unsafe.Pointer(o.flag))) != 0 }

// ExecuteNamed is Execute with every input given by name. Errors: NOT_FOUND for an unknown
// name, INVALID_ARGUMENT for a missing one and for Execute's checks.
func (m *Model) ExecuteNamed(inputs map[string]*Tensor) ([]*Tensor, error) {
	in, err := namedHandles("Model.ExecuteNamed", "input", inputs)
	if err != nil {
		return nil, err
	}
	defer in.release()
	return m.run("ExecuteNamed", func(p *C.max_model_t, out **C.max_tensor_list_t) *C.max_status_t {
		return C.max_model_execute_named(p, in.namesPtr(), in.tensorsPtr(), in.len(), out)
	})
}

func (m *Model) run(method string, call func(*C.max_model_t, **C.max_tensor_list_t) *C.max_status_t) ([]*Tensor, error) {
	p, err := m.retain(method)
	if err != nil {
		return nil, err
	}
	defer C.max_model_release(p)
	var list *C.max_tensor_list_t
	if err := statusError(call(p, &list)); err != nil {
		return nil, err
	}
	return takeOutputs(list)
}

// Reload replaces the named weights in place without recompiling (the others stay). The
// checks and the in-place use of NewModel apply; when one fails nothing changes. Executes
// already running finish with the old weights.
func (m *Model) Reload(weights map[string]*Tensor) error {
	w, err := namedHandles("Model.Reload", "weight", weights)
	if err != nil {
		return err
	}
	defer w.release()
	p, err := m.retain("Reload")
	if err != nil {
		return err
	}
	defer C.max_model_release(p)
	return statusError(C.max_model_reload(p, w.namesPtr(), w.tensorsPtr(), w.len()))
}

// CompiledModel gives a new handle to the compiled model this model runs; the caller
// closes it.
func (m *Model) CompiledModel() (*CompiledModel, error) {
	p, err := m.retain("CompiledModel")
	if err != nil {
		return nil, err
	}
	defer C.max_model_release(p)
	var cm *C.max_compiled_model_t
	if err := statusError(C.max_model_compiled_model(p, &cm)); err != nil {
		return nil, err
	}
	return wrapCompiledModel(cm), nil
}

// InputMetadata is MAX's Model.input_metadata: the compiled model's Inputs.
func (m *Model) InputMetadata() ([]TensorSpec, error) {
	return m.metadata((*CompiledModel).Inputs)
}

// OutputMetadata is MAX's Model.output_metadata: the compiled model's Outputs.
func (m *Model) OutputMetadata() ([]TensorSpec, error) {
	return m.metadata((*CompiledModel).Outputs)
}

func (m *Model) metadata(get func(*CompiledModel) ([]TensorSpec, error)) ([]TensorSpec, error) {
	cm, err := m.CompiledModel()
	if err != nil {
		return nil, err
	}
	defer cm.Close()
	return get(cm)
}

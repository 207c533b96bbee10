package maxc

/*
#include <stdlib.h>
#include <max_c.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// Dim is a dimension: a static size or a symbolic expression ("batch", "batch * 2").
type Dim struct {
	size int64
	expr string
	sym  bool
}

// Static is a dimension of known size n.
func Static(n int64) Dim { return Dim{size: n} }

// Sym is a symbolic dimension: a symbol or an expression of symbols and integers with
// + - * // and parentheses.
func Sym(expr string) Dim { return Dim{size: -1, expr: expr, sym: true} }

// IsStatic reports whether the dim has a known size.
func (d Dim) IsStatic() bool { return !d.sym }

// Size is the static size, or -1 for a symbolic dim.
func (d Dim) Size() int64 {
	if d.sym {
		return -1
	}
	return d.size
}

// String is the size or the expression.
func (d Dim) String() string {
	if d.sym {
		return d.expr
	}
	return itoa(d.size)
}

// cDimArray is a max_dim_t array in C memory, with C strings, freed by free().
type cDimArray struct {
	arr  *C.max_dim_t
	strs []*C.char
}

func newCDimArray(dims []Dim) *cDimArray {
	a := &cDimArray{}
	if len(dims) == 0 {
		return a
	}
	a.arr = (*C.max_dim_t)(C.calloc(C.size_t(len(dims)), C.size_t(C.sizeof_max_dim_t)))
	s := unsafe.Slice(a.arr, len(dims))
	for i, d := range dims {
		if d.sym {
			cs := C.CString(d.expr)
			a.strs = append(a.strs, cs)
			s[i].size = -1
			s[i].expr = cs
		} else {
			s[i].size = C.int64_t(d.size)
			s[i].expr = nil
		}
	}
	return a
}

func (a *cDimArray) free() {
	for _, s := range a.strs {
		C.free(unsafe.Pointer(s))
	}
	if a.arr != nil {
		C.free(unsafe.Pointer(a.arr))
	}
}

// DeviceRef says where a graph value lives.
type DeviceRef struct {
	GPU bool
	ID  int32
}

// CPURef is the host as a graph device.
func CPURef() DeviceRef { return DeviceRef{} }

// GPURef is accelerator id as a graph device.
func GPURef(id int32) DeviceRef { return DeviceRef{GPU: true, ID: id} }

func (r DeviceRef) String() string {
	if r.GPU {
		return "gpu:" + itoa(int64(r.ID))
	}
	return "cpu:" + itoa(int64(r.ID))
}

func (r DeviceRef) kind() C.max_device_ref_kind_t {
	if r.GPU {
		return C.MAX_DEVICE_REF_GPU
	}
	return C.MAX_DEVICE_REF_CPU
}

// Graph is a computation graph (MAX's max.graph). A Graph is not safe for concurrent
// mutation by the C library, so every method takes the graph's lock.
type Graph struct {
	mu sync.Mutex
	p  *C.max_graph_t
}

func wrapGraph(p *C.max_graph_t) *Graph {
	g := &Graph{p: p}
	runtime.SetFinalizer(g, func(g *Graph) { g.Close() })
	return g
}

// NewGraph is an empty graph ("" names it "main").
func NewGraph(name string) (*Graph, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	var cname *C.char
	if name != "" {
		cname = C.CString(name)
		defer C.free(unsafe.Pointer(cname))
	}
	var p *C.max_graph_t
	if err := statusError(C.max_graph_create(cname, &p)); err != nil {
		return nil, err
	}
	return wrapGraph(p), nil
}

func (g *Graph) lock(method string) error {
	if g == nil {
		return closedError("Graph", method)
	}
	g.mu.Lock()
	if g.p == nil {
		g.mu.Unlock()
		return closedError("Graph", method)
	}
	return nil
}

// Close releases the graph; its values become unusable. It is idempotent.
func (g *Graph) Close() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.p != nil {
		C.max_graph_release(g.p)
		g.p = nil
		runtime.SetFinalizer(g, nil)
	}
	return nil
}

// Name is the graph's name.
func (g *Graph) Name() (string, error) {
	if err := g.lock("Name"); err != nil {
		return "", err
	}
	defer g.mu.Unlock()
	var s *C.char
	if err := statusError(C.max_graph_name(g.p, &s)); err != nil {
		return "", err
	}
	return C.GoString(s), nil
}

func (g *Graph) value(p *C.max_value_t) *Value { return &Value{g: g, p: p} }

type addTyped func(*C.max_graph_t, *C.char, C.max_dtype_t, *C.max_dim_t, C.int32_t,
	C.max_device_ref_kind_t, C.int32_t, **C.max_value_t) *C.max_status_t

func (g *Graph) addTyped(method, name string, dtype DType, dims []Dim, dev DeviceRef, f addTyped) (*Value, error) {
	if err := g.lock(method); err != nil {
		return nil, err
	}
	defer g.mu.Unlock()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	cd := newCDimArray(dims)
	defer cd.free()
	var v *C.max_value_t
	if err := statusError(f(g.p, cname, dtype.c(), cd.arr, C.int32_t(len(dims)), dev.kind(), C.int32_t(dev.ID), &v)); err != nil {
		return nil, err
	}
	return g.value(v), nil
}

// AddInput adds a named CPU input of type tensor<dims, dtype>.
func (g *Graph) AddInput(name string, dtype DType, dims ...Dim) (*Value, error) {
	return g.AddInputOn(name, dtype, CPURef(), dims...)
}

// AddInputOn adds a named input on a device.
func (g *Graph) AddInputOn(name string, dtype DType, dev DeviceRef, dims ...Dim) (*Value, error) {
	return g.addTyped("AddInput", name, dtype, dims, dev, func(gp *C.max_graph_t, n *C.char, d C.max_dtype_t,
		dp *C.max_dim_t, r C.int32_t, k C.max_device_ref_kind_t, id C.int32_t, o **C.max_value_t) *C.max_status_t {
		return C.max_graph_add_input(gp, n, d, dp, r, k, id, o)
	})
}

// AddWeight declares the external CPU weight `name`.
func (g *Graph) AddWeight(name string, dtype DType, dims ...Dim) (*Value, error) {
	return g.AddWeightOn(name, dtype, CPURef(), dims...)
}

// AddWeightOn declares the external weight `name` on a device.
func (g *Graph) AddWeightOn(name string, dtype DType, dev DeviceRef, dims ...Dim) (*Value, error) {
	return g.addTyped("AddWeight", name, dtype, dims, dev, func(gp *C.max_graph_t, n *C.char, d C.max_dtype_t,
		dp *C.max_dim_t, r C.int32_t, k C.max_device_ref_kind_t, id C.int32_t, o **C.max_value_t) *C.max_status_t {
		return C.max_graph_add_weight(gp, n, d, dp, r, k, id, o)
	})
}

// AddConstant adds a constant holding a copy of a host tensor's elements.
func (g *Graph) AddConstant(t *Tensor) (*Value, error) {
	if err := g.lock("AddConstant"); err != nil {
		return nil, err
	}
	defer g.mu.Unlock()
	if err := t.rlock("AddConstant"); err != nil {
		return nil, err
	}
	defer t.mu.RUnlock()
	var v *C.max_value_t
	if err := statusError(C.max_graph_add_constant(g.p, t.p, &v)); err != nil {
		return nil, err
	}
	return g.value(v), nil
}

// AddOp adds op `op` (its newest version) on inputs with attrs (nil: none) and gives its
// outputs. A failure names the op and leaves the graph as it was.
func (g *Graph) AddOp(op string, inputs []*Value, attrs *Attrs) ([]*Value, error) {
	return g.AddOpVersion(op, 0, inputs, attrs)
}

// AddOpVersion is AddOp for a given op version (0: the newest).
func (g *Graph) AddOpVersion(op string, version int32, inputs []*Value, attrs *Attrs) ([]*Value, error) {
	if err := g.lock("AddOp"); err != nil {
		return nil, err
	}
	defer g.mu.Unlock()
	in := make([]*C.max_value_t, len(inputs))
	for i, v := range inputs {
		if v == nil {
			return nil, newError(CodeInvalidArgument, "op %q: input %d is nil", op, i)
		}
		if v.g != g {
			return nil, newError(CodeInvalidArgument, "op %q: input %d belongs to another graph", op, i)
		}
		in[i] = v.p
	}
	var ap *C.max_attrs_t
	if attrs != nil {
		if err := attrs.lock("AddOp"); err != nil {
			return nil, err
		}
		defer attrs.mu.Unlock()
		if attrs.err != nil {
			return nil, attrs.err
		}
		ap = attrs.p
	}
	cop := C.CString(op)
	defer C.free(unsafe.Pointer(cop))
	var inp **C.max_value_t
	if len(in) > 0 {
		inp = &in[0]
	}
	capacity := 8
	for {
		out := make([]*C.max_value_t, capacity)
		var n C.size_t
		err := statusError(C.max_graph_add_op(g.p, cop, C.int32_t(version), inp, C.size_t(len(in)),
			ap, &out[0], C.size_t(capacity), &n))
		if e, ok := err.(*Error); ok && e.Code == CodeOutOfRange && int(n) > capacity {
			capacity = int(n)
			continue
		}
		runtime.KeepAlive(in)
		if err != nil {
			if e, ok := err.(*Error); ok && !strings.Contains(e.Message, op) {
				e.Message = fmt.Sprintf("op %q: %s", op, e.Message)
			}
			return nil, err
		}
		vals := make([]*Value, int(n))
		for i := range vals {
			vals[i] = g.value(out[i])
		}
		return vals, nil
	}
}

// SetOutputs sets the graph's outputs; names may be nil (or hold "") for "output<i>".
func (g *Graph) SetOutputs(values []*Value, names []string) error {
	if err := g.lock("SetOutputs"); err != nil {
		return err
	}
	defer g.mu.Unlock()
	if names != nil && len(names) != len(values) {
		return newError(CodeInvalidArgument, "SetOutputs: %d values but %d names", len(values), len(names))
	}
	vs := make([]*C.max_value_t, len(values))
	for i, v := range values {
		if v == nil || v.g != g {
			return newError(CodeInvalidArgument, "SetOutputs: output %d is nil or belongs to another graph", i)
		}
		vs[i] = v.p
	}
	var cnames []*C.char
	if names != nil {
		cnames = make([]*C.char, len(names))
		for i, n := range names {
			if n != "" {
				cnames[i] = C.CString(n)
				defer C.free(unsafe.Pointer(cnames[i]))
			}
		}
	}
	var vp **C.max_value_t
	if len(vs) > 0 {
		vp = &vs[0]
	}
	var np **C.char
	if len(cnames) > 0 {
		np = &cnames[0]
	}
	err := statusError(C.max_graph_set_outputs(g.p, vp, np, C.size_t(len(vs))))
	runtime.KeepAlive(vs)
	runtime.KeepAlive(cnames)
	return err
}

func (g *Graph) count(method string, f func(*C.max_graph_t, *C.size_t) *C.max_status_t) (int, error) {
	if err := g.lock(method); err != nil {
		return 0, err
	}
	defer g.mu.Unlock()
	var n C.size_t
	err := statusError(f(g.p, &n))
	return int(n), err
}

// NumOps is the number of ops in the graph.
func (g *Graph) NumOps() (int, error) {
	return g.count("NumOps", func(p *C.max_graph_t, n *C.size_t) *C.max_status_t { return C.max_graph_num_ops(p, n) })
}

// NumInputs is the number of inputs.
func (g *Graph) NumInputs() (int, error) {
	return g.count("NumInputs", func(p *C.max_graph_t, n *C.size_t) *C.max_status_t { return C.max_graph_num_inputs(p, n) })
}

// NumOutputs is the number of outputs.
func (g *Graph) NumOutputs() (int, error) {
	return g.count("NumOutputs", func(p *C.max_graph_t, n *C.size_t) *C.max_status_t { return C.max_graph_num_outputs(p, n) })
}

// Input is the index-th input's value and name.
func (g *Graph) Input(index int) (*Value, string, error) {
	if err := g.lock("Input"); err != nil {
		return nil, "", err
	}
	defer g.mu.Unlock()
	var v *C.max_value_t
	var s *C.char
	if err := statusError(C.max_graph_input(g.p, C.size_t(index), &v, &s)); err != nil {
		return nil, "", err
	}
	return g.value(v), C.GoString(s), nil
}

// Output is the index-th output's value and name.
func (g *Graph) Output(index int) (*Value, string, error) {
	if err := g.lock("Output"); err != nil {
		return nil, "", err
	}
	defer g.mu.Unlock()
	var v *C.max_value_t
	var s *C.char
	if err := statusError(C.max_graph_output(g.p, C.size_t(index), &v, &s)); err != nil {
		return nil, "", err
	}
	return g.value(v), C.GoString(s), nil
}

// Verify re-checks the whole graph.
func (g *Graph) Verify() error {
	if err := g.lock("Verify"); err != nil {
		return err
	}
	defer g.mu.Unlock()
	return statusError(C.max_graph_verify(g.p))
}

func (g *Graph) buffer(method string, f func(*C.max_graph_t, **C.max_buffer_t) *C.max_status_t) ([]byte, error) {
	if err := g.lock(method); err != nil {
		return nil, err
	}
	defer g.mu.Unlock()
	var b *C.max_buffer_t
	if err := statusError(f(g.p, &b)); err != nil {
		return nil, err
	}
	return bufferBytes(b)
}

// Serialize gives the graph in the MAXG format.
func (g *Graph) Serialize() ([]byte, error) {
	return g.buffer("Serialize", func(p *C.max_graph_t, b **C.max_buffer_t) *C.max_status_t { return C.max_graph_serialize(p, b) })
}

// Text is the graph as readable text.
func (g *Graph) Text() (string, error) {
	b, err := g.buffer("Text", func(p *C.max_graph_t, b **C.max_buffer_t) *C.max_status_t { return C.max_graph_to_text(p, b) })
	return string(b), err
}

// String is the graph as readable text, or the error's text.
func (g *Graph) String() string {
	s, err := g.Text()
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return s
}

// DOT is the graph in Graphviz DOT.
func (g *Graph) DOT() (string, error) {
	b, err := g.buffer("DOT", func(p *C.max_graph_t, b **C.max_buffer_t) *C.max_status_t { return C.max_graph_to_dot(p, b) })
	return string(b), err
}

// Deserialize reads a MAXG image (the bytes are copied as needed during the call).
func Deserialize(data []byte) (*Graph, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	var ptr unsafe.Pointer
	if len(data) > 0 {
		ptr = unsafe.Pointer(&data[0])
	}
	var p *C.max_graph_t
	err := statusError(C.max_graph_deserialize(ptr, C.size_t(len(data)), &p))
	runtime.KeepAlive(data)
	if err != nil {
		return nil, err
	}
	return wrapGraph(p), nil
}

// Save writes the graph to a MAXG file.
func (g *Graph) Save(path string) error {
	if err := g.lock("Save"); err != nil {
		return err
	}
	defer g.mu.Unlock()
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	return statusError(C.max_graph_save(g.p, cp))
}

// Load reads a MAXG file.
func Load(path string) (*Graph, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var p *C.max_graph_t
	if err := statusError(C.max_graph_load(cp, &p)); err != nil {
		return nil, err
	}
	return wrapGraph(p), nil
}

// Value is a graph value. It keeps its Graph alive; after the graph is closed every
// method returns an error.
type Value struct {
	g *Graph
	p *C.max_value_t
}

// Graph is the value's graph.
func (v *Value) Graph() *Graph { return v.g }

func (v *Value) lock(method string) error {
	if v == nil || v.p == nil {
		return closedError("Value", method)
	}
	if err := v.g.lock("Value." + method); err != nil {
		return err
	}
	return nil
}

// DType is the value's element type.
func (v *Value) DType() (DType, error) {
	if err := v.lock("DType"); err != nil {
		return Invalid, err
	}
	defer v.g.mu.Unlock()
	var d C.max_dtype_t
	err := statusError(C.max_value_dtype(v.p, &d))
	return DType(d), err
}

// Rank is the value's rank.
func (v *Value) Rank() (int, error) {
	if err := v.lock("Rank"); err != nil {
		return 0, err
	}
	defer v.g.mu.Unlock()
	var r C.int32_t
	err := statusError(C.max_value_rank(v.p, &r))
	return int(r), err
}

// Shape is the value's dims (symbolic dims in canonical form).
func (v *Value) Shape() ([]Dim, error) {
	if err := v.lock("Shape"); err != nil {
		return nil, err
	}
	defer v.g.mu.Unlock()
	var r C.int32_t
	if err := statusError(C.max_value_rank(v.p, &r)); err != nil {
		return nil, err
	}
	dims := make([]Dim, int(r))
	for i := range dims {
		var size C.int64_t
		var expr *C.char
		if err := statusError(C.max_value_dim(v.p, C.int32_t(i), &size, &expr)); err != nil {
			return nil, err
		}
		if size >= 0 {
			dims[i] = Static(int64(size))
		} else {
			dims[i] = Sym(C.GoString(expr))
		}
	}
	return dims, nil
}

// Device is where the value lives.
func (v *Value) Device() (DeviceRef, error) {
	if err := v.lock("Device"); err != nil {
		return DeviceRef{}, err
	}
	defer v.g.mu.Unlock()
	var k C.max_device_ref_kind_t
	var id C.int32_t
	if err := statusError(C.max_value_device(v.p, &k, &id)); err != nil {
		return DeviceRef{}, err
	}
	return DeviceRef{GPU: k == C.MAX_DEVICE_REF_GPU, ID: int32(id)}, nil
}

// Type is the value's type as text: "tensor<[batch, 10], float32, cpu:0>".
func (v *Value) Type() (string, error) {
	if err := v.lock("Type"); err != nil {
		return "", err
	}
	defer v.g.mu.Unlock()
	var s *C.char
	if err := statusError(C.max_value_type_string(v.p, &s)); err != nil {
		return "", err
	}
	return C.GoString(s), nil
}

// String is the type text, or the error's text.
func (v *Value) String() string {
	s, err := v.Type()
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return s
}

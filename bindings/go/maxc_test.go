package maxc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestABI(t *testing.T) {
	if err := CheckABI(); err != nil {
		t.Fatal(err)
	}
	// The binding calls the device-graph functions of ABI 1.4 (Capture, Replay,
	// DebugVerifyReplay), so its header must have them; the library must serve at least that.
	if MinABIVersion != 1<<16|4 || HeaderABIVersion()>>16 != 1 || HeaderABIVersion() < MinABIVersion {
		t.Fatalf("header ABI %#x", HeaderABIVersion())
	}
	if LibraryABIVersion()>>16 != 1 || LibraryABIVersion() < MinABIVersion {
		t.Fatalf("library ABI %#x", LibraryABIVersion())
	}
	if VersionString() == "" {
		t.Fatal("empty version string")
	}
	// A header from a newer minor or another major is refused with a readable error.
	for _, v := range []uint32{1<<16 | 999, 2 << 16} {
		e := asError(t, checkABIAgainst(v))
		if e.Code != CodeFailedPrecondition || e.CodeName != "FAILED_PRECONDITION" || !strings.Contains(e.Message, "ABI") {
			t.Fatalf("check_abi(%#x): %+v", v, e)
		}
	}
}

func TestDTypeTraits(t *testing.T) {
	cases := []struct {
		d                       DType
		code, bits, bytes       int
		name                    string
		float, integral, signed bool
	}{
		{Bool, 1, 8, 1, "bool", false, false, false},
		{Float32, 81, 32, 4, "float32", true, false, false},
		{BFloat16, 80, 16, 2, "bfloat16", true, false, false},
		{Int64, 141, 64, 8, "int64", false, true, true},
		{Uint8, 134, 8, 1, "uint8", false, true, false},
		{Float4E2M1FN, 64, 4, 1, "float4_e2m1fn", true, false, false},
		{Float8E8M0FNU, 73, 8, 1, "float8_e8m0fnu", true, false, false},
		{Uint2, 130, 2, 1, "uint2", false, true, false},
		{Int2, 131, 2, 1, "int2", false, true, true},
		{Uint4, 132, 4, 1, "uint4", false, true, false},
		{Int4, 133, 4, 1, "int4", false, true, true},
	}
	for _, c := range cases {
		if int(c.d) != c.code || !c.d.IsValid() || c.d.SizeInBits() != c.bits || c.d.SizeInBytes() != c.bytes ||
			c.d.String() != c.name || c.d.IsFloat() != c.float || c.d.IsIntegral() != c.integral ||
			c.d.IsSignedIntegral() != c.signed {
			t.Errorf("traits of %v wrong: %+v", c.d, c)
		}
	}
	if !Float16.IsHalf() || !BFloat16.IsHalf() || Float32.IsHalf() || !Float8E5M2.IsFloat8() || !Uint32.IsUnsignedIntegral() {
		t.Error("predicates")
	}
	if !Float8E8M0FNU.IsFloat8() || Float8E8M0FNU.IsHalf() {
		t.Error("float8_e8m0fnu is a float8")
	}
	if DType(999).IsValid() || DType(999).Name() != "" || DType(999).String() != "DType(999)" {
		t.Error("unknown dtype")
	}
	d, err := DTypeFromName("int32")
	if err != nil || d != Int32 {
		t.Fatal(d, err)
	}
	_, err = DTypeFromName("no_such_dtype")
	if e := asError(t, err); e.Code != CodeNotFound || !strings.Contains(e.Message, "no_such_dtype") {
		t.Fatal(e)
	}
}

func TestDevicesAndContext(t *testing.T) {
	cpu, err := CPU()
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	if k, _ := cpu.Kind(); k != DeviceCPU {
		t.Fatal(k)
	}
	if h, _ := cpu.IsHost(); !h {
		t.Fatal("cpu not host")
	}
	if l, _ := cpu.Label(); l != "cpu" {
		t.Fatal(l)
	}
	n, err := AcceleratorCount()
	if err != nil || n < 0 {
		t.Fatal(n, err)
	}
	ctx, err := NewContext(2)
	if err != nil {
		t.Fatal(err)
	}
	if nt, err := ctx.NumThreads(); err != nil || nt != 2 {
		t.Fatal(nt, err)
	}
	devs, err := ctx.Devices()
	if err != nil || len(devs) != 1 {
		t.Fatal(devs, err)
	}
	devs[0].Close()
	ctx.Close()
	ctx.Close()
	if _, err := ctx.NumThreads(); asError(t, err).Code != CodeFailedPrecondition {
		t.Fatal(err)
	}
	_, err = NewContext(-1)
	if e := asError(t, err); e.Code != CodeInvalidArgument {
		t.Fatal(e)
	}
}

func TestTensorRoundTrip(t *testing.T) {
	data := []float32{1, 2, 3, 4, 5, 6}
	x, err := FromFloat32s(data, []int64{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	data[0] = 100 // the tensor holds a copy
	got, err := x.Float32s()
	if err != nil || len(got) != 6 || got[0] != 1 || got[5] != 6 {
		t.Fatal(got, err)
	}
	shape, _ := x.Shape()
	strides, _ := x.Strides()
	dt, _ := x.DType()
	if !equal(shape, []int64{2, 3}) || !equal(strides, []int64{3, 1}) || dt != Float32 {
		t.Fatal(shape, strides, dt)
	}
	if _, err := x.Int64s(); asError(t, err).Code != CodeInvalidArgument {
		t.Fatal(err)
	}

	y, err := FromInt64s([]int64{7, 8, 9}, []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if v, err := y.Int64s(); err != nil || !equal(v, []int64{7, 8, 9}) {
		t.Fatal(v, err)
	}

	z, err := Zeros(Float32, []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if v, _ := z.Float32s(); len(v) != 4 || v[0] != 0 || v[3] != 0 {
		t.Fatal(v)
	}

	c, err := x.Copy()
	if err != nil {
		t.Fatal(err)
	}
	x.Close() // the copy is independent of x's handle
	if v, _ := c.Float32s(); v[4] != 5 {
		t.Fatal(v)
	}
	v, err := c.View(Float32, []int64{3, 2})
	if err != nil {
		t.Fatal(err)
	}
	c.Close() // the view keeps the storage alive
	if s, _ := v.Shape(); !equal(s, []int64{3, 2}) {
		t.Fatal(s)
	}
	if f, _ := v.Float32s(); f[5] != 6 {
		t.Fatal(f)
	}
	_, err = v.View(Float32, []int64{7})
	if e := asError(t, err); e.Code != CodeInvalidArgument {
		t.Fatal(e)
	}
	v.Close()

	// Scalars and empty tensors.
	s, err := FromFloat32s([]float32{3.5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := s.Float32s(); len(f) != 1 || f[0] != 3.5 {
		t.Fatal(f)
	}
	s.Close()
	e0, err := FromFloat32s(nil, []int64{0, 3})
	if err != nil {
		t.Fatal(err)
	}
	if f, err := e0.Float32s(); err != nil || len(f) != 0 {
		t.Fatal(f, err)
	}
	e0.Close()
}

func TestTensorErrors(t *testing.T) {
	_, err := FromFloat32s([]float32{1, 2, 3}, []int64{2, 3})
	e := asError(t, err)
	if e.Code != 3 || e.CodeName != "INVALID_ARGUMENT" || !strings.Contains(e.Message, "12") || !strings.Contains(e.Message, "24") {
		t.Fatalf("%+v", e)
	}
	if !strings.Contains(err.Error(), "INVALID_ARGUMENT") {
		t.Fatal(err.Error())
	}
	_, err = Zeros(DType(999), []int64{2})
	if asError(t, err).Code != CodeInvalidArgument {
		t.Fatal(err)
	}
	_, err = Zeros(Float32, []int64{-1})
	if asError(t, err).Code != CodeInvalidArgument {
		t.Fatal(err)
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	x, err := Zeros(Int64, []int64{2})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []func() error{
		func() error { _, err := x.Shape(); return err },
		func() error { _, err := x.Int64s(); return err },
		func() error { _, err := x.Copy(); return err },
		func() error { _, err := x.View(Int64, nil); return err },
		func() error { _, err := x.DType(); return err },
	} {
		if e := asError(t, f()); e.Code != CodeFailedPrecondition || !strings.Contains(e.Message, "closed") {
			t.Fatal(e)
		}
	}
	var nilT *Tensor
	if _, err := nilT.Shape(); err == nil {
		t.Fatal("nil tensor")
	}

	g, _ := NewGraph("g")
	in, _ := g.AddInput("x", Float32, Static(2))
	g.Close()
	g.Close()
	if _, err := in.Shape(); asError(t, err).Code != CodeFailedPrecondition {
		t.Fatal(err)
	}
	if _, err := g.AddOp("relu", []*Value{in}, nil); asError(t, err).Code != CodeFailedPrecondition {
		t.Fatal(err)
	}
	if _, err := g.Serialize(); err == nil {
		t.Fatal("serialize after close")
	}
	if !strings.Contains(g.String(), "closed") {
		t.Fatal(g.String())
	}

	a := NewAttrs().Int("axis", 0)
	a.Close()
	a.Close()
	if a.Err() == nil {
		t.Fatal("attrs after close")
	}
	a.Int("axis", 1) // no crash

	d, _ := CPU()
	d.Close()
	d.Close()
	if _, err := d.Kind(); err == nil {
		t.Fatal("device after close")
	}
}

func mlp(t *testing.T) (*Graph, *Value) {
	t.Helper()
	g, err := NewGraph("mlp")
	if err != nil {
		t.Fatal(err)
	}
	x, err := g.AddInput("x", Float32, Sym("batch"), Static(4))
	must(t, err)
	w1, err := g.AddWeight("w1", Float32, Static(4), Static(8))
	must(t, err)
	bt, err := Zeros(Float32, []int64{8})
	must(t, err)
	defer bt.Close()
	b1, err := g.AddConstant(bt)
	must(t, err)
	h := op1(t, g, "matmul", nil, x, w1)
	h = op1(t, g, "add", nil, h, b1)
	h = op1(t, g, "relu", nil, h)
	w2, err := g.AddWeight("w2", Float32, Static(8), Static(2))
	must(t, err)
	y := op1(t, g, "matmul", nil, h, w2)
	attrs := NewAttrs().Int("axis", -1)
	defer attrs.Close()
	y = op1(t, g, "softmax", attrs, y)
	must(t, g.SetOutputs([]*Value{y}, []string{"probs"}))
	return g, y
}

func TestGraphMLPSymbolicBatch(t *testing.T) {
	g, y := mlp(t)
	defer g.Close()
	shape, err := y.Shape()
	must(t, err)
	if len(shape) != 2 || shape[0].IsStatic() || shape[0].String() != "batch" || shape[1] != Static(2) {
		t.Fatal(shape)
	}
	if d, _ := y.DType(); d != Float32 {
		t.Fatal(d)
	}
	if r, _ := y.Rank(); r != 2 {
		t.Fatal(r)
	}
	if dev, _ := y.Device(); dev != CPURef() {
		t.Fatal(dev)
	}
	if ty, _ := y.Type(); ty != "tensor<[batch, 2], float32, cpu:0>" {
		t.Fatal(ty)
	}
	must(t, g.Verify())
	if name, _ := g.Name(); name != "mlp" {
		t.Fatal(name)
	}
	if n, _ := g.NumOutputs(); n != 1 {
		t.Fatal(n)
	}
	if _, name, err := g.Output(0); err != nil || name != "probs" {
		t.Fatal(name, err)
	}
	if v, name, err := g.Input(0); err != nil || name != "x" || v.String() != "tensor<[batch, 4], float32, cpu:0>" {
		t.Fatal(v, name, err)
	}
	text := g.String()
	if !strings.Contains(text, "mlp") || !strings.Contains(text, "matmul") || !strings.Contains(text, "relu") {
		t.Fatal(text)
	}
	dot, err := g.DOT()
	must(t, err)
	if !strings.HasPrefix(strings.TrimSpace(dot), "digraph") || !strings.Contains(dot, "matmul") {
		t.Fatal(dot)
	}
}

func TestSymbolicExpressionDims(t *testing.T) {
	g, err := NewGraph("s")
	must(t, err)
	defer g.Close()
	x, err := g.AddInput("x", Float32, Sym("batch * 2"), Static(3))
	must(t, err)
	s, err := x.Shape()
	must(t, err)
	if s[0].IsStatic() || !strings.Contains(s[0].String(), "batch") || s[0].Size() != -1 {
		t.Fatal(s)
	}
	_, err = g.AddInput("bad", Float32, Sym("batch +* 2"))
	if asError(t, err).Code != CodeInvalidArgument {
		t.Fatal(err)
	}
	_, err = g.AddInput("x", Float32, Static(1))
	if asError(t, err).Code != CodeAlreadyExists {
		t.Fatal(err)
	}
}

func TestFailingOpLeavesGraphUsable(t *testing.T) {
	g, x := inputGraph(t, "e", Static(2), Static(3))
	defer g.Close()
	n0, _ := g.NumOps()
	_, err := g.AddOp("matmul", []*Value{x, x}, nil)
	e := asError(t, err)
	if e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "matmul") {
		t.Fatal(e)
	}
	if n, _ := g.NumOps(); n != n0 {
		t.Fatal(n, n0)
	}
	_, err = g.AddOp("no_such_op", []*Value{x}, nil)
	if e := asError(t, err); e.Code != CodeNotFound || !strings.Contains(e.Message, "no_such_op") {
		t.Fatal(e)
	}
	// A bad attribute is an error too, naming the op.
	_, err = g.AddOp("softmax", []*Value{x}, NewAttrs().Str("axis", "zero"))
	if err == nil || !strings.Contains(err.Error(), "softmax") {
		t.Fatal(err)
	}
	// Values of another graph are refused.
	g2, _ := NewGraph("other")
	defer g2.Close()
	if _, err := g2.AddOp("relu", []*Value{x}, nil); asError(t, err).Code != CodeInvalidArgument {
		t.Fatal(err)
	}
	y := op1(t, g, "relu", nil, x)
	must(t, g.SetOutputs([]*Value{y}, nil))
	must(t, g.Verify())
	if s, _ := y.Shape(); len(s) != 2 || s[0] != Static(2) || s[1] != Static(3) {
		t.Fatal(s)
	}
}

func TestSerializeRoundTrip(t *testing.T) {
	g, _ := mlp(t)
	defer g.Close()
	data, err := g.Serialize()
	must(t, err)
	if len(data) == 0 {
		t.Fatal("empty image")
	}
	g2, err := Deserialize(data)
	must(t, err)
	defer g2.Close()
	data2, err := g2.Serialize()
	must(t, err)
	if !bytes.Equal(data, data2) {
		t.Fatal("serialize(deserialize(x)) != x")
	}
	if g2.String() != g.String() {
		t.Fatal("text differs")
	}
	_, err = Deserialize(data[:len(data)/2])
	if asError(t, err).Code != CodeDataLoss && asError(t, err).Code != CodeInvalidArgument {
		t.Fatal(err)
	}
	_, err = Deserialize(nil)
	if err == nil {
		t.Fatal("empty image accepted")
	}
}

func TestSaveLoad(t *testing.T) {
	g, _ := mlp(t)
	defer g.Close()
	data, err := g.Serialize()
	must(t, err)
	p := filepath.Join(t.TempDir(), "mlp.maxg")
	must(t, g.Save(p))
	if st, err := os.Stat(p); err != nil || st.Size() == 0 {
		t.Fatal(st, err)
	}
	g3, err := Load(p)
	must(t, err)
	defer g3.Close()
	data3, err := g3.Serialize()
	must(t, err)
	if !bytes.Equal(data, data3) {
		t.Fatal("loaded graph serializes differently")
	}
	_, err = Load(filepath.Join(t.TempDir(), "missing.maxg"))
	if asError(t, err).Code != CodeNotFound {
		t.Fatal(err)
	}
}

func TestConcurrentTensors(t *testing.T) {
	const workers, iters = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	shared, err := FromInt64s([]int64{1, 2, 3, 4}, []int64{2, 2})
	must(t, err)
	defer shared.Close()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < iters; i++ {
				n := int64(w*iters + i)
				x, err := FromInt64s([]int64{n, n + 1, n + 2}, []int64{3})
				if err != nil {
					errs <- err
					return
				}
				v, err := x.Int64s()
				x.Close()
				if err != nil || len(v) != 3 || v[0] != n || v[2] != n+2 {
					errs <- &Error{Code: CodeInternal, CodeName: "INTERNAL", Message: "bad round trip"}
					return
				}
				if s, err := shared.Int64s(); err != nil || s[3] != 4 {
					errs <- &Error{Code: CodeInternal, CodeName: "INTERNAL", Message: "bad shared read"}
					return
				}
				if i%50 == 0 {
					// Leave one for the finalizer.
					_, _ = Zeros(Float32, []int64{16})
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestErrorIs(t *testing.T) {
	_, err := Load("/nonexistent/dir/x.maxg")
	if !errors.Is(err, &Error{Code: CodeNotFound}) || !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if errors.Is(err, ErrInvalidArgument) || errors.Is(err, errors.New("NOT_FOUND")) {
		t.Fatal("errors.Is matched another code or another error type")
	}
	// Wrapping keeps the code visible.
	if wrapped := fmt.Errorf("loading: %w", err); !errors.Is(wrapped, ErrNotFound) {
		t.Fatal(wrapped)
	}
	for _, s := range []*Error{ErrCancelled, ErrNotFound, ErrDataLoss, ErrUnauthenticated} {
		if s.CodeName != codeName(s.Code) {
			t.Fatalf("sentinel %d is named %q, the library says %q", s.Code, s.CodeName, codeName(s.Code))
		}
	}
}

// ABI 1.5: a constant placed on a GPU carries that device in its type (a GPU graph's scalars
// need not span devices); no GPU is needed to build such a graph.
func TestConstantsArePlacedWhereAsked(t *testing.T) {
	g, err := NewGraph("placed")
	must(t, err)
	defer g.Close()
	half, err := FromFloat32s([]float32{0.5}, []int64{})
	must(t, err)
	defer half.Close()
	onHost, err := g.AddConstant(half)
	must(t, err)
	onGPU, err := g.AddConstantOn(half, GPURef(1))
	must(t, err)
	if d, err := onHost.Device(); err != nil || d != CPURef() {
		t.Fatalf("plain constant on %v (%v)", d, err)
	}
	if d, err := onGPU.Device(); err != nil || d != GPURef(1) || d.String() != "gpu:1" {
		t.Fatalf("placed constant on %v (%v)", d, err)
	}
	if s, err := onGPU.Type(); err != nil || s != "tensor<[], float32, gpu:1>" {
		t.Fatalf("type %q (%v)", s, err)
	}
	// CPURef() is a plain constant.
	c, err := g.AddConstantOn(half, CPURef())
	must(t, err)
	if d, err := c.Device(); err != nil || d != CPURef() {
		t.Fatalf("host constant on %v (%v)", d, err)
	}
	// A bad device id is the library's INVALID_ARGUMENT; a closed tensor the binding's error.
	_, err = g.AddConstantOn(half, GPURef(-1))
	if e := asError(t, err); e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "device id -1") {
		t.Fatal(e)
	}
	closed, err := FromFloat32s([]float32{1}, []int64{1})
	must(t, err)
	closed.Close()
	if _, err := g.AddConstantOn(closed, GPURef(0)); err == nil {
		t.Fatal("a closed tensor was added")
	}
}

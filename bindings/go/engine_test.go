package maxc

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestEngineSymbolicBatches(t *testing.T) {
	w := newMLPWeights(1)
	m := newMLPModel(t, w, nil)
	defer m.Close()
	for _, c := range []struct {
		rows int
		seed uint64
	}{{1, 10}, {7, 11}, {64, 12}, {7, 13}} {
		x, xt := batchOf(t, c.rows, c.seed)
		out, err := m.Execute(xt)
		must(t, err)
		shape, err := out[0].Shape()
		must(t, err)
		if !equal(shape, []int64{int64(c.rows), mlpHidden}) {
			t.Fatalf("batch %d: shape %v", c.rows, shape)
		}
		got, err := out[0].Float32s()
		must(t, err)
		assertClose(t, got, w.reference(x))
		back, err := xt.Float32s()
		must(t, err)
		assertClose(t, back, x) // inputs are only read
		out[0].Close()
		xt.Close()
	}
}

func TestEngineCompileOptionsKeepResults(t *testing.T) {
	w := newMLPWeights(2)
	fused := newMLPModel(t, w, nil)
	defer fused.Close()
	plain := newMLPModel(t, w, &CompileOptions{DisableFusion: true, DisableConstantFolding: true,
		FoldLimitBytes: 1, PlanCacheCapacity: 1})
	defer plain.Close()
	for _, rows := range []int{3, 5, 3} {
		_, xt := batchOf(t, rows, uint64(rows))
		assertClose(t, run1(t, plain, xt), run1(t, fused, xt))
		xt.Close()
	}
	ctx, err := NewContext(1)
	must(t, err)
	defer ctx.Close()
	g := mlpGraph(t)
	defer g.Close()
	_, err = ctx.Compile(g, &CompileOptions{PlanCacheCapacity: -1})
	if e := asError(t, err); e.Code != CodeInvalidArgument {
		t.Fatal(e)
	}
}

func TestEngineMetadata(t *testing.T) {
	cm := compileMLP(t)
	defer cm.Close()

	inputs, err := cm.Inputs()
	must(t, err)
	if len(inputs) != 1 {
		t.Fatalf("%d inputs", len(inputs))
	}
	x := inputs[0]
	if x.Name != "x" || x.DType != Float32 || x.Rank() != 2 || x.Device != CPURef() {
		t.Fatalf("input spec %+v", x)
	}
	if x.Dims[0].IsStatic() || x.Dims[0].String() != "batch" || x.Dims[1] != Static(4) {
		t.Fatalf("dims %v", x.Dims)
	}
	if !equal(x.Shape(), []int64{-1, 4}) {
		t.Fatalf("shape %v: a symbolic dim is unknown (-1)", x.Shape())
	}
	if names := x.DimNames(); names[0] != "batch" || names[1] != "" {
		t.Fatalf("dim names %q", names)
	}
	if x.String() != "x: [batch, 4] float32" {
		t.Fatal(x.String())
	}

	outputs, err := cm.Outputs()
	must(t, err)
	if len(outputs) != 1 || outputs[0].Name != "y" || !equal(outputs[0].Shape(), []int64{-1, mlpHidden}) ||
		outputs[0].DimNames()[0] != "batch" {
		t.Fatalf("outputs %v", outputs)
	}

	weights, err := cm.Weights()
	must(t, err)
	byName := map[string]TensorSpec{}
	for _, s := range weights {
		byName[s.Name] = s
	}
	if len(byName) != 2 || !equal(byName["w"].Shape(), []int64{4, 8}) || !equal(byName["b"].Shape(), []int64{8}) {
		t.Fatalf("weights %v", weights)
	}

	m, err := NewModel(cm, newMLPWeights(3).tensors(t))
	must(t, err)
	defer m.Close()
	in2, err := m.InputMetadata()
	must(t, err)
	out2, err := m.OutputMetadata()
	must(t, err)
	if in2[0].String() != x.String() || out2[0].String() != outputs[0].String() {
		t.Fatalf("model metadata %v %v", in2, out2)
	}
}

// pairModel is x + y with x, y float32[batch, 2], which share the symbol batch.
func pairModel(t *testing.T) *Model {
	t.Helper()
	g, x := inputGraph(t, "pair", Sym("batch"), Static(2))
	defer g.Close()
	y, err := g.AddInput("y", Float32, Sym("batch"), Static(2))
	must(t, err)
	must(t, g.SetOutputs([]*Value{op1(t, g, "add", nil, x, y)}, nil))
	return graphModel(t, g)
}

func TestEngineExecuteNamed(t *testing.T) {
	m := pairModel(t)
	defer m.Close()
	a, err := FromFloat32s([]float32{1, 2, 3, 4, 5, 6}, []int64{3, 2})
	must(t, err)
	b, err := FromFloat32s([]float32{10, 20, 30, 40, 50, 60}, []int64{3, 2})
	must(t, err)
	want := []float32{11, 22, 33, 44, 55, 66}
	assertClose(t, run1(t, m, a, b), want)
	out, err := m.ExecuteNamed(map[string]*Tensor{"y": b, "x": a})
	must(t, err)
	got, err := out[0].Float32s()
	must(t, err)
	assertClose(t, got, want)

	_, err = m.ExecuteNamed(map[string]*Tensor{"x": a, "nope": b})
	if e := asError(t, err); e.Code != CodeNotFound || !strings.Contains(e.Message, "nope") {
		t.Fatal(e)
	}
	_, err = m.ExecuteNamed(map[string]*Tensor{"x": a})
	if e := asError(t, err); e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "'y'") {
		t.Fatal(e)
	}
	_, err = m.ExecuteNamed(map[string]*Tensor{"x": a, "y": nil})
	if e := asError(t, err); !strings.Contains(e.Message, `"y"`) {
		t.Fatal(e)
	}
	assertClose(t, run1(t, m, a, b), want)
}

func TestEngineReload(t *testing.T) {
	first, second := newMLPWeights(4), newMLPWeights(5)
	m := newMLPModel(t, first, nil)
	defer m.Close()
	x, xt := batchOf(t, 4, 20)
	before := run1(t, m, xt)
	assertClose(t, before, first.reference(x))

	must(t, m.Reload(second.tensors(t)))
	after := run1(t, m, xt)
	assertClose(t, after, second.reference(x))
	if fmt.Sprint(before) == fmt.Sprint(after) {
		t.Fatal("reload did not change the results")
	}

	// Only the named weights change.
	must(t, m.Reload(map[string]*Tensor{"b": first.tensors(t)["b"]}))
	mixed := mlpWeights{w: second.w, b: first.b}
	assertClose(t, run1(t, m, xt), mixed.reference(x))

	// A failing reload changes nothing.
	wrong, err := Zeros(Float32, []int64{8, 4})
	must(t, err)
	err = m.Reload(map[string]*Tensor{"w": wrong, "b": second.tensors(t)["b"]})
	if e := asError(t, err); e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "'w'") {
		t.Fatal(e)
	}
	assertClose(t, run1(t, m, xt), mixed.reference(x))
}

func TestEngineWeightErrors(t *testing.T) {
	cm := compileMLP(t)
	defer cm.Close()
	ws := newMLPWeights(6).tensors(t)
	_, err := cm.NewModel(map[string]*Tensor{"w": ws["w"]})
	if e := asError(t, err); e.Code != CodeNotFound || !strings.Contains(e.Message, "'b'") {
		t.Fatal(e)
	}
	extra, err := Zeros(Float32, []int64{3})
	must(t, err)
	_, err = cm.NewModel(map[string]*Tensor{"w": ws["w"], "b": ws["b"], "extra": extra})
	if e := asError(t, err); e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "extra") {
		t.Fatal(e)
	}
	b64, err := Zeros(Float64, []int64{8})
	must(t, err)
	_, err = cm.NewModel(map[string]*Tensor{"w": ws["w"], "b": b64})
	if e := asError(t, err); e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "float64") {
		t.Fatal(e)
	}
	// Weights may be closed once bound: the model holds its own reference.
	m, err := cm.NewModel(ws)
	must(t, err)
	defer m.Close()
	ws["w"].Close()
	ws["b"].Close()
	_, xt := batchOf(t, 2, 1)
	run1(t, m, xt)
}

func TestEngineBadInputs(t *testing.T) {
	w := newMLPWeights(7)
	m := newMLPModel(t, w, nil)
	defer m.Close()
	x, good := batchOf(t, 2, 30)
	want := w.reference(x)
	f64, err := Zeros(Float64, []int64{2, 4})
	must(t, err)
	rank1, err := Zeros(Float32, []int64{8})
	must(t, err)
	dim5, err := Zeros(Float32, []int64{2, 5})
	must(t, err)
	closed, err := Zeros(Float32, []int64{2, 4})
	must(t, err)
	closed.Close()
	cases := []struct {
		what   string
		inputs []*Tensor
		code   int32
		detail string
	}{
		{"dtype", []*Tensor{f64}, CodeInvalidArgument, "float64"},
		{"rank", []*Tensor{rank1}, CodeInvalidArgument, "rank"},
		{"static dim", []*Tensor{dim5}, CodeInvalidArgument, "5"},
		{"too few", nil, CodeInvalidArgument, "(x)"},
		{"too many", []*Tensor{good, good}, CodeInvalidArgument, "got 2"},
		{"nil", []*Tensor{nil}, CodeFailedPrecondition, "input 0"},
		{"closed", []*Tensor{closed}, CodeFailedPrecondition, "input 0"},
	}
	for _, c := range cases {
		_, err := m.Execute(c.inputs...)
		e := asError(t, err)
		if e.Code != c.code || !strings.Contains(e.Message, c.detail) {
			t.Fatalf("%s: %v", c.what, e)
		}
		if c.code == CodeInvalidArgument && !strings.Contains(e.Message, "'x'") && !strings.Contains(e.Message, "(x)") {
			t.Fatalf("%s: the message does not name the input: %v", c.what, e)
		}
		assertClose(t, run1(t, m, good), want)
	}
}

// ABI 1.5: CompileOptions.FileDevice moves a MAXG file wholly on the host onto that device;
// a file that already places a value elsewhere is refused, naming the device. Compile (of a
// graph, which names its own devices) ignores it.
func TestEngineFileDevice(t *testing.T) {
	dir := t.TempDir()
	hostPath := filepath.Join(dir, "mlp.maxg")
	g := mlpGraph(t)
	must(t, g.Save(hostPath))
	g.Close()
	// Building (and saving) a GPU graph needs no GPU.
	gpuPath := filepath.Join(dir, "on_gpu.maxg")
	onGPU, err := NewGraph("on_gpu")
	must(t, err)
	x, err := onGPU.AddInputOn("x", Float32, GPURef(0), Static(2))
	must(t, err)
	must(t, onGPU.SetOutputs([]*Value{op1(t, onGPU, "add", nil, x, x)}, nil))
	must(t, onGPU.Save(gpuPath))
	onGPU.Close()

	ctx, err := NewContext(1)
	must(t, err)
	defer ctx.Close()
	cpu, err := CPU()
	must(t, err)
	defer cpu.Close()
	opts := &CompileOptions{FileDevice: cpu}
	cm, err := ctx.CompileFile(hostPath, opts)
	must(t, err)
	defer cm.Close()
	inputs, err := cm.Inputs()
	must(t, err)
	if inputs[0].Device != CPURef() {
		t.Fatalf("input on %v", inputs[0].Device)
	}
	w := newMLPWeights(11)
	m, err := cm.NewModel(w.tensors(t))
	must(t, err)
	defer m.Close()
	xs, xt := batchOf(t, 2, 60)
	defer xt.Close()
	assertClose(t, run1(t, m, xt), w.reference(xs))

	_, err = ctx.CompileFile(gpuPath, opts)
	if e := asError(t, err); e.Code != CodeFailedPrecondition || e.CodeName != "FAILED_PRECONDITION" ||
		!strings.Contains(e.Message, "already placed on gpu:0") {
		t.Fatal(e)
	}
	m2 := newMLPModel(t, w, opts)
	defer m2.Close()
	assertClose(t, run1(t, m2, xt), w.reference(xs))
}

func TestEngineCompileErrorsAndFiles(t *testing.T) {
	ctx, err := NewContext(1)
	must(t, err)
	defer ctx.Close()
	empty, err := NewGraph("no_outputs")
	must(t, err)
	defer empty.Close()
	_, err = empty.AddInput("x", Float32, Static(2))
	must(t, err)
	_, err = ctx.Compile(empty, nil)
	if e := asError(t, err); e.Code != CodeInvalidArgument {
		t.Fatal(e)
	}
	_, err = ctx.CompileFile("/nonexistent/absent.maxg", nil)
	if !errors.Is(err, &Error{Code: CodeNotFound}) || !strings.Contains(err.Error(), "absent.maxg") {
		t.Fatal(err)
	}

	path := filepath.Join(t.TempDir(), "mlp.maxg")
	g := mlpGraph(t)
	must(t, g.Save(path))
	g.Close()
	cm, err := ctx.CompileFile(path, nil)
	must(t, err)
	defer cm.Close()
	w := newMLPWeights(8)
	m, err := cm.NewModel(w.tensors(t))
	must(t, err)
	defer m.Close()
	x, xt := batchOf(t, 3, 40)
	assertClose(t, run1(t, m, xt), w.reference(x))
	os.Remove(path)

	// Closed handles give errors, never crashes.
	closedCtx, err := NewContext(1)
	must(t, err)
	closedCtx.Close()
	if _, err := closedCtx.Compile(mlpGraph(t), nil); err == nil {
		t.Fatal("compile on a closed context")
	}
	cm.Close()
	cm.Close()
	if _, err := cm.Inputs(); err == nil {
		t.Fatal("inputs of a closed compiled model")
	}
	m.Close()
	m.Close()
	if _, err := m.Execute(xt); !errors.Is(err, &Error{Code: CodeFailedPrecondition}) {
		t.Fatal(err)
	}
	if err := m.Reload(nil); err == nil {
		t.Fatal("reload of a closed model")
	}
}

func TestEngineConcurrentExecutes(t *testing.T) {
	const goroutines, runs = 8, 200
	m := newMLPModel(t, newMLPWeights(9), nil)
	defer m.Close()
	// Each goroutine its own batch size, so plans for several shapes are in use at once.
	inputs := make([]*Tensor, goroutines)
	expected := make([][]float32, goroutines)
	for i := range inputs {
		_, inputs[i] = batchOf(t, 1+3*i, 50+uint64(i))
		expected[i] = run1(t, m, inputs[i])
	}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for r := 0; r < runs; r++ {
				if err := executeSame(m, inputs[i], expected[i]); err != nil {
					errs <- fmt.Errorf("goroutine %d run %d: %w", i, r, err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// executeSame runs m on x and checks the result is bit-for-bit want.
func executeSame(m *Model, x *Tensor, want []float32) error {
	out, err := m.Execute(x)
	if err != nil {
		return err
	}
	defer out[0].Close()
	got, err := out[0].Float32s()
	if err != nil {
		return err
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("element %d: %v, want %v", i, got[i], want[i])
		}
	}
	return nil
}

// Reload and Close may race with running Executes: every result is computed with either the
// old or the new weights, and after Close the calls fail cleanly.
func TestEngineReloadAndCloseWhileExecuting(t *testing.T) {
	first, second := newMLPWeights(21), newMLPWeights(22)
	m := newMLPModel(t, first, nil)
	x, xt := batchOf(t, 5, 23)
	old, fresh := first.reference(x), second.reference(x)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	start := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for {
				out, err := m.Execute(xt)
				if err != nil {
					if !errors.Is(err, &Error{Code: CodeFailedPrecondition}) {
						errs <- err
					}
					return // closed
				}
				got, _ := out[0].Float32s()
				out[0].Close()
				if !near(got, old) && !near(got, fresh) {
					errs <- fmt.Errorf("a result from neither set of weights: %v", got[:4])
					return
				}
			}
		}()
	}
	close(start)
	for i := 0; i < 20; i++ {
		w := first
		if i%2 == 0 {
			w = second
		}
		must(t, m.Reload(w.tensors(t)))
	}
	must(t, m.Close())
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func near(got, want []float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-5+1e-5*math.Abs(float64(want[i])) {
			return false
		}
	}
	return true
}

// ---- capture and replay (MAX's device graphs; on the CPU, the captured plan) ----------------

func TestEngineReplayRewritesTheCapturedOutputs(t *testing.T) {
	w := newMLPWeights(31)
	m := newMLPModel(t, w, nil)
	defer m.Close()
	a, at := batchOf(t, 3, 4)
	b, bt := batchOf(t, 3, 5)
	out, err := m.Capture([]uint64{11}, at)
	must(t, err)
	if len(out) != 1 {
		t.Fatalf("%d outputs", len(out))
	}
	shape, err := out[0].Shape()
	must(t, err)
	if !equal(shape, []int64{3, mlpHidden}) {
		t.Fatalf("shape %v", shape)
	}
	read := func() []float32 {
		t.Helper()
		v, err := out[0].Float32s()
		must(t, err)
		return v
	}
	assertClose(t, read(), w.reference(a))
	if err := executeSame(m, at, read()); err != nil {
		t.Fatalf("capture differs from execute: %v", err)
	}

	// The same tensor, rewritten in place: no new outputs come back.
	must(t, m.Replay([]uint64{11}, bt))
	assertClose(t, read(), w.reference(b))
	must(t, m.DebugVerifyReplay([]uint64{11}, bt))
	assertClose(t, read(), w.reference(b)) // verifying leaves the outputs be
	must(t, m.Replay([]uint64{11}, at))
	assertClose(t, read(), w.reference(a))
	back, err := at.Float32s()
	must(t, err)
	assertClose(t, back, a) // inputs are only read

	// Any uint64 is a key.
	top, err := m.Capture([]uint64{math.MaxUint64}, at)
	must(t, err)
	must(t, m.Replay([]uint64{math.MaxUint64}, bt))
	v, err := top[0].Float32s()
	must(t, err)
	assertClose(t, v, w.reference(b))

	// Capturing again under a key replaces its graph: new outputs; the old keep their values.
	kept := read()
	_, ct := batchOf(t, 3, 6)
	again, err := m.Capture([]uint64{11}, ct)
	must(t, err)
	must(t, m.Replay([]uint64{11}, bt))
	v, err = again[0].Float32s()
	must(t, err)
	assertClose(t, v, w.reference(b))
	assertClose(t, read(), kept)
	if fmt.Sprint(kept) == fmt.Sprint(v) {
		t.Fatal("the replay did not change the new outputs")
	}
	// Closing the outputs is fine: the graph holds its own reference.
	out[0].Close()
	again[0].Close()
	must(t, m.Replay([]uint64{11}, at))
}

func TestEngineGraphCallsCheckKeysAndInputs(t *testing.T) {
	w := newMLPWeights(32)
	m := newMLPModel(t, w, nil)
	x, xt := batchOf(t, 2, 7)

	// One key per device, and the model runs on one.
	for _, keys := range [][]uint64{{1, 1}, {1, 2}, {}, nil} {
		_, err := m.Capture(keys, xt)
		if e := asError(t, err); e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "one device") ||
			!errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("%v: %v", keys, e)
		}
		if e := asError(t, m.Replay(keys, xt)); e.Code != CodeInvalidArgument {
			t.Fatalf("%v: %v", keys, e)
		}
	}

	// Nothing captured under the key: FAILED_PRECONDITION naming it.
	err := m.Replay([]uint64{12345}, xt)
	if e := asError(t, err); !errors.Is(err, ErrFailedPrecondition) ||
		!strings.Contains(e.Message, "nothing is captured under graph key 12345") {
		t.Fatal(e)
	}
	err = m.DebugVerifyReplay([]uint64{12345}, xt)
	if e := asError(t, err); e.Code != CodeFailedPrecondition || !strings.Contains(e.Message, "nothing is captured") ||
		!strings.Contains(e.Message, "12345") {
		t.Fatal(e)
	}
	if e := asError(t, m.Replay([]uint64{math.MaxUint64}, xt)); !strings.Contains(e.Message, "18446744073709551615") {
		t.Fatalf("the key is printed unsigned: %v", e)
	}

	// Bad inputs to Capture are Execute's errors, and record nothing.
	f64, err := Zeros(Float64, []int64{2, 4})
	must(t, err)
	closed, err := Zeros(Float32, []int64{2, 4})
	must(t, err)
	closed.Close()
	_, err = m.Capture([]uint64{12}, f64)
	if e := asError(t, err); e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "float64") {
		t.Fatal(e)
	}
	_, err = m.Capture([]uint64{12})
	if e := asError(t, err); e.Code != CodeInvalidArgument {
		t.Fatal(e)
	}
	_, err = m.Capture([]uint64{12}, nil)
	if e := asError(t, err); e.Code != CodeFailedPrecondition || !strings.Contains(e.Message, "input 0") {
		t.Fatal(e)
	}
	if e := asError(t, m.Replay([]uint64{12}, closed)); !strings.Contains(e.Message, "input 0") {
		t.Fatal(e)
	}
	if err := m.Replay([]uint64{12}, xt); !errors.Is(err, ErrFailedPrecondition) {
		t.Fatalf("a failed capture recorded a graph: %v", err)
	}

	// Replays need the captured shapes; a refused one leaves the outputs as they were.
	out, err := m.Capture([]uint64{12}, xt)
	must(t, err)
	before, err := out[0].Float32s()
	must(t, err)
	assertClose(t, before, w.reference(x))
	unchanged := func() {
		t.Helper()
		if err := sameValues(out[0], before); err != nil {
			t.Fatal(err)
		}
	}
	_, five := batchOf(t, 5, 8)
	err = m.Replay([]uint64{12}, five)
	if e := asError(t, err); e.Code != CodeInvalidArgument ||
		!strings.Contains(e.Message, "batch=5 but graph key 12 was captured with batch=2") {
		t.Fatal(e)
	}
	unchanged()
	if e := asError(t, m.DebugVerifyReplay([]uint64{12}, five)); e.Code != CodeInvalidArgument {
		t.Fatal(e)
	}
	if e := asError(t, m.Replay([]uint64{12}, f64)); e.Code != CodeInvalidArgument {
		t.Fatal(e)
	}
	if e := asError(t, m.Replay([]uint64{12}, xt, xt)); e.Code != CodeInvalidArgument {
		t.Fatal(e)
	}
	unchanged()
	must(t, m.Replay([]uint64{12}, xt))
	unchanged()
	must(t, m.DebugVerifyReplay([]uint64{12}, xt))
	y, yt := batchOf(t, 5, 9)
	assertClose(t, run1(t, m, yt), w.reference(y)) // the model still executes any batch

	// A closed model gives errors, never crashes.
	must(t, m.Close())
	if _, err := m.Capture([]uint64{12}, xt); !errors.Is(err, ErrFailedPrecondition) {
		t.Fatal(err)
	}
	if err := m.Replay([]uint64{12}, xt); !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "closed") {
		t.Fatal(err)
	}
	if err := m.DebugVerifyReplay([]uint64{12}, xt); !errors.Is(err, ErrFailedPrecondition) {
		t.Fatal(err)
	}
	unchanged() // the outputs outlive the model handle
}

// sameValues checks that t holds exactly want.
func sameValues(t *Tensor, want []float32) error {
	got, err := t.Float32s()
	if err != nil {
		return err
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("values %v, want %v", got, want)
	}
	return nil
}

// Replays of one key from many goroutines, each replaying and reading under one mutex so no
// read overlaps another goroutine's rewrite (the contract of the captured outputs).
func TestEngineReplaysOfOneKeyFromManyGoroutines(t *testing.T) {
	w := newMLPWeights(33)
	m := newMLPModel(t, w, nil)
	defer m.Close()
	x0, x0t := batchOf(t, 4, 60)
	out, err := m.Capture([]uint64{5}, x0t)
	must(t, err)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		x, xt := batchOf(t, 4, 61+uint64(i))
		want := w.reference(x)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 50; r++ {
				mu.Lock()
				err := m.Replay([]uint64{5}, xt)
				var got []float32
				if err == nil {
					got, err = out[0].Float32s()
				}
				mu.Unlock()
				if err == nil && !near(got, want) {
					err = fmt.Errorf("run %d: a result for another input", r)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	must(t, m.Replay([]uint64{5}, x0t))
	v, err := out[0].Float32s()
	must(t, err)
	assertClose(t, v, w.reference(x0))
}

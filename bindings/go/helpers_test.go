package maxc

// Helpers the tests of several files share.

import (
	"errors"
	"math"
	"runtime"
	"testing"
	"time"
)

func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *Error, got %T %v", err, err)
	}
	return e
}

func op1(t *testing.T, g *Graph, name string, attrs *Attrs, in ...*Value) *Value {
	t.Helper()
	out, err := g.AddOp(name, in, attrs)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(out) != 1 {
		t.Fatalf("%s: %d outputs", name, len(out))
	}
	return out[0]
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

const (
	mlpIn     = 4
	mlpHidden = 8
)

// mlpGraph is y = relu(x @ w + b) with x float32[batch, 4], weights w float32[4, 8] and
// b float32[8].
func mlpGraph(t *testing.T) *Graph {
	t.Helper()
	g, err := NewGraph("mlp")
	must(t, err)
	x, err := g.AddInput("x", Float32, Sym("batch"), Static(mlpIn))
	must(t, err)
	w, err := g.AddWeight("w", Float32, Static(mlpIn), Static(mlpHidden))
	must(t, err)
	b, err := g.AddWeight("b", Float32, Static(mlpHidden))
	must(t, err)
	y := op1(t, g, "relu", nil, op1(t, g, "add", nil, op1(t, g, "matmul", nil, x, w), b))
	must(t, g.SetOutputs([]*Value{y}, []string{"y"}))
	return g
}

// values are deterministic numbers in [-1, 1) from a small LCG.
func values(n int, seed uint64) []float32 {
	s := seed*6364136223846793005 + 1442695040888963407
	out := make([]float32, n)
	for i := range out {
		s = s*6364136223846793005 + 1442695040888963407
		out[i] = float32(s>>40)/float32(1<<24)*2 - 1
	}
	return out
}

type mlpWeights struct{ w, b []float32 }

func newMLPWeights(seed uint64) mlpWeights {
	return mlpWeights{w: values(mlpIn*mlpHidden, seed), b: values(mlpHidden, seed+100)}
}

func (m mlpWeights) tensors(t *testing.T) map[string]*Tensor {
	t.Helper()
	w, err := FromFloat32s(m.w, []int64{mlpIn, mlpHidden})
	must(t, err)
	b, err := FromFloat32s(m.b, []int64{mlpHidden})
	must(t, err)
	return map[string]*Tensor{"w": w, "b": b}
}

// reference computes relu(x @ w + b) here, row by row.
func (m mlpWeights) reference(x []float32) []float32 {
	rows := len(x) / mlpIn
	y := make([]float32, rows*mlpHidden)
	for r := 0; r < rows; r++ {
		for j := 0; j < mlpHidden; j++ {
			var dot float32
			for k := 0; k < mlpIn; k++ {
				dot += x[r*mlpIn+k] * m.w[k*mlpHidden+j]
			}
			y[r*mlpHidden+j] = float32(math.Max(float64(dot+m.b[j]), 0))
		}
	}
	return y
}

func batchOf(t *testing.T, rows int, seed uint64) ([]float32, *Tensor) {
	t.Helper()
	x := values(rows*mlpIn, seed)
	xt, err := FromFloat32s(x, []int64{int64(rows), mlpIn})
	must(t, err)
	return x, xt
}

func assertClose(t *testing.T, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-5+1e-5*math.Abs(float64(want[i])) {
			t.Fatalf("element %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func newMLPModel(t *testing.T, w mlpWeights, opts *CompileOptions) *Model {
	t.Helper()
	ctx, err := NewContext(2)
	must(t, err)
	defer ctx.Close() // the compiled model keeps the context alive
	g := mlpGraph(t)
	defer g.Close()
	cm, err := ctx.Compile(g, opts)
	must(t, err)
	defer cm.Close()
	m, err := cm.NewModel(w.tensors(t))
	must(t, err)
	return m
}

// run1 executes and returns the one output's values.
func run1(t *testing.T, m *Model, inputs ...*Tensor) []float32 {
	t.Helper()
	out, err := m.Execute(inputs...)
	must(t, err)
	if len(out) != 1 {
		t.Fatalf("%d outputs", len(out))
	}
	defer out[0].Close()
	v, err := out[0].Float32s()
	must(t, err)
	return v
}

// waitForPins waits for borrowed memory to be unpinned (finalizers run asynchronously).
func waitForPins(t *testing.T, want int64) {
	t.Helper()
	for i := 0; i < 100 && livePins.Load() != want; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := livePins.Load(); n != want {
		t.Fatalf("%d slices still pinned, want %d", n, want)
	}
}

func compileMLP(t *testing.T) *CompiledModel {
	t.Helper()
	g := mlpGraph(t)
	defer g.Close()
	return compileGraph(t, g)
}

// compileGraph compiles g on a one-thread context, closed here: the compiled model keeps
// what it needs of it.
func compileGraph(t *testing.T, g *Graph) *CompiledModel {
	t.Helper()
	ctx, err := NewContext(1)
	must(t, err)
	defer ctx.Close()
	cm, err := ctx.Compile(g, nil)
	must(t, err)
	return cm
}

// graphModel compiles g and binds no weights (g must need none).
func graphModel(t *testing.T, g *Graph) *Model {
	t.Helper()
	cm := compileGraph(t, g)
	defer cm.Close()
	m, err := cm.NewModel(nil)
	must(t, err)
	return m
}

// inputGraph is a new graph with one float32 input named x.
func inputGraph(t *testing.T, name string, dims ...Dim) (*Graph, *Value) {
	t.Helper()
	g, err := NewGraph(name)
	must(t, err)
	x, err := g.AddInput("x", Float32, dims...)
	must(t, err)
	return g, x
}

// assertShared writes v to every element of w and reads it back through r: the two must
// view one memory.
func assertShared(t *testing.T, w, r *Tensor, v float32) {
	t.Helper()
	shape, err := w.Shape()
	must(t, err)
	n, err := w.NumElements()
	must(t, err)
	fill := make([]float32, n)
	for i := range fill {
		fill[i] = v
	}
	src, err := FromFloat32s(fill, shape)
	must(t, err)
	defer src.Close()
	must(t, w.CopyFrom(src))
	got, err := r.Float32s()
	must(t, err)
	assertClose(t, got, fill)
}

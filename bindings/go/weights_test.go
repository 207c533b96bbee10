package maxc

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// writeMLPSafetensors writes the MLP's weights plus one tensor the graph does not declare.
func writeMLPSafetensors(t *testing.T, dir string, w mlpWeights) string {
	t.Helper()
	path := filepath.Join(dir, "mlp.safetensors")
	writeSafetensors(t, path, []stTensor{
		{"w", "F32", []int64{mlpIn, mlpHidden}, f32Bytes(w.w)},
		{"b", "F32", []int64{mlpHidden}, f32Bytes(w.b)},
		{"step", "I64", []int64{3}, i64Bytes(7, -8, 9)},
	})
	return path
}

func TestWeightsFromSafetensors(t *testing.T) {
	w := newMLPWeights(31)
	reg, err := NewWeights(writeMLPSafetensors(t, t.TempDir(), w))
	must(t, err)
	defer reg.Close()

	if n, err := reg.Len(); err != nil || n != 3 {
		t.Fatal(n, err)
	}
	names, err := reg.Names()
	must(t, err)
	sort.Strings(names)
	if strings.Join(names, ",") != "b,step,w" {
		t.Fatal(names)
	}
	info, err := reg.Info("w")
	must(t, err)
	if info.DType != Float32 || !equal(info.Shape, []int64{mlpIn, mlpHidden}) || info.Encoding != QuantNone {
		t.Fatalf("%+v", info)
	}
	step, err := reg.Tensor("step")
	must(t, err)
	if v, err := step.Int64s(); err != nil || !equal(v, []int64{7, -8, 9}) {
		t.Fatal(v, err)
	}
	if ro, err := step.IsReadOnly(); err != nil || !ro {
		t.Fatal("a tensor of a weights file must be read-only", ro, err)
	}
	step.Close()
	if has, err := reg.Has("b"); err != nil || !has {
		t.Fatal(has, err)
	}
	if has, err := reg.Has("nope"); err != nil || has {
		t.Fatal(has, err)
	}
	_, err = reg.Info("nope")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nope") {
		t.Fatal(err)
	}

	// A model binds the declared weights by name and ignores "step"; it keeps them after the
	// registry is closed.
	cm := compileMLP(t)
	defer cm.Close()
	m, err := cm.NewModelFromWeights(reg)
	must(t, err)
	defer m.Close()
	must(t, reg.Close())
	x, xt := batchOf(t, 6, 32)
	assertClose(t, run1(t, m, xt), w.reference(x))
	if _, err := reg.Names(); !errors.Is(err, ErrFailedPrecondition) {
		t.Fatal("a closed registry answered", err)
	}

	// Reload from an in-memory registry that has only "w": "b" stays.
	second := newMLPWeights(33)
	mem, err := NewWeights()
	must(t, err)
	defer mem.Close()
	wt, err := FromFloat32s(second.w, []int64{mlpIn, mlpHidden})
	must(t, err)
	must(t, mem.AddTensor("w", wt, QuantNone))
	wt.Close() // the registry keeps its own reference
	must(t, m.ReloadFromWeights(mem))
	assertClose(t, run1(t, m, xt), mlpWeights{w: second.w, b: w.b}.reference(x))
}

func TestWeightsErrors(t *testing.T) {
	dir := t.TempDir()
	cm := compileMLP(t)
	defer cm.Close()
	reg, err := NewWeights()
	must(t, err)
	defer reg.Close()
	wt, err := FromFloat32s(values(mlpIn*mlpHidden, 1), []int64{mlpIn, mlpHidden})
	must(t, err)
	defer wt.Close()
	must(t, reg.AddTensor("w", wt, QuantNone))

	checks := []struct {
		what string
		err  error
		want *Error
		says string
	}{
		{"a taken name", reg.AddTensor("w", wt, QuantNone), ErrAlreadyExists, "'w'"},
		{"an empty name", reg.AddTensor("", wt, QuantNone), ErrInvalidArgument, "name"},
		{"float32 as q8_0", reg.AddTensor("wq", wt, QuantQ8_0), ErrInvalidArgument, "uint8"},
		{"a closed tensor", reg.AddTensor("c", closedTensor(t), QuantNone), ErrFailedPrecondition, "closed"},
		{"a missing file", reg.AddFile(filepath.Join(dir, "absent.safetensors")), ErrNotFound, "absent.safetensors"},
		{"a model missing b", modelErr(cm, reg), ErrNotFound, "'b'"},
	}
	for _, c := range checks {
		if !errors.Is(c.err, c.want) || !strings.Contains(c.err.Error(), c.says) {
			t.Errorf("%s: %v, want %s saying %q", c.what, c.err, c.want.CodeName, c.says)
		}
	}

	// A truncated file adds nothing and says which file.
	full := writeMLPSafetensors(t, dir, newMLPWeights(2))
	data, err := os.ReadFile(full)
	must(t, err)
	cut := filepath.Join(dir, "cut.safetensors")
	must(t, os.WriteFile(cut, data[:len(data)-10], 0o644))
	err = reg.AddFile(cut)
	if !errors.Is(err, ErrDataLoss) || !strings.Contains(err.Error(), "cut.safetensors") {
		t.Fatal(err)
	}
	if n, _ := reg.Len(); n != 1 {
		t.Fatalf("a failed AddFile left %d tensors", n)
	}

	// A weight of the wrong shape is refused by name.
	bad, err := NewWeights()
	must(t, err)
	defer bad.Close()
	b7, err := FromFloat32s(make([]float32, 7), []int64{7})
	must(t, err)
	must(t, bad.AddTensor("w", wt, QuantNone))
	must(t, bad.AddTensor("b", b7, QuantNone))
	if _, err := cm.NewModelFromWeights(bad); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "'b' is float32[7]") {
		t.Fatal(err)
	}
}

func closedTensor(t *testing.T) *Tensor {
	x, err := Zeros(Float32, []int64{1})
	must(t, err)
	x.Close()
	return x
}

func modelErr(cm *CompiledModel, w *Weights) error {
	m, err := cm.NewModelFromWeights(w)
	m.Close()
	return err
}

func TestQuantEncodings(t *testing.T) {
	cases := []struct {
		e             QuantEncoding
		name          string
		elems, nbytes int
	}{
		{QuantQ4_0, "q4_0", 32, 18}, {QuantQ8_0, "q8_0", 32, 34}, {QuantQ4K, "q4_k", 256, 144},
		{QuantQ5K, "q5_k", 256, 176}, {QuantQ6K, "q6_k", 256, 210},
	}
	for _, c := range cases {
		el, by, err := c.e.Block()
		if err != nil || el != c.elems || by != c.nbytes || c.e.String() != c.name {
			t.Errorf("%v: block (%d, %d) %v, want %s (%d, %d)", c.e, el, by, err, c.name, c.elems, c.nbytes)
		}
	}
	if QuantNone.String() != "none" || QuantEncoding(99).String() != "QuantEncoding(99)" {
		t.Fatal(QuantNone, QuantEncoding(99))
	}
	for _, e := range []QuantEncoding{QuantNone, 99} {
		if _, _, err := e.Block(); !errors.Is(err, ErrInvalidArgument) {
			t.Fatal(e, err)
		}
	}
}

// A float32 tensor quantized to Q8_0 round-trips through a registry and a GGUF file, and the
// graph's dequantize reads it back within Q8_0's error (half a step of max|block| / 127).
func TestQuantizeSaveGGUFAndDequantize(t *testing.T) {
	const rows, k = 2, 64
	x := values(rows*k, 5)
	xt, err := FromFloat32s(x, []int64{rows, k})
	must(t, err)
	defer xt.Close()
	q, err := xt.Quantize(QuantQ8_0)
	must(t, err)
	defer q.Close()
	if s, _ := q.Shape(); !equal(s, []int64{rows, k / 32 * 34}) {
		t.Fatal(s)
	}
	if d, _ := q.DType(); d != Uint8 {
		t.Fatal(d)
	}

	reg, err := NewWeights()
	must(t, err)
	defer reg.Close()
	must(t, reg.AddTensor("x", xt, QuantNone))
	must(t, reg.AddTensor("q", q, QuantQ8_0))
	path := filepath.Join(t.TempDir(), "q.gguf")
	must(t, reg.SaveGGUF(path, "roundtrip"))

	back, err := NewWeights(path)
	must(t, err)
	defer back.Close()
	info, err := back.Info("q")
	must(t, err)
	if info.DType != Uint8 || !equal(info.Shape, []int64{rows, 68}) || info.Encoding != QuantQ8_0 {
		t.Fatalf("%+v", info)
	}
	xb, err := back.Tensor("x")
	must(t, err)
	got, err := xb.Float32s()
	must(t, err)
	xb.Close()
	assertClose(t, got, x)

	diff := dequantizeDiff(t, back, x, rows, k)
	var worst float64
	for _, d := range diff {
		worst = math.Max(worst, math.Abs(float64(d)))
	}
	t.Logf("max |x - dequantize(quantize(x))| = %.5f", worst)
	if worst > 1.0/127 {
		t.Fatalf("x - dequantize(q) reaches %v", worst)
	}

	// Quantize refuses what it cannot encode, naming the reason.
	ints, err := FromInt64s([]int64{1, 2}, []int64{2})
	must(t, err)
	defer ints.Close()
	odd, err := FromFloat32s(make([]float32, 30), []int64{1, 30})
	must(t, err)
	defer odd.Close()
	for what, err := range map[string]error{
		"int64": qErr(ints, QuantQ8_0), "k=30": qErr(odd, QuantQ8_0), "none": qErr(xt, QuantNone),
	} {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("quantize %s: %v", what, err)
		}
	}
	if err := reg.SaveGGUF(filepath.Join(t.TempDir(), "no", "dir", "x.gguf"), ""); err == nil ||
		!strings.Contains(err.Error(), "x.gguf") {
		t.Fatal(err)
	}
}

func qErr(t *Tensor, e QuantEncoding) error {
	q, err := t.Quantize(e)
	q.Close()
	return err
}

// dequantizeDiff runs x - dequantize(q) with q bound from reg.
func dequantizeDiff(t *testing.T, reg *Weights, x []float32, rows, k int64) []float32 {
	t.Helper()
	g, in := inputGraph(t, "dequant", Static(rows), Static(k))
	defer g.Close()
	qv, err := g.AddWeight("q", Uint8, Static(rows), Static(k/32*34))
	must(t, err)
	d := op1(t, g, "dequantize", NewAttrs().Str("encoding", QuantQ8_0.String()), qv)
	must(t, g.SetOutputs([]*Value{op1(t, g, "sub", nil, in, d)}, nil))
	cm := compileGraph(t, g)
	defer cm.Close()
	m, err := cm.NewModelFromWeights(reg)
	must(t, err)
	defer m.Close()
	xt, err := FromFloat32s(x, []int64{rows, k})
	must(t, err)
	defer xt.Close()
	return run1(t, m, xt)
}

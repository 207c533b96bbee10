package maxc

import "testing"

// closeAll closes every tensor of out.
func closeAll(out []*Tensor) {
	for _, o := range out {
		o.Close()
	}
}

// nonzero's count is a symbol no input binds: each execution computes it and runs what
// follows (here a gather_nd of the found elements) for that count, zero included.
func TestNonzeroCountDecidedAtRunTime(t *testing.T) {
	g, x := inputGraph(t, "nonzero", Static(2), Static(3))
	defer g.Close()
	indices := op1(t, g, "nonzero", NewAttrs().Dims("out_dim", []Dim{Sym("count")}), x)
	if s, err := indices.Shape(); err != nil || len(s) != 2 || s[0].String() != "count" || s[1].Size() != 2 {
		t.Fatal(s, err)
	}
	two, err := FromFloat32s([]float32{2}, []int64{})
	must(t, err)
	defer two.Close()
	c, err := g.AddConstant(two)
	must(t, err)
	picked := op1(t, g, "gather_nd", NewAttrs().Int("batch_dims", 0), x, indices)
	doubled := op1(t, g, "mul", nil, picked, c)
	must(t, g.SetOutputs([]*Value{indices, doubled}, []string{"indices", "doubled"}))
	m := graphModel(t, g)
	defer m.Close()

	run := func(in []float32) []*Tensor {
		xt, err := FromFloat32s(in, []int64{2, 3})
		must(t, err)
		defer xt.Close()
		out, err := m.Execute(xt)
		must(t, err)
		return out
	}
	out := run([]float32{0, 1.5, 0, -2, 0, 3})
	defer closeAll(out)
	if s, _ := out[0].Shape(); !equal(s, []int64{3, 2}) {
		t.Fatal(s)
	}
	if v, err := out[0].Int64s(); err != nil || !equal(v, []int64{0, 1, 1, 0, 1, 2}) {
		t.Fatal(v, err)
	}
	got, err := out[1].Float32s()
	must(t, err)
	assertClose(t, got, []float32{3, -4, 6})

	none := run(make([]float32, 6))
	defer closeAll(none)
	if s, _ := none[0].Shape(); !equal(s, []int64{0, 2}) {
		t.Fatal(s)
	}
	if s, _ := none[1].Shape(); !equal(s, []int64{0}) {
		t.Fatal(s)
	}
}

// masked_scatter fills the masked positions of the input, row-major, with the updates in
// order; the mask broadcasts along rows, and too few updates are an execution error.
func TestMaskedScatterFillsInOrder(t *testing.T) {
	g, x := inputGraph(t, "masked_scatter", Static(2), Static(3))
	defer g.Close()
	mask, err := g.AddInput("mask", Bool, Static(3))
	must(t, err)
	updates, err := g.AddInput("updates", Float32, Sym("u"))
	must(t, err)
	y := op1(t, g, "masked_scatter", NewAttrs().Dims("out_dim", []Dim{Sym("filled")}), x, mask, updates)
	must(t, g.SetOutputs([]*Value{y}, []string{"y"}))
	m := graphModel(t, g)
	defer m.Close()

	xt, err := FromFloat32s([]float32{1, 2, 3, 4, 5, 6}, []int64{2, 3})
	must(t, err)
	defer xt.Close()
	mt, err := FromBytes(Bool, []byte{1, 0, 1}, []int64{3})
	must(t, err)
	defer mt.Close()
	ut, err := FromFloat32s([]float32{-1, -2, -3, -4, -5}, []int64{5})
	must(t, err)
	defer ut.Close()
	out, err := m.Execute(xt, mt, ut)
	must(t, err)
	defer closeAll(out)
	got, err := out[0].Float32s()
	must(t, err)
	assertClose(t, got, []float32{-1, 2, -2, -3, 5, -4})

	few, err := FromFloat32s([]float32{-1, -2, -3}, []int64{3})
	must(t, err)
	defer few.Close()
	if out, err := m.Execute(xt, mt, few); err == nil {
		closeAll(out)
		t.Fatal("4 masked positions and 3 updates: want an error")
	}
}

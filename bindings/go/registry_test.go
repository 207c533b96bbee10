package maxc

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestOpRegistry(t *testing.T) {
	ops, err := RegisteredOps()
	must(t, err)
	if len(ops) < 50 {
		t.Fatalf("only %d registered ops", len(ops))
	}
	byName := map[string]OpSchema{}
	for i, op := range ops {
		if i > 0 && ops[i-1].Name > op.Name {
			t.Fatalf("not sorted: %s before %s", ops[i-1].Name, op.Name)
		}
		byName[op.Name] = op
	}
	mm := byName["matmul"]
	if len(mm.Inputs) != 2 || mm.Inputs[0] != (OpInput{"lhs", InputOne}) || len(mm.Attrs) != 0 {
		t.Fatalf("matmul: %+v", mm)
	}
	cast := byName["cast"]
	if len(cast.Attrs) != 2 || cast.Attrs[0] != (OpAttr{"dtype", AttrDType, AttrRequired}) ||
		cast.Attrs[1] != (OpAttr{"saturate", AttrBool, AttrDefaulted}) {
		t.Fatalf("cast: %+v", cast)
	}
	if c := byName["concat"]; len(c.Inputs) != 1 || c.Inputs[0].Arity != InputVariadic {
		t.Fatalf("concat: %+v", c)
	}
	if _, err := LookupOp("no_such_op", 0); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no_such_op") {
		t.Fatal(err)
	}

	// Every registered op reaches its schema through AddOp: a call without inputs or attrs
	// is refused by the op's own checks (never NOT_FOUND), naming the op, and the graph is
	// left as it was.
	g, err := NewGraph("registry")
	must(t, err)
	defer g.Close()
	for _, op := range ops {
		_, err := g.AddOpVersion(op.Name, op.Version, nil, nil)
		e := asError(t, err)
		if e.Code == CodeNotFound || !strings.Contains(e.Message, op.Name) {
			t.Errorf("%s v%d: %v", op.Name, op.Version, err)
		}
	}
	if n, _ := g.NumOps(); n != 0 {
		t.Fatalf("failed calls added %d ops", n)
	}
}

// A sample of op families built through AddOp with their attributes, executed, and checked
// against values computed here.
func TestOpFamiliesExecute(t *testing.T) {
	g, x := inputGraph(t, "families", Static(2), Static(3))
	defer g.Close()
	sum := op1(t, g, "sum", NewAttrs().Int("axis", 1), x)                         // [2, 1]
	amax := op1(t, g, "argmax", NewAttrs().Int("axis", -1), x)                    // [2, 1] int64
	tr := op1(t, g, "transpose", NewAttrs().Int("axis_1", 0).Int("axis_2", 1), x) // [3, 2]
	rs := op1(t, g, "reshape", NewAttrs().Dims("shape", []Dim{Static(6)}), tr)
	cat := op1(t, g, "concat", NewAttrs().Int("axis", 0), x, x) // [4, 3]
	sm := op1(t, g, "softmax", NewAttrs().Int("axis", -1), x)
	must(t, g.SetOutputs([]*Value{sum, amax, rs, cat, sm}, []string{"sum", "argmax", "flat_t", "cat", "softmax"}))

	m := graphModel(t, g)
	defer m.Close()
	in := []float32{1, 5, 2, -1, -3, 0}
	xt, err := FromFloat32s(in, []int64{2, 3})
	must(t, err)
	defer xt.Close()
	out, err := m.Execute(xt)
	must(t, err)
	defer func() {
		for _, o := range out {
			o.Close()
		}
	}()
	f := func(i int) []float32 { v, err := out[i].Float32s(); must(t, err); return v }
	assertClose(t, f(0), []float32{8, -4})
	if v, err := out[1].Int64s(); err != nil || !equal(v, []int64{1, 2}) {
		t.Fatal(v, err)
	}
	assertClose(t, f(2), []float32{1, -1, 5, -3, 2, 0})
	if s, _ := out[3].Shape(); !equal(s, []int64{4, 3}) {
		t.Fatal(s)
	}
	want := make([]float32, 6)
	for r := 0; r < 2; r++ {
		var total float64
		for c := 0; c < 3; c++ {
			total += math.Exp(float64(in[3*r+c]))
		}
		for c := 0; c < 3; c++ {
			want[3*r+c] = float32(math.Exp(float64(in[3*r+c])) / total)
		}
	}
	assertClose(t, f(4), want)
}

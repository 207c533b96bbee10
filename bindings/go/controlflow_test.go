package maxc

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// unaryGraph is a subgraph of one float32 [2] input v giving op(v) (a one-input registry op).
func unaryGraph(t *testing.T, name, op string) *Graph {
	t.Helper()
	g, err := NewGraph(name)
	must(t, err)
	v, err := g.AddInput("v", Float32, Static(2))
	must(t, err)
	must(t, g.SetOutputs([]*Value{op1(t, g, op, nil, v)}, nil))
	return g
}

// ABI 1.6: a cond whose branches are subgraphs added with AddSubgraph runs the branch its
// predicate picks; a while_loop runs its body until its predicate fails (a factorial, with n
// riding along as a loop value); and a call that does not fit its subgraph is refused.
func TestControlFlow(t *testing.T) {
	negate, abs := unaryGraph(t, "negate", "negate"), unaryGraph(t, "abs", "abs")
	defer negate.Close()
	defer abs.Close()
	g, err := NewGraph("select")
	must(t, err)
	defer g.Close()
	p, err := g.AddInput("p", Bool)
	must(t, err)
	x, err := g.AddInput("x", Float32, Static(2))
	must(t, err)
	thenIdx, err := g.AddSubgraph(negate)
	must(t, err)
	elseIdx, err := g.AddSubgraph(abs)
	must(t, err)
	if thenIdx != 0 || elseIdx != 1 {
		t.Fatalf("subgraph indices %d, %d", thenIdx, elseIdx)
	}
	attrs := NewAttrs().Graph("then_graph", thenIdx).Graph("else_graph", elseIdx)
	defer attrs.Close()
	must(t, g.SetOutputs([]*Value{op1(t, g, "cond", attrs, p, x)}, nil))

	m := graphModel(t, g)
	defer m.Close()
	xt, err := FromFloat32s([]float32{1.5, -2}, []int64{2})
	must(t, err)
	defer xt.Close()
	for _, c := range []struct {
		pred byte
		want []float32
	}{{1, []float32{-1.5, 2}}, {0, []float32{1.5, 2}}} {
		pt, err := FromBytes(Bool, []byte{c.pred}, []int64{})
		must(t, err)
		assertClose(t, run1(t, m, pt, xt), c.want)
		pt.Close()
	}

	// A subgraph whose input is float32 [2] does not take x of float32 [3]: INVALID_ARGUMENT
	// naming it; no op is added.
	wide, err := g.AddInput("wide", Float32, Static(3))
	must(t, err)
	idx, err := g.AddSubgraph(negate)
	must(t, err)
	before, _ := g.NumOps()
	callAttrs := NewAttrs().Graph("graph", idx)
	defer callAttrs.Close()
	_, err = g.AddOp("call", []*Value{wide}, callAttrs)
	if e := asError(t, err); e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "negate") {
		t.Fatal(e)
	}
	if n, _ := g.NumOps(); n != before {
		t.Fatalf("a refused call added %d ops", n-before)
	}
	if _, err := g.AddSubgraph(nil); err == nil {
		t.Fatal("a nil subgraph was added")
	}
}

// int64Scalars adds rank-0 int64 inputs named names to g.
func int64Scalars(t *testing.T, g *Graph, names ...string) []*Value {
	t.Helper()
	out := make([]*Value, len(names))
	for i, n := range names {
		v, err := g.AddInput(n, Int64)
		must(t, err)
		out[i] = v
	}
	return out
}

func TestWhileLoopFactorial(t *testing.T) {
	pred, err := NewGraph("i_le_n")
	must(t, err)
	defer pred.Close()
	pv := int64Scalars(t, pred, "i", "acc", "n")
	must(t, pred.SetOutputs([]*Value{op1(t, pred, "less_equal", nil, pv[0], pv[2])}, nil))

	body, err := NewGraph("step")
	must(t, err)
	defer body.Close()
	bv := int64Scalars(t, body, "i", "acc", "n")
	one, err := FromInt64s([]int64{1}, []int64{})
	must(t, err)
	defer one.Close()
	bodyOne, err := body.AddConstant(one)
	must(t, err)
	next := op1(t, body, "add", nil, bv[0], bodyOne)
	must(t, body.SetOutputs([]*Value{next, op1(t, body, "mul", nil, bv[1], bv[0]), bv[2]}, nil))

	g, err := NewGraph("factorial")
	must(t, err)
	defer g.Close()
	n := int64Scalars(t, g, "n")[0]
	start, err := g.AddConstant(one)
	must(t, err)
	pi, err := g.AddSubgraph(pred)
	must(t, err)
	bi, err := g.AddSubgraph(body)
	must(t, err)
	attrs := NewAttrs().Graph("predicate", pi).Graph("body", bi)
	defer attrs.Close()
	out, err := g.AddOp("while_loop", []*Value{start, start, n}, attrs)
	must(t, err)
	if len(out) != 3 {
		t.Fatalf("%d loop results", len(out))
	}
	must(t, g.SetOutputs([]*Value{out[1]}, nil))

	m := graphModel(t, g)
	defer m.Close()
	for _, c := range [][2]int64{{0, 1}, {1, 1}, {5, 120}, {10, 3628800}} {
		nt, err := FromInt64s([]int64{c[0]}, []int64{})
		must(t, err)
		res, err := m.Execute(nt)
		must(t, err)
		got, err := res[0].Int64s()
		must(t, err)
		if len(got) != 1 || got[0] != c[1] {
			t.Fatalf("%d! = %v, want %d", c[0], got, c[1])
		}
		res[0].Close()
		nt.Close()
	}
}

// The registry reports cond's operands as "zero or more".
func TestRegistryAnyArity(t *testing.T) {
	s, err := LookupOp("cond", 0)
	must(t, err)
	if len(s.Inputs) != 2 || s.Inputs[0] != (OpInput{"pred", InputOne}) || s.Inputs[1] != (OpInput{"args", InputAny}) {
		t.Fatalf("cond: %+v", s)
	}
}

// i = 0; while i < n: i++ — with n = 2^52 (the endless ONNX Loop the fuzzer found), stopped
// by run options; the model then runs normally.
func TestRunOptionsStopAnEndlessLoop(t *testing.T) {
	pred, err := NewGraph("i_lt_n")
	must(t, err)
	defer pred.Close()
	pv := int64Scalars(t, pred, "i", "n")
	must(t, pred.SetOutputs([]*Value{op1(t, pred, "less", nil, pv[0], pv[1])}, nil))
	body, err := NewGraph("step")
	must(t, err)
	defer body.Close()
	bv := int64Scalars(t, body, "i", "n")
	one, err := FromInt64s([]int64{1}, []int64{})
	must(t, err)
	defer one.Close()
	bodyOne, err := body.AddConstant(one)
	must(t, err)
	must(t, body.SetOutputs([]*Value{op1(t, body, "add", nil, bv[0], bodyOne), bv[1]}, nil))
	g, err := NewGraph("count")
	must(t, err)
	defer g.Close()
	n := int64Scalars(t, g, "n")[0]
	zero, err := FromInt64s([]int64{0}, []int64{})
	must(t, err)
	defer zero.Close()
	start, err := g.AddConstant(zero)
	must(t, err)
	pi, err := g.AddSubgraph(pred)
	must(t, err)
	bi, err := g.AddSubgraph(body)
	must(t, err)
	attrs := NewAttrs().Graph("predicate", pi).Graph("body", bi)
	defer attrs.Close()
	out, err := g.AddOp("while_loop", []*Value{start, n}, attrs)
	must(t, err)
	must(t, g.SetOutputs([]*Value{out[0]}, nil))
	m := graphModel(t, g)
	defer m.Close()

	endless, err := FromInt64s([]int64{1 << 52}, []int64{})
	must(t, err)
	defer endless.Close()
	opts := NewRunOptions()
	opts.Timeout = 50 * time.Millisecond
	began := time.Now()
	_, err = m.ExecuteWithOptions(opts, endless)
	if !errors.Is(err, ErrDeadlineExceeded) || !strings.Contains(err.Error(), "op 'while_loop' (iteration ") {
		t.Fatalf("got %v, want DEADLINE_EXCEEDED naming the loop", err)
	}
	if time.Since(began) > 5*time.Second {
		t.Fatalf("stopped after %v", time.Since(began))
	}

	opts = NewRunOptions()
	go func() {
		time.Sleep(50 * time.Millisecond)
		opts.Cancel()
	}()
	if _, err = m.ExecuteWithOptions(opts, endless); !errors.Is(err, ErrCancelled) {
		t.Fatalf("got %v, want CANCELLED", err)
	}
	opts.Reset()
	three, err := FromInt64s([]int64{3}, []int64{})
	must(t, err)
	defer three.Close()
	res, err := m.ExecuteWithOptions(opts, three)
	must(t, err)
	got, err := res[0].Int64s()
	must(t, err)
	if len(got) != 1 || got[0] != 3 {
		t.Fatalf("counted to %v, want 3", got)
	}
	res[0].Close()
}

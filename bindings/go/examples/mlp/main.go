// Command mlp builds a two-layer MLP graph, compiles it, binds its weights and runs it
// from several goroutines. Its comparable result is the three "batch" lines, which every
// binding's MLP example prints alike.
//
//	cd bindings/go && PKG_CONFIG_PATH=$PWD/../../build go run ./examples/mlp
package main

import (
	"fmt"
	"log"
	"sync"

	maxc "github.com/max-c/max_c/bindings/go/maxc"
)

// builder adds to a graph and keeps the first error, so building reads straight through
// (the errWriter pattern); later calls after an error do nothing.
type builder struct {
	g   *maxc.Graph
	err error
}

func (b *builder) input(name string, dims ...maxc.Dim) *maxc.Value {
	if b.err != nil {
		return nil
	}
	v, err := b.g.AddInput(name, maxc.Float32, dims...)
	b.err = err
	return v
}

func (b *builder) weight(name string, dims ...maxc.Dim) *maxc.Value {
	if b.err != nil {
		return nil
	}
	v, err := b.g.AddWeight(name, maxc.Float32, dims...)
	b.err = err
	return v
}

// op adds a one-output op without attributes.
func (b *builder) op(name string, in ...*maxc.Value) *maxc.Value {
	if b.err != nil {
		return nil
	}
	out, err := b.g.AddOp(name, in, nil)
	if err != nil {
		b.err = err
		return nil
	}
	return out[0]
}

// buildGraph is logits = relu(x @ w1 + b1) @ w2 with a symbolic batch.
func buildGraph() (*maxc.Graph, error) {
	g, err := maxc.NewGraph("mlp")
	if err != nil {
		return nil, err
	}
	b := &builder{g: g}
	x := b.input("x", maxc.Sym("batch"), maxc.Static(4))
	w1 := b.weight("w1", maxc.Static(4), maxc.Static(16))
	b1 := b.weight("b1", maxc.Static(16))
	w2 := b.weight("w2", maxc.Static(16), maxc.Static(3))
	h := b.op("relu", b.op("add", b.op("matmul", x, w1), b1))
	logits := b.op("matmul", h, w2)
	if b.err == nil {
		b.err = g.SetOutputs([]*maxc.Value{logits}, []string{"logits"})
	}
	if b.err != nil {
		g.Close()
		return nil, b.err
	}
	return g, nil
}

// pattern is a float32 tensor of shape whose element i is ((i*7 % 11) - 5) * scale: the
// canonical MLP's inputs, shared with the other bindings' examples so their lines compare.
func pattern(shape []int64, scale float32) *maxc.Tensor {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = (float32(i*7%11) - 5) * scale
	}
	t, err := maxc.FromFloat32s(data, shape)
	if err != nil {
		log.Fatal(err)
	}
	return t
}

func main() {
	fmt.Println("libmax_c", maxc.VersionString())
	ctx, err := maxc.NewContext(0)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	g, err := buildGraph()
	if err != nil {
		log.Fatal(err)
	}
	cm, err := ctx.Compile(g, nil)
	g.Close() // the compiled model does not refer to the graph
	if err != nil {
		log.Fatal(err)
	}
	defer cm.Close()
	inputs, _ := cm.Inputs()
	outputs, _ := cm.Outputs()
	weights, _ := cm.Weights()
	for _, s := range append(append(inputs, outputs...), weights...) {
		fmt.Printf("  %v  (shape %v)\n", s, s.Shape())
	}

	model, err := cm.NewModel(map[string]*maxc.Tensor{
		"w1": pattern([]int64{4, 16}, 0.1),
		"b1": pattern([]int64{16}, 0.01),
		"w2": pattern([]int64{16, 3}, 0.05),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer model.Close()

	// One model serves any batch size, from many goroutines at once.
	batches := []int64{1, 7, 64}
	rows := make([][]float32, len(batches))
	var wg sync.WaitGroup
	for i, b := range batches {
		wg.Add(1)
		go func(i int, b int64) {
			defer wg.Done()
			out, err := model.Execute(pattern([]int64{b, 4}, 0.5))
			if err != nil {
				log.Fatal(err)
			}
			defer out[0].Close()
			v, err := out[0].Float32s()
			if err != nil {
				log.Fatal(err)
			}
			rows[i] = v[:3]
		}(i, b)
	}
	wg.Wait()
	for i, b := range batches {
		fmt.Printf("batch %2d: first row %.6f %.6f %.6f\n", b, rows[i][0], rows[i][1], rows[i][2])
	}

	// A bad input is an error naming the input; the model stays usable.
	if _, err := model.Execute(pattern([]int64{2, 5}, 1)); err != nil {
		fmt.Println("as expected:", err)
	}
}

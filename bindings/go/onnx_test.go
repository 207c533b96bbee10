package maxc

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The tiny ONNX model: Y = MatMul(X, W) + B with X float[N, 3], W float[3, 2] and B float[2]
// as initializers (W as raw_data, B as float_data), opset 13, ir_version 8.
var (
	onnxW = []float32{1, -2, 0.5, 3, -1, 0.25}
	onnxB = []float32{0.5, -1.5}
)

func tinyOnnx(opset int64, matmulOp string) []byte {
	return onnxModel(opset,
		[]*pb{
			onnxNode(matmulOp, "mm", []string{"X", "W"}, []string{"XW"}),
			onnxNode("Add", "bias", []string{"XW", "B"}, []string{"Y"}),
		},
		[]*pb{
			onnxFloatTensor("W", []int64{3, 2}, onnxW, true),
			onnxFloatTensor("B", []int64{2}, onnxB, false),
		},
		[]*pb{onnxValueInfo("X", onnxFloat, onnxDim{param: "N"}, onnxDim{value: 3})},
		[]*pb{onnxValueInfo("Y", onnxFloat, onnxDim{param: "N"}, onnxDim{value: 2})})
}

// onnxReference is x @ w + b for x [rows, 3] and w [3, 2].
func onnxReference(x, w, b []float32) []float32 {
	rows := len(x) / 3
	y := make([]float32, rows*2)
	for r := 0; r < rows; r++ {
		for j := 0; j < 2; j++ {
			s := b[j]
			for k := 0; k < 3; k++ {
				s += x[r*3+k] * w[k*2+j]
			}
			y[r*2+j] = s
		}
	}
	return y
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	must(t, os.WriteFile(path, data, 0o644))
	return path
}

func TestOnnxCompileAndRun(t *testing.T) {
	ctx, err := NewContext(1)
	must(t, err)
	defer ctx.Close()
	cm, err := ctx.CompileFile(writeFile(t, "tiny.onnx", tinyOnnx(13, "MatMul")), nil)
	must(t, err)
	defer cm.Close()

	inputs, err := cm.Inputs()
	must(t, err)
	if len(inputs) != 1 || inputs[0].Name != "X" || inputs[0].DType != Float32 ||
		!equal(inputs[0].Shape(), []int64{-1, 3}) || inputs[0].DimNames()[0] != "N" {
		t.Fatalf("inputs %v", inputs)
	}
	outputs, err := cm.Outputs()
	must(t, err)
	if len(outputs) != 1 || outputs[0].Name != "Y" || outputs[0].Rank() != 2 {
		t.Fatalf("outputs %v", outputs)
	}
	weights, err := cm.Weights()
	must(t, err)
	var names []string
	for _, w := range weights {
		names = append(names, w.Name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "B,W" {
		t.Fatalf("the initializers are not the model's weights: %v", weights)
	}

	// No weights given: the initializers are bound.
	m, err := cm.NewModel(nil)
	must(t, err)
	defer m.Close()
	x := []float32{1, 2, 3, -1, 0, 4}
	xt, err := FromFloat32s(x, []int64{2, 3})
	must(t, err)
	defer xt.Close()
	assertClose(t, run1(t, m, xt), onnxReference(x, onnxW, onnxB))
	out, err := m.ExecuteNamed(map[string]*Tensor{"X": xt})
	must(t, err)
	got, err := out[0].Float32s()
	must(t, err)
	out[0].Close()
	assertClose(t, got, onnxReference(x, onnxW, onnxB))

	// An initializer given by name replaces the file's.
	b2 := []float32{10, 20}
	bt, err := FromFloat32s(b2, []int64{2})
	must(t, err)
	m2, err := cm.NewModel(map[string]*Tensor{"B": bt})
	must(t, err)
	defer m2.Close()
	assertClose(t, run1(t, m2, xt), onnxReference(x, onnxW, b2))
}

func TestOnnxErrors(t *testing.T) {
	ctx, err := NewContext(1)
	must(t, err)
	defer ctx.Close()
	good := tinyOnnx(13, "MatMul")
	cases := []struct {
		name string
		data []byte
		code *Error
		says string
	}{
		{"unknown_op.onnx", tinyOnnx(13, "Frobnicate"), ErrUnimplemented, "operator 'Frobnicate'"},
		{"old_opset.onnx", tinyOnnx(6, "MatMul"), ErrUnimplemented, "opset 6"},
		{"truncated.onnx", good[:len(good)-7], nil, "truncated"},
	}
	for _, c := range cases {
		_, err := ctx.CompileFile(writeFile(t, c.name, c.data), nil)
		e := asError(t, err)
		if c.code != nil && !errors.Is(err, c.code) {
			t.Errorf("%s: %v, want %s", c.name, err, c.code.CodeName)
		}
		if c.code == nil && e.Code != CodeDataLoss && e.Code != CodeInvalidArgument {
			t.Errorf("%s: %v, want DATA_LOSS or INVALID_ARGUMENT", c.name, err)
		}
		if !strings.Contains(e.Message, c.says) {
			t.Errorf("%s: %q does not say %q", c.name, e.Message, c.says)
		}
	}
	_, err = ctx.CompileFile(filepath.Join(t.TempDir(), "absent.onnx"), nil)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "absent.onnx") {
		t.Fatal(err)
	}
}

// ABI 1.5: an ONNX model carries no placement; CompileOptions.FileDevice moves it onto one of
// the context's devices (here the host, which every machine has) and it runs there.
func TestOnnxFileDevice(t *testing.T) {
	ctx, err := NewContext(1)
	must(t, err)
	defer ctx.Close()
	cpu, err := CPU()
	must(t, err)
	defer cpu.Close()
	cm, err := ctx.CompileFile(writeFile(t, "placed.onnx", tinyOnnx(13, "MatMul")), &CompileOptions{FileDevice: cpu})
	must(t, err)
	defer cm.Close()
	inputs, err := cm.Inputs()
	must(t, err)
	if len(inputs) != 1 || inputs[0].Device != CPURef() {
		t.Fatalf("inputs %v", inputs)
	}
	m, err := cm.NewModel(nil)
	must(t, err)
	defer m.Close()
	x := []float32{1, 2, 3, -1, 0, 4}
	xt, err := FromFloat32s(x, []int64{2, 3})
	must(t, err)
	defer xt.Close()
	assertClose(t, run1(t, m, xt), onnxReference(x, onnxW, onnxB))

	// A closed device is an error, not a crash.
	closed, err := NewDevice(DeviceCPU, 0)
	must(t, err)
	closed.Close()
	if _, err := ctx.CompileFile(writeFile(t, "again.onnx", tinyOnnx(13, "MatMul")), &CompileOptions{FileDevice: closed}); !errors.Is(err, &Error{Code: CodeFailedPrecondition}) {
		t.Fatal(err)
	}
}

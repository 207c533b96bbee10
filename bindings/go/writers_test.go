package maxc

// Writers of the two file formats the tests feed the library, written from their specs so
// the tests need no Python: safetensors (an 8-byte little-endian header length, a JSON
// header, the raw bytes) and the protobuf wire format of ONNX models.

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// ---- safetensors ----

// stTensor is one safetensors entry: dtype as the format spells it ("F32", "I64").
type stTensor struct {
	name  string
	dtype string
	shape []int64
	data  []byte
}

// writeSafetensors writes entries in order, the header padded with spaces so the data
// segment starts 8-byte aligned (which the format allows and zero-copy mapping wants).
func writeSafetensors(t *testing.T, path string, entries []stTensor) {
	t.Helper()
	var header strings.Builder
	header.WriteString("{")
	offset := 0
	for i, e := range entries {
		if i > 0 {
			header.WriteString(",")
		}
		name, _ := json.Marshal(e.name)
		info, _ := json.Marshal(map[string]any{
			"dtype": e.dtype, "shape": e.shape, "data_offsets": []int{offset, offset + len(e.data)},
		})
		header.Write(name)
		header.WriteString(":")
		header.Write(info)
		offset += len(e.data)
	}
	header.WriteString("}")
	for header.Len()%8 != 0 {
		header.WriteString(" ")
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(header.Len()))
	out = append(out, header.String()...)
	for _, e := range entries {
		out = append(out, e.data...)
	}
	must(t, os.WriteFile(path, out, 0o644))
}

func f32Bytes(v []float32) []byte {
	out := make([]byte, 0, 4*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

func i64Bytes(v ...int64) []byte {
	out := make([]byte, 0, 8*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint64(out, uint64(x))
	}
	return out
}

// ---- protobuf wire format ----

// pb builds one protobuf message: each method appends a field (tag = field << 3 | wire type).
type pb struct{ b []byte }

const (
	wireVarint = 0
	wireBytes  = 2
)

func (m *pb) tag(field, wire int) { m.b = binary.AppendUvarint(m.b, uint64(field<<3|wire)) }

func (m *pb) int(field int, v int64) *pb {
	m.tag(field, wireVarint)
	m.b = binary.AppendUvarint(m.b, uint64(v)) // negative ints take ten bytes, as protobuf's int64
	return m
}

func (m *pb) bytes(field int, v []byte) *pb {
	m.tag(field, wireBytes)
	m.b = binary.AppendUvarint(m.b, uint64(len(v)))
	m.b = append(m.b, v...)
	return m
}

func (m *pb) str(field int, v string) *pb { return m.bytes(field, []byte(v)) }

func (m *pb) msg(field int, v *pb) *pb { return m.bytes(field, v.b) }

// packedFloats is a packed repeated float field (fixed32 little-endian in one length-
// delimited field).
func (m *pb) packedFloats(field int, v []float32) *pb { return m.bytes(field, f32Bytes(v)) }

// ---- ONNX messages (field numbers from onnx.proto) ----

const onnxFloat = 1 // TensorProto.DataType.FLOAT

// onnxDim is a TensorShapeProto.Dimension: a number, or a symbol when param is set.
type onnxDim struct {
	value int64
	param string
}

// onnxValueInfo is ValueInfoProto{name: 1, type: 2 = TypeProto{tensor_type: 1 =
// Tensor{elem_type: 1, shape: 2 = TensorShapeProto{dim: 1 = {dim_value: 1, dim_param: 2}}}}}.
func onnxValueInfo(name string, elemType int64, dims ...onnxDim) *pb {
	shape := &pb{}
	for _, d := range dims {
		dim := &pb{}
		if d.param != "" {
			dim.str(2, d.param)
		} else {
			dim.int(1, d.value)
		}
		shape.msg(1, dim)
	}
	tensorType := (&pb{}).int(1, elemType).msg(2, shape)
	return (&pb{}).str(1, name).msg(2, (&pb{}).msg(1, tensorType))
}

// onnxFloatTensor is TensorProto{dims: 1, data_type: 2, float_data: 4 or raw_data: 9,
// name: 8}; raw picks the encoding, as exporters use both.
func onnxFloatTensor(name string, dims []int64, values []float32, raw bool) *pb {
	t := &pb{}
	for _, d := range dims {
		t.int(1, d)
	}
	t.int(2, onnxFloat)
	if raw {
		t.bytes(9, f32Bytes(values))
	} else {
		t.packedFloats(4, values)
	}
	return t.str(8, name)
}

// onnxNode is NodeProto{input: 1, output: 2, name: 3, op_type: 4}.
func onnxNode(opType, name string, inputs, outputs []string) *pb {
	n := &pb{}
	for _, in := range inputs {
		n.str(1, in)
	}
	for _, out := range outputs {
		n.str(2, out)
	}
	return n.str(3, name).str(4, opType)
}

// onnxModel is ModelProto{ir_version: 1, producer_name: 2, graph: 7, opset_import: 8 =
// OperatorSetIdProto{domain: 1, version: 2}} around GraphProto{node: 1, name: 2,
// initializer: 5, input: 11, output: 12}.
func onnxModel(opset int64, nodes, initializers, inputs, outputs []*pb) []byte {
	g := (&pb{}).str(2, "tiny")
	for _, n := range nodes {
		g.msg(1, n)
	}
	for _, i := range initializers {
		g.msg(5, i)
	}
	for _, i := range inputs {
		g.msg(11, i)
	}
	for _, o := range outputs {
		g.msg(12, o)
	}
	m := (&pb{}).int(1, 8).str(2, "maxc-go-test").msg(7, g)
	m.msg(8, (&pb{}).str(1, "").int(2, opset))
	return m.b
}

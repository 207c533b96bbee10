package maxc

import (
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestBorrowSharesGoMemory(t *testing.T) {
	data := []float32{1, 2, 3, 4, 5, 6}
	x, err := Borrow(data, []int64{2, 3})
	must(t, err)
	got, err := x.Float32s()
	must(t, err)
	assertClose(t, got, data)
	data[4] = 50 // the tensor sees the slice's memory
	got, err = x.Float32s()
	must(t, err)
	if got[4] != 50 {
		t.Fatalf("borrowed tensor did not share memory: %v", got)
	}
	ints, err := Borrow([]int64{7, -8}, []int64{2})
	must(t, err)
	if d, _ := ints.DType(); d != Int64 {
		t.Fatal(d)
	}
	ints.Close()

	for _, shape := range [][]int64{{2, 4}, {7}, {-1, -6}, {1 << 40, 1 << 40}} {
		_, err := Borrow(data, shape)
		if e := asError(t, err); e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "Borrow") {
			t.Fatalf("shape %v: %v", shape, e)
		}
	}
	empty, err := Borrow([]float32{}, []int64{0, 3})
	must(t, err)
	if n, _ := empty.NumElements(); n != 0 {
		t.Fatal(n)
	}
	x.Close()
	waitForPins(t, 0)
}

func TestBorrowedWeightsLiveWithTheModel(t *testing.T) {
	waitForPins(t, 0)
	w := newMLPWeights(11)
	cm := compileMLP(t)
	defer cm.Close()
	wt, err := Borrow(append([]float32(nil), w.w...), []int64{mlpIn, mlpHidden})
	must(t, err)
	bt, err := Borrow(append([]float32(nil), w.b...), []int64{mlpHidden})
	must(t, err)
	m, err := cm.NewModel(map[string]*Tensor{"w": wt, "b": bt})
	must(t, err)
	wt.Close()
	bt.Close()
	runtime.GC() // the model keeps the borrowed memory: it must stay pinned and valid
	x, xt := batchOf(t, 5, 3)
	assertClose(t, run1(t, m, xt), w.reference(x))
	if livePins.Load() != 2 {
		t.Fatalf("%d pins while the model lives", livePins.Load())
	}
	m.Close()
	waitForPins(t, 0)
}

func TestDLPackRoundTrip(t *testing.T) {
	data := []float32{1.5, 2.5, 3.5, 4.5, 5.5, 6.5}
	x, err := FromFloat32s(data, []int64{2, 3})
	must(t, err)
	defer x.Close()
	dt, id, err := x.DLPackDevice()
	must(t, err)
	if dt != DLCPU || id != 0 {
		t.Fatal(dt, id)
	}
	d, err := x.ToDLPack()
	must(t, err)
	info, err := d.Info()
	must(t, err)
	if info.Version[0] != 1 || info.DeviceType != DLCPU || info.Code != 2 || info.Bits != 32 || info.Lanes != 1 ||
		!equal(info.Shape, []int64{2, 3}) || !equal(info.Strides, []int64{3, 1}) || info.ReadOnly {
		t.Fatalf("%+v", info)
	}
	if d.Pointer() == nil {
		t.Fatal("nil pointer")
	}
	y, err := FromDLPack(d)
	must(t, err)
	defer y.Close()
	if d.Pointer() != nil {
		t.Fatal("the import did not take the struct")
	}
	_, err = FromDLPack(d)
	if e := asError(t, err); e.Code != CodeFailedPrecondition {
		t.Fatal(e)
	}
	got, err := y.Float32s()
	must(t, err)
	assertClose(t, got, data)
	// The import shares the exporter's memory.
	assertShared(t, x, y, 1)

	// An export that nobody imports is deleted by Close (once; Close is idempotent).
	d2, err := x.ToDLPack()
	must(t, err)
	must(t, d2.Close())
	must(t, d2.Close())
	if _, err := d2.Info(); err == nil {
		t.Fatal("info of a closed DLPack tensor")
	}
	// Release hands the struct on; AdoptDLPack takes it back.
	d3, err := x.ToDLPack()
	must(t, err)
	raw := d3.Release()
	if raw == nil || d3.Pointer() != nil {
		t.Fatal("release")
	}
	z, err := FromDLPack(AdoptDLPack(raw))
	must(t, err)
	defer z.Close()
	if s, _ := z.Shape(); !equal(s, []int64{2, 3}) {
		t.Fatal(s)
	}
}

func TestBorrowedThroughDLPack(t *testing.T) {
	data := []int32{1, 2, 3, 4}
	x, err := Borrow(data, []int64{4})
	must(t, err)
	d, err := x.ToDLPack()
	must(t, err)
	x.Close()
	y, err := FromDLPack(d)
	must(t, err)
	v, err := y.View(Int32, []int64{2, 2})
	must(t, err)
	y.Close()
	b, err := v.Bytes()
	must(t, err)
	if len(b) != 16 || b[4] != 2 {
		t.Fatal(b)
	}
	v.Close()
	waitForPins(t, 0)
}

func TestDLPackUnversionedRoundTrip(t *testing.T) {
	data := []float32{1, 2, 3, 4, 5, 6}
	x, err := FromFloat32s(data, []int64{3, 2})
	must(t, err)
	defer x.Close()
	d, err := x.ToDLPackUnversioned()
	must(t, err)
	info, err := d.Info()
	must(t, err)
	if info.Version != [2]uint32{} || info.DeviceType != DLCPU || info.Code != 2 || info.Bits != 32 ||
		!equal(info.Shape, []int64{3, 2}) || !equal(info.Strides, []int64{2, 1}) {
		t.Fatalf("%+v", info)
	}
	y, err := FromDLPackUnversioned(d)
	must(t, err)
	defer y.Close()
	if d.Pointer() != nil {
		t.Fatal("the import did not take the struct")
	}
	if _, err := FromDLPackUnversioned(d); !errors.Is(err, ErrFailedPrecondition) {
		t.Fatal(err)
	}
	// Shared memory: a write through y shows in x.
	assertShared(t, y, x, 2)

	// Close deletes an export nobody imported; Release and Adopt hand it on.
	d2, err := x.ToDLPackUnversioned()
	must(t, err)
	must(t, d2.Close())
	must(t, d2.Close())
	d3, err := x.ToDLPackUnversioned()
	must(t, err)
	z, err := FromDLPackUnversioned(AdoptDLPackUnversioned(d3.Release()))
	must(t, err)
	defer z.Close()
	if v, _ := z.Float32s(); len(v) != 6 || v[5] != 2 {
		t.Fatal(v)
	}
	if AdoptDLPackUnversioned(nil) != nil {
		t.Fatal("adopting nil")
	}

	// Borrowed Go memory exported unversioned stays pinned until the importer lets go.
	waitForPins(t, 0)
	b, err := Borrow([]int32{1, 2, 3, 4}, []int64{4})
	must(t, err)
	du, err := b.ToDLPackUnversioned()
	must(t, err)
	b.Close()
	runtime.GC()
	bu, err := FromDLPackUnversioned(du)
	must(t, err)
	if raw, _ := bu.Bytes(); len(raw) != 16 || raw[12] != 4 {
		t.Fatal(raw)
	}
	bu.Close()
	waitForPins(t, 0)
}

func TestBorrowStrided(t *testing.T) {
	// A 3x4 row-major matrix; view its second column, every other row reversed, and its
	// transpose, all without copying.
	m := []float64{
		0, 1, 2, 3,
		10, 11, 12, 13,
		20, 21, 22, 23,
	}
	cases := []struct {
		name           string
		shape, strides []int64
		want           []float64
	}{
		{"column 1", []int64{3}, []int64{4}, []float64{0, 10, 20}},
		{"transpose", []int64{4, 3}, []int64{1, 4}, []float64{0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23}},
		{"rows reversed", []int64{3, 4}, []int64{-4, 1}, []float64{20, 21, 22, 23, 10, 11, 12, 13, 0, 1, 2, 3}},
		{"broadcast row", []int64{2, 4}, []int64{0, 1}, []float64{0, 1, 2, 3, 0, 1, 2, 3}},
	}
	for _, c := range cases {
		x, err := BorrowStrided(m, c.shape, c.strides)
		must(t, err)
		st, _ := x.Strides()
		contiguous, _ := x.IsContiguous()
		raw, err := x.Bytes()
		must(t, err)
		x.Close()
		got := make([]float64, len(raw)/8)
		for i := range got {
			got[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		if !equal(st, c.strides) || contiguous || !slices.Equal(got, c.want) {
			t.Errorf("%s: strides %v contiguous %v values %v, want %v", c.name, st, contiguous, got, c.want)
		}
	}
	// A write to the slice shows through the view (no copy was made).
	col, err := BorrowStrided(m, []int64{3}, []int64{4})
	must(t, err)
	m[8] = -1
	raw, _ := col.Bytes()
	if math.Float64frombits(binary.LittleEndian.Uint64(raw[16:])) != -1 {
		t.Fatal("the strided view copied the slice")
	}
	col.Close()

	for _, bad := range []struct{ shape, strides []int64 }{
		{[]int64{3, 4}, []int64{4}},          // one stride short
		{[]int64{4}, []int64{4}},             // reaches m[12]
		{[]int64{2, 7}, []int64{1, 2}},       // reaches m[13]
		{[]int64{-1}, []int64{1}},            // negative dim
		{[]int64{3}, []int64{math.MinInt64}}, // a stride with no magnitude
		{[]int64{1 << 40}, []int64{1 << 40}}, // far past the slice, without overflowing
	} {
		_, err := BorrowStrided(m, bad.shape, bad.strides)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "BorrowStrided") {
			t.Errorf("shape %v strides %v: %v", bad.shape, bad.strides, err)
		}
	}
	if _, err := BorrowStrided([]float64{}, []int64{1, 1}, []int64{0, 0}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal("one element borrowed from an empty slice:", err)
	}
	empty, err := BorrowStrided(m, []int64{0, 5}, []int64{100, 100})
	must(t, err)
	if n, _ := empty.NumElements(); n != 0 {
		t.Fatal(n)
	}
	empty.Close()
	waitForPins(t, 0)
}

// Handles dropped without Close are released by their finalizers: tensors over borrowed Go
// memory, models holding them as weights, registries, DLPack exports and the rest, in a
// loop under runtime.GC(). Every borrowed slice must end up unpinned, which happens only
// when the last C reference to its tensor goes.
func TestHandlesDroppedWithoutCloseAreFinalized(t *testing.T) {
	waitForPins(t, 0)
	cm := compileMLP(t)
	defer cm.Close()
	w := newMLPWeights(41)
	x, xt := batchOf(t, 2, 42)
	want := w.reference(x)
	for i := 0; i < 100; i++ {
		wt, err := Borrow(append([]float32(nil), w.w...), []int64{mlpIn, mlpHidden})
		must(t, err)
		bt, err := Borrow(append([]float32(nil), w.b...), []int64{mlpHidden})
		must(t, err)
		reg, err := NewWeights()
		must(t, err)
		must(t, reg.AddTensor("w", wt, QuantNone))
		must(t, reg.AddTensor("b", bt, QuantNone))
		m, err := cm.NewModelFromWeights(reg)
		must(t, err)
		if _, err := wt.ToDLPack(); err != nil { // dropped: its finalizer calls the deleter
			t.Fatal(err)
		}
		if _, err := bt.ToDLPackUnversioned(); err != nil {
			t.Fatal(err)
		}
		g := mlpGraph(t)
		attrs := NewAttrs().Int("axis", -1)
		if err := attrs.Err(); err != nil || g == nil {
			t.Fatal(err)
		}
		if i%25 == 0 {
			assertClose(t, run1(t, m, xt), want)
		}
		if i%10 == 0 {
			runtime.GC()
		}
	}
	waitForPins(t, 0)
	xt.Close()
}

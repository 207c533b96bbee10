package maxc

import (
	"runtime"
	"strings"
	"testing"
	"time"
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

func TestBorrowedWeightsLiveWithTheModel(t *testing.T) {
	waitForPins(t, 0)
	w := newMLPWeights(11)
	ctx, err := NewContext(1)
	must(t, err)
	defer ctx.Close()
	g := mlpGraph(t)
	defer g.Close()
	cm, err := ctx.Compile(g, nil)
	must(t, err)
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
	ones, err := FromFloat32s([]float32{1, 1, 1, 1, 1, 1}, []int64{2, 3})
	must(t, err)
	must(t, x.CopyFrom(ones))
	got, err = y.Float32s()
	must(t, err)
	assertClose(t, got, []float32{1, 1, 1, 1, 1, 1})

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

package maxc

/*
#include <max_c.h>
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Device graphs (ABI 1.4): MAX's Model.capture, replay and debug_verify_replay.
//
// Capture runs the model once, as Execute does, and records the run under a key the caller
// picks; Replay runs the recording again on new inputs of the same dtypes and shapes. On a
// GPU the recording is a CUDA graph, replayed with one launch instead of the run's many,
// which is what makes small batches fast; on the CPU the captured plan is rerun into the
// same outputs, so one program serves both devices.
//
// Every address in a recording is fixed, so the capture's outputs are every replay's outputs
// too: each Replay rewrites, in place, the tensors Capture returned. Copy a result out
// (Float32s, Copy) before the next Replay to keep it.
//
// graphKeys holds one key per device the model runs on, which today is always exactly one
// ([]uint64{key}); any other count is INVALID_ARGUMENT. A key is any uint64; capturing under
// a key that already holds a graph replaces it. A graph keeps the weights it was captured
// with (Reload applies to later captures) and lives as long as the model.
//
// Concurrency: the three methods are safe for concurrent use. Replays of one key take turns
// inside the library, but reading that key's output tensors while another goroutine replays
// it races with the rewrite (the tensors' own locks do not cover it): order those reads
// after the replay, for example by replaying and reading on one goroutine or under a mutex
// of your own.

// graphCall holds the C arrays of one graph call: the keys (Go memory with no Go pointers
// in it, passed for the call's duration only, as cgo allows) and retained input handles.
type graphCall struct {
	keys []uint64
	in   *cHandles
}

func newGraphCall(method string, graphKeys []uint64, inputs []*Tensor) (*graphCall, error) {
	in, err := positionalHandles(method, inputs)
	if err != nil {
		return nil, err
	}
	return &graphCall{keys: graphKeys, in: in}, nil
}

// keysPtr is the keys' address, or NULL for none (the library then refuses the count 0).
func (g *graphCall) keysPtr() *C.uint64_t {
	if len(g.keys) == 0 {
		return nil
	}
	return (*C.uint64_t)(unsafe.Pointer(&g.keys[0]))
}

func (g *graphCall) numKeys() C.size_t { return C.size_t(len(g.keys)) }

func (g *graphCall) release() {
	g.in.release()
	runtime.KeepAlive(g.keys)
}

// Capture runs the model on inputs (by position, checked as Execute checks them) and records
// the run under graphKeys (one key per device of the model: []uint64{key}), replacing what
// that key held. It returns the outputs, in the order of OutputMetadata, holding this run's
// results.
//
// The returned tensors are shared with the graph, not copied: every Replay of the key
// rewrites them in place, so they hold the latest replay's results; copy one out to keep a
// result. The caller may Close them (the graph keeps its own reference); a later Capture
// under the same key returns new tensors and leaves these with their last values.
//
// Errors: INVALID_ARGUMENT for a key count other than one, or for Execute's input checks
// (the model stays usable); FAILED_PRECONDITION when the model's work cannot be recorded (an
// op that waits on the host mid-run), for a nil or closed input, or for a closed model.
func (m *Model) Capture(graphKeys []uint64, inputs ...*Tensor) ([]*Tensor, error) {
	g, err := newGraphCall("Capture", graphKeys, inputs)
	if err != nil {
		return nil, err
	}
	defer g.release()
	return m.run("Capture", func(p *C.max_model_t, out **C.max_tensor_list_t) *C.max_status_t {
		return C.max_model_capture(p, g.keysPtr(), g.numKeys(), g.in.tensorsPtr(), g.in.len(), out)
	})
}

// Replay runs the graph captured under graphKeys on inputs, which must have the dtypes and
// shapes it was captured with, rewriting the tensors Capture returned; it returns when they
// hold the new results. Inputs are only read.
//
// Errors: FAILED_PRECONDITION naming the key when nothing is captured under it (and for a
// nil or closed input or a closed model); INVALID_ARGUMENT naming the difference when the
// inputs do not match the capture (say another batch size) or the key count is not one. A
// refused replay runs nothing, so the outputs keep their values.
func (m *Model) Replay(graphKeys []uint64, inputs ...*Tensor) error {
	return m.graphCall("Replay", graphKeys, inputs,
		func(p *C.max_model_t, keys *C.uint64_t, n C.size_t, in **C.max_tensor_t, nin C.size_t) *C.max_status_t {
			return C.max_model_replay(p, keys, n, in, nin)
		})
}

// DebugVerifyReplay is a debugging aid: it runs the model eagerly on inputs (into new
// outputs, discarded; the capture's outputs are not touched) and checks that it launches
// the kernels the graph of graphKeys recorded, in order and with the same launch shapes. A
// nil error means the graph replays what Execute would run.
//
// Errors: FAILED_PRECONDITION naming the first difference, or that nothing is captured under
// the key; INVALID_ARGUMENT as for Replay.
func (m *Model) DebugVerifyReplay(graphKeys []uint64, inputs ...*Tensor) error {
	return m.graphCall("DebugVerifyReplay", graphKeys, inputs,
		func(p *C.max_model_t, keys *C.uint64_t, n C.size_t, in **C.max_tensor_t, nin C.size_t) *C.max_status_t {
			return C.max_model_debug_verify_replay(p, keys, n, in, nin)
		})
}

type graphFn func(*C.max_model_t, *C.uint64_t, C.size_t, **C.max_tensor_t, C.size_t) *C.max_status_t

// graphCall runs a graph call that returns nothing but a status, holding its own reference
// to the C model (as Execute does), so a racing Close cannot free it mid-call.
func (m *Model) graphCall(method string, graphKeys []uint64, inputs []*Tensor, call graphFn) error {
	g, err := newGraphCall(method, graphKeys, inputs)
	if err != nil {
		return err
	}
	defer g.release()
	p, err := m.retain(method)
	if err != nil {
		return err
	}
	defer C.max_model_release(p)
	return statusError(call(p, g.keysPtr(), g.numKeys(), g.in.tensorsPtr(), g.in.len()))
}

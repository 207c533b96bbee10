package maxc

/*
#include <stdlib.h>
#include <max_c.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// QuantEncoding is a block-quantization encoding (MAX_QUANT_*; GGUF's Q4_0, Q4_K, Q5_K,
// Q6_K, Q8_0). A quantized tensor is uint8 [rows..., row_bytes]; its encoding says how to
// read the bytes. The graph ops "dequantize" and "qmatmul" take the encoding's String() as
// their "encoding" attribute.
type QuantEncoding int32

const (
	QuantNone QuantEncoding = 0
	QuantQ4_0 QuantEncoding = 1
	QuantQ4K  QuantEncoding = 2
	QuantQ5K  QuantEncoding = 3
	QuantQ6K  QuantEncoding = 4
	QuantQ8_0 QuantEncoding = 5
)

// String is the library's name ("q4_k", "none"), or "QuantEncoding(n)" for a value the
// library does not know.
func (e QuantEncoding) String() string {
	if p := C.max_quant_encoding_name(C.max_quant_encoding_t(e)); p != nil {
		return C.GoString(p)
	}
	return "QuantEncoding(" + itoa(int64(e)) + ")"
}

// Block gives the elements and bytes of one block. Errors: INVALID_ARGUMENT for QuantNone
// and unknown values.
func (e QuantEncoding) Block() (elements, bytes int, err error) {
	if err := CheckABI(); err != nil {
		return 0, 0, err
	}
	var el, by C.int32_t
	if err := statusError(C.max_quant_encoding_block(C.max_quant_encoding_t(e), &el, &by)); err != nil {
		return 0, 0, err
	}
	return int(el), int(by), nil
}

// Weights is a registry of named tensors (MAX's weights registry, ABI 1.3): every tensor of
// the .safetensors and .gguf files added to it, mapped rather than read, and tensors added
// from memory (shared, not copied). Models bind the weights their graph declares from it by
// name (CompiledModel.NewModelFromWeights, Model.ReloadFromWeights).
//
// Concurrency: safe for concurrent use. Adding takes the registry exclusively (the C library
// needs that), so an AddFile waits for running queries and binds; queries and binds run in
// parallel with each other.
type Weights struct {
	mu sync.RWMutex
	p  *C.max_weights_t
}

// NewWeights is a registry holding every tensor of the given files (none: an empty one). On
// an error the registry is released and the error names the file, as AddFile's do.
func NewWeights(paths ...string) (*Weights, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	var p *C.max_weights_t
	if err := statusError(C.max_weights_create(&p)); err != nil {
		return nil, err
	}
	w := &Weights{p: p}
	runtime.SetFinalizer(w, func(w *Weights) { w.Close() })
	for _, path := range paths {
		if err := w.AddFile(path); err != nil {
			w.Close()
			return nil, err
		}
	}
	return w, nil
}

// Close releases the registry. Tensors taken from it and models bound from it stay valid
// (a mapped file stays mapped while a view of it lives). It is idempotent.
func (w *Weights) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.p != nil {
		C.max_weights_release(w.p)
		w.p = nil
		runtime.SetFinalizer(w, nil)
	}
	return nil
}

func (w *Weights) rlock(method string) error {
	if w == nil {
		return closedError("Weights", method)
	}
	w.mu.RLock()
	if w.p == nil {
		w.mu.RUnlock()
		return closedError("Weights", method)
	}
	return nil
}

func (w *Weights) lock(method string) error {
	if w == nil {
		return closedError("Weights", method)
	}
	w.mu.Lock()
	if w.p == nil {
		w.mu.Unlock()
		return closedError("Weights", method)
	}
	return nil
}

// AddFile adds every tensor of a weights file, or nothing when anything fails. The format
// comes from the name (".safetensors", ".gguf", or a sharded checkpoint's
// ".safetensors.index.json"), else from the content. Errors: NOT_FOUND or PERMISSION_DENIED
// for a file that cannot be opened; DATA_LOSS naming the file, tensor and offset for a
// truncated or corrupt one; INVALID_ARGUMENT for an unknown dtype or format; UNIMPLEMENTED
// for a GGUF tensor type the library does not read; ALREADY_EXISTS naming a weight the
// registry has.
func (w *Weights) AddFile(path string) error {
	if err := w.lock("AddFile"); err != nil {
		return err
	}
	defer w.mu.Unlock()
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	return statusError(C.max_weights_add_file(w.p, cp))
}

// AddTensor adds t under name by reference: the registry keeps the tensor (closing t's
// handle afterwards is fine) and models bound from it read its memory, so do not write to it
// while they live. With an encoding other than QuantNone, t must be uint8 [rows...,
// row_bytes] with row_bytes a whole number of blocks. Errors: INVALID_ARGUMENT for an empty
// name or a tensor that does not fit the encoding; ALREADY_EXISTS when the name is taken.
func (w *Weights) AddTensor(name string, t *Tensor, encoding QuantEncoding) error {
	tp, err := t.retain("Weights.AddTensor")
	if err != nil {
		return err
	}
	defer C.max_tensor_release(tp)
	if err := w.lock("AddTensor"); err != nil {
		return err
	}
	defer w.mu.Unlock()
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	return statusError(C.max_weights_add_tensor(w.p, cn, tp, C.max_quant_encoding_t(encoding)))
}

// Len is the number of tensors.
func (w *Weights) Len() (int, error) {
	if err := w.rlock("Len"); err != nil {
		return 0, err
	}
	defer w.mu.RUnlock()
	var n C.size_t
	err := statusError(C.max_weights_count(w.p, &n))
	return int(n), err
}

// Names is every tensor's name, in the order they were added.
func (w *Weights) Names() ([]string, error) {
	if err := w.rlock("Names"); err != nil {
		return nil, err
	}
	defer w.mu.RUnlock()
	var n C.size_t
	if err := statusError(C.max_weights_count(w.p, &n)); err != nil {
		return nil, err
	}
	names := make([]string, int(n))
	for i := range names {
		var s *C.char
		if err := statusError(C.max_weights_name(w.p, C.size_t(i), &s)); err != nil {
			return nil, err
		}
		names[i] = C.GoString(s)
	}
	return names, nil
}

// WeightInfo is what the registry knows of a weight without reading its bytes.
type WeightInfo struct {
	DType DType
	// Shape is as stored: uint8 [rows..., row_bytes] when the weight is quantized.
	Shape    []int64
	Encoding QuantEncoding
}

// Info describes the weight name. Errors: NOT_FOUND naming it when absent.
func (w *Weights) Info(name string) (WeightInfo, error) {
	if err := w.rlock("Info"); err != nil {
		return WeightInfo{}, err
	}
	defer w.mu.RUnlock()
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var dtype C.max_dtype_t
	var rank C.int32_t
	var dims *C.int64_t
	var enc C.max_quant_encoding_t
	if err := statusError(C.max_weights_info(w.p, cn, &dtype, &rank, &dims, &enc)); err != nil {
		return WeightInfo{}, err
	}
	shape := make([]int64, int(rank))
	if rank > 0 {
		copy(shape, unsafe.Slice((*int64)(unsafe.Pointer(dims)), int(rank)))
	}
	return WeightInfo{DType: DType(dtype), Shape: shape, Encoding: QuantEncoding(enc)}, nil
}

// Has reports whether the registry holds name.
func (w *Weights) Has(name string) (bool, error) {
	_, err := w.Info(name)
	if err == nil {
		return true, nil
	}
	if e, ok := err.(*Error); ok && e.Code == CodeNotFound {
		return false, nil
	}
	return false, err
}

// Tensor gives the weight name as a new tensor handle the caller closes: a read-only view
// of the file (which stays mapped while the view lives, even after Close of the registry), a
// read-only copy when the file's bytes are not aligned for the dtype, or the tensor that was
// added. Errors: NOT_FOUND naming it when absent.
func (w *Weights) Tensor(name string) (*Tensor, error) {
	if err := w.rlock("Tensor"); err != nil {
		return nil, err
	}
	defer w.mu.RUnlock()
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var p *C.max_tensor_t
	if err := statusError(C.max_weights_tensor(w.p, cn, &p)); err != nil {
		return nil, err
	}
	return wrapTensor(p), nil
}

// SaveGGUF writes every tensor, in order, as one GGUF v3 file at path (quantized ones with
// their encoding), with general.name set to name unless it is "". A failed write leaves path
// as it was. Errors: INVALID_ARGUMENT for a dtype GGUF cannot hold (bool, unsigned integers
// wider than 8 bits, float8) or more than 4 dims; an I/O error naming the path.
func (w *Weights) SaveGGUF(path, name string) error {
	if err := w.rlock("SaveGGUF"); err != nil {
		return err
	}
	defer w.mu.RUnlock()
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var cn *C.char
	if name != "" {
		cn = C.CString(name)
		defer C.free(unsafe.Pointer(cn))
	}
	return statusError(C.max_weights_save_gguf(w.p, cp, cn))
}

// Quantize converts a float32 CPU tensor [..., k] into a new uint8 tensor [..., row_bytes]
// of encoding, fitting each block's scales by least squares: what qmatmul and dequantize
// read. It is a slow conversion step, not an inference kernel. Errors: INVALID_ARGUMENT for
// another dtype, a scalar, QuantNone or an unknown encoding, or k not a whole number of
// blocks; FAILED_PRECONDITION for device memory.
func (t *Tensor) Quantize(encoding QuantEncoding) (*Tensor, error) {
	if err := t.rlock("Quantize"); err != nil {
		return nil, err
	}
	defer t.mu.RUnlock()
	var p *C.max_tensor_t
	if err := statusError(C.max_tensor_quantize(t.p, C.max_quant_encoding_t(encoding), &p)); err != nil {
		return nil, err
	}
	return wrapTensor(p), nil
}

// NewModelFromWeights binds each weight the graph declares by name from w (else from the
// model file's own weights, such as ONNX initializers) and gives a runnable Model; tensors of
// w that the graph does not declare are ignored. The model keeps what it binds: closing w
// afterwards is fine. Errors: NOT_FOUND naming a declared weight that neither has;
// INVALID_ARGUMENT a dtype or shape that differs from the declaration.
func (cm *CompiledModel) NewModelFromWeights(w *Weights) (*Model, error) {
	if err := w.rlock("NewModelFromWeights"); err != nil {
		return nil, err
	}
	defer w.mu.RUnlock()
	if err := cm.rlock("NewModelFromWeights"); err != nil {
		return nil, err
	}
	defer cm.mu.RUnlock()
	var p *C.max_model_t
	if err := statusError(C.max_model_create_from_weights(cm.p, w.p, &p)); err != nil {
		return nil, err
	}
	return wrapModel(p), nil
}

// ReloadFromWeights swaps in every declared weight that w has, without recompiling; the
// others stay. All or nothing: when a check fails nothing changes. Executes already running
// finish with the old weights.
func (m *Model) ReloadFromWeights(w *Weights) error {
	if err := w.rlock("ReloadFromWeights"); err != nil {
		return err
	}
	defer w.mu.RUnlock()
	p, err := m.retain("ReloadFromWeights")
	if err != nil {
		return err
	}
	defer C.max_model_release(p)
	return statusError(C.max_model_reload_from_weights(p, w.p))
}

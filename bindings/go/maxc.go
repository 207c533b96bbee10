// Package maxc is the Go binding of libmax_c, an inference engine behind one stable C ABI
// (include/max_c.h). It goes only through that header, checks the ABI once before the
// first handle is made, turns every status into an *Error, and gives each handle type an
// idempotent Close (use after Close is an *Error, never a crash) with a finalizer as a
// safety net. No Go pointer is ever kept by C: Go memory is passed only for the duration
// of a call, as the cgo rules allow; the one exception is Borrow (and BorrowStrided), which
// pins the slice with runtime.Pinner for as long as the library holds it.
//
// The engine: (*Context).Compile (or CompileFile, for MAXG and ONNX files) gives a
// *CompiledModel, (*CompiledModel).NewModel binds weights by name (NewModelFromWeights from
// a *Weights registry of safetensors and GGUF files), and (*Model).Execute runs it; all
// three are safe for concurrent use. (*Model).Capture records a run under a key and
// (*Model).Replay reruns it (MAX's device graphs, ABI 1.4), rewriting the capture's outputs
// in place. CompileOptions.FileDevice places a model file (an ONNX model) on a device and
// (*Graph).AddConstantOn places a constant (ABI 1.5; a 1.4 library serves everything else).
// (*Graph).AddSubgraph gives the subgraphs that the control-flow ops "cond", "while_loop"
// and "call" (ABI 1.6) name through Attrs.Graph.
// Errors are *Error values; errors.Is(err, ErrNotFound) and friends test the code.
package maxc

/*
#cgo pkg-config: max_c
#include <stdlib.h>
#include <max_c.h>

static uint32_t maxc_header_abi_version(void) { return MAX_ABI_VERSION; }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Status codes (MAX_STATUS_*).
const (
	CodeOK                 int32 = 0
	CodeCancelled          int32 = 1
	CodeUnknown            int32 = 2
	CodeInvalidArgument    int32 = 3
	CodeDeadlineExceeded   int32 = 4
	CodeNotFound           int32 = 5
	CodeAlreadyExists      int32 = 6
	CodePermissionDenied   int32 = 7
	CodeResourceExhausted  int32 = 8
	CodeFailedPrecondition int32 = 9
	CodeAborted            int32 = 10
	CodeOutOfRange         int32 = 11
	CodeUnimplemented      int32 = 12
	CodeInternal           int32 = 13
	CodeUnavailable        int32 = 14
	CodeDataLoss           int32 = 15
	CodeUnauthenticated    int32 = 16
)

// Error is a failed max_c status: its code, the code's name and the library's message.
type Error struct {
	Code     int32
	CodeName string
	Message  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("max_c: %s: %s", e.CodeName, e.Message)
}

// Is reports whether target is an *Error with the same code, so errors.Is(err,
// &maxc.Error{Code: maxc.CodeNotFound}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Sentinels for errors.Is, one per code: errors.Is(err, maxc.ErrNotFound) holds for every
// *Error with CodeNotFound, whatever its message.
var (
	ErrCancelled          = &Error{Code: CodeCancelled, CodeName: "CANCELLED"}
	ErrUnknown            = &Error{Code: CodeUnknown, CodeName: "UNKNOWN"}
	ErrInvalidArgument    = &Error{Code: CodeInvalidArgument, CodeName: "INVALID_ARGUMENT"}
	ErrDeadlineExceeded   = &Error{Code: CodeDeadlineExceeded, CodeName: "DEADLINE_EXCEEDED"}
	ErrNotFound           = &Error{Code: CodeNotFound, CodeName: "NOT_FOUND"}
	ErrAlreadyExists      = &Error{Code: CodeAlreadyExists, CodeName: "ALREADY_EXISTS"}
	ErrPermissionDenied   = &Error{Code: CodePermissionDenied, CodeName: "PERMISSION_DENIED"}
	ErrResourceExhausted  = &Error{Code: CodeResourceExhausted, CodeName: "RESOURCE_EXHAUSTED"}
	ErrFailedPrecondition = &Error{Code: CodeFailedPrecondition, CodeName: "FAILED_PRECONDITION"}
	ErrAborted            = &Error{Code: CodeAborted, CodeName: "ABORTED"}
	ErrOutOfRange         = &Error{Code: CodeOutOfRange, CodeName: "OUT_OF_RANGE"}
	ErrUnimplemented      = &Error{Code: CodeUnimplemented, CodeName: "UNIMPLEMENTED"}
	ErrInternal           = &Error{Code: CodeInternal, CodeName: "INTERNAL"}
	ErrUnavailable        = &Error{Code: CodeUnavailable, CodeName: "UNAVAILABLE"}
	ErrDataLoss           = &Error{Code: CodeDataLoss, CodeName: "DATA_LOSS"}
	ErrUnauthenticated    = &Error{Code: CodeUnauthenticated, CodeName: "UNAUTHENTICATED"}
)

func codeName(code int32) string {
	return C.GoString(C.max_status_code_name(C.max_status_code_t(code)))
}

func newError(code int32, format string, args ...any) *Error {
	return &Error{Code: code, CodeName: codeName(code), Message: fmt.Sprintf(format, args...)}
}

// statusError converts a status to an *Error (nil for success) and always releases it.
func statusError(s *C.max_status_t) error {
	if s == nil {
		return nil
	}
	defer C.max_status_release(s)
	code := int32(C.max_status_code(s))
	return &Error{
		Code:     code,
		CodeName: C.GoString(C.max_status_code_name(C.max_status_code_t(code))),
		Message:  C.GoString(C.max_status_message(s)),
	}
}

func closedError(kind, method string) error {
	return newError(CodeFailedPrecondition, "%s.%s: the %s is closed (or was never created)", kind, method, kind)
}

// ---- ABI ----

var (
	abiOnce sync.Once
	abiErr  error
)

// HeaderABIVersion is the ABI version of the max_c.h this package was built with, packed
// as (major << 16) | minor.
func HeaderABIVersion() uint32 { return uint32(C.maxc_header_abi_version()) }

// LibraryABIVersion is the ABI version the loaded libmax_c implements, packed like
// HeaderABIVersion.
func LibraryABIVersion() uint32 { return uint32(C.max_abi_version()) }

// VersionString is the library's release version, e.g. "1.1.0".
func VersionString() string { return C.GoString(C.max_version_string()) }

// MinABIVersion is the oldest library ABI this package runs against, packed like
// HeaderABIVersion: 1.4, whose device graphs (Capture, Replay) it links. The ABI 1.5
// additions (CompileOptions.FileDevice, Graph.AddConstantOn) check the library's version when
// they are used and give UNIMPLEMENTED on a 1.4 library; everything else works with it.
const MinABIVersion uint32 = 1<<16 | 4

func checkABIAgainst(header uint32) error {
	return statusError(C.max_check_abi(C.uint32_t(header)))
}

// CheckABI checks, once per process, that the loaded library serves MinABIVersion, the
// oldest header this package needs. Every constructor calls it before making the first
// handle, so a library older than that (say ABI 1.2) fails there with the library's
// FAILED_PRECONDITION message, "libmax_c ABI 1.2 is older than the header 1.4 this program
// was built with", rather than with a missing symbol later. Safe for concurrent use; the
// outcome is remembered.
func CheckABI() error {
	abiOnce.Do(func() { abiErr = checkABIAgainst(MinABIVersion) })
	return abiErr
}

// ---- logging ----

// SetLogLevel sets the process-wide log level (0 off .. 5 trace).
func SetLogLevel(level int32) error {
	return statusError(C.max_log_set_level(C.max_log_level_t(level)))
}

// LogLevel is the process-wide log level.
func LogLevel() int32 { return int32(C.max_log_level()) }

// ---- helpers ----

// cInt64s gives a pointer to s's first element for the duration of a call (nil when empty).
func cInt64s(s []int64) *C.int64_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&s[0]))
}

// bufferBytes copies a buffer's bytes into Go memory and releases the buffer.
func bufferBytes(b *C.max_buffer_t) ([]byte, error) {
	defer C.max_buffer_release(b)
	var data unsafe.Pointer
	var size C.size_t
	if err := statusError(C.max_buffer_data(b, &data)); err != nil {
		return nil, err
	}
	if err := statusError(C.max_buffer_size(b, &size)); err != nil {
		return nil, err
	}
	if size == 0 {
		return []byte{}, nil
	}
	return C.GoBytes(data, C.int(size)), nil
}

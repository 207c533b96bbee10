package maxc

// A file with //export may only declare C in its preamble, so the callback's C side lives
// in borrow.go.

/*
#include <stdint.h>
*/
import "C"

import "runtime/cgo"

// maxcGoUnpin is the release callback of borrowed Go memory: it drops the pin and the
// handle. The library calls it exactly once per borrowed tensor, on any thread.
//
//export maxcGoUnpin
func maxcGoUnpin(handle C.uintptr_t) {
	unpinHandle(cgo.Handle(handle))
}

package maxc

/*
#include <stdlib.h>
#include <max_c.h>
*/
import "C"

import "unsafe"

// InputArity says how many values an op input takes (MAX_OP_INPUT_*).
type InputArity int32

const (
	InputOne      InputArity = 0 // exactly one value
	InputOptional InputArity = 1 // zero or one value; only at the end
	InputVariadic InputArity = 2 // one or more values (concat's); only last
	InputAny      InputArity = 3 // zero or more values; only last (ABI 1.6: cond's and call's operands)
)

// AttrKind is the kind of an op attribute (MAX_ATTR_*), which says which Attrs setter
// fills it.
type AttrKind int32

const (
	AttrInt    AttrKind = 0
	AttrFloat  AttrKind = 1
	AttrString AttrKind = 2
	AttrDType  AttrKind = 3
	AttrInts   AttrKind = 4
	AttrFloats AttrKind = 5
	AttrDims   AttrKind = 6
	AttrGraph  AttrKind = 7
	AttrBool   AttrKind = 8
	AttrDevice AttrKind = 9
)

// AttrPresence says whether an op attribute must be given (MAX_OP_ATTR_*).
type AttrPresence int32

const (
	AttrRequired  AttrPresence = 0
	AttrOptional  AttrPresence = 1
	AttrDefaulted AttrPresence = 2
)

// OpInput is one input of an op schema.
type OpInput struct {
	Name  string
	Arity InputArity
}

// OpAttr is one attribute of an op schema.
type OpAttr struct {
	Name     string
	Kind     AttrKind
	Presence AttrPresence
}

// OpSchema is one registered op: what Graph.AddOp checks a call against. A plain value
// copied out of the library's registry, which is immutable, so every function here is safe
// for concurrent use.
type OpSchema struct {
	Name    string
	Version int32
	Inputs  []OpInput
	Attrs   []OpAttr
}

// RegisteredOps lists every registered (op, version), sorted by name then version: the ops
// Graph.AddOp accepts.
func RegisteredOps() ([]OpSchema, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	var n C.size_t
	if err := statusError(C.max_op_count(&n)); err != nil {
		return nil, err
	}
	out := make([]OpSchema, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		var name *C.char
		var version C.int32_t
		if err := statusError(C.max_op_at(i, &name, &version)); err != nil {
			return nil, err
		}
		s, err := LookupOp(C.GoString(name), int32(version))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// LookupOp is the schema of op name at version (0: the newest). Errors: NOT_FOUND naming an
// unknown op.
func LookupOp(name string, version int32) (OpSchema, error) {
	if err := CheckABI(); err != nil {
		return OpSchema{}, err
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	s := OpSchema{Name: name, Version: version}
	var err error
	if s.Inputs, err = opInputs(cn, C.int32_t(version)); err != nil {
		return OpSchema{}, err
	}
	if s.Attrs, err = opAttrs(cn, C.int32_t(version)); err != nil {
		return OpSchema{}, err
	}
	return s, nil
}

func opInputs(name *C.char, version C.int32_t) ([]OpInput, error) {
	var n C.size_t
	if err := statusError(C.max_op_num_inputs(name, version, &n)); err != nil {
		return nil, err
	}
	out := make([]OpInput, int(n))
	for i := range out {
		var in *C.char
		var arity C.max_op_input_arity_t
		if err := statusError(C.max_op_input(name, version, C.size_t(i), &in, &arity)); err != nil {
			return nil, err
		}
		out[i] = OpInput{Name: C.GoString(in), Arity: InputArity(arity)}
	}
	return out, nil
}

func opAttrs(name *C.char, version C.int32_t) ([]OpAttr, error) {
	var n C.size_t
	if err := statusError(C.max_op_num_attrs(name, version, &n)); err != nil {
		return nil, err
	}
	out := make([]OpAttr, int(n))
	for i := range out {
		var an *C.char
		var kind C.max_attr_kind_t
		var presence C.max_op_attr_presence_t
		if err := statusError(C.max_op_attr(name, version, C.size_t(i), &an, &kind, &presence)); err != nil {
			return nil, err
		}
		out[i] = OpAttr{Name: C.GoString(an), Kind: AttrKind(kind), Presence: AttrPresence(presence)}
	}
	return out, nil
}

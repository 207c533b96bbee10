package maxc

/*
#include <stdlib.h>
#include <max_c.h>
*/
import "C"

import "unsafe"

// DType is an element type, with MAX's own numbers.
type DType int32

const (
	Invalid        DType = 0
	Bool           DType = 1
	Float4E2M1FN   DType = 64
	Float8E8M0FNU  DType = 73 // an exponent alone, 2^(e - 127); no sign, no zero; 0xFF is NaN
	Float8E4M3FN   DType = 75
	Float8E4M3FNUZ DType = 76
	Float8E5M2     DType = 77
	Float8E5M2FNUZ DType = 78
	Float16        DType = 79
	BFloat16       DType = 80
	Float32        DType = 81
	Float64        DType = 82
	Uint2          DType = 130 // packed four per byte, the first in the lowest bits
	Int2           DType = 131
	Uint4          DType = 132 // packed two per byte, the first in the low nibble
	Int4           DType = 133
	Uint8          DType = 134
	Int8           DType = 135
	Uint16         DType = 136
	Int16          DType = 137
	Uint32         DType = 138
	Int32          DType = 139
	Uint64         DType = 140
	Int64          DType = 141
)

func (d DType) c() C.max_dtype_t { return C.max_dtype_t(d) }

func (d DType) IsValid() bool            { return C.max_dtype_is_valid(d.c()) != 0 }
func (d DType) SizeInBits() int          { return int(C.max_dtype_size_in_bits(d.c())) }
func (d DType) SizeInBytes() int         { return int(C.max_dtype_size_in_bytes(d.c())) }
func (d DType) Align() int               { return int(C.max_dtype_align(d.c())) }
func (d DType) IsFloat() bool            { return C.max_dtype_is_float(d.c()) != 0 }
func (d DType) IsFloat8() bool           { return C.max_dtype_is_float8(d.c()) != 0 }
func (d DType) IsHalf() bool             { return C.max_dtype_is_half(d.c()) != 0 }
func (d DType) IsIntegral() bool         { return C.max_dtype_is_integral(d.c()) != 0 }
func (d DType) IsSignedIntegral() bool   { return C.max_dtype_is_signed_integral(d.c()) != 0 }
func (d DType) IsUnsignedIntegral() bool { return C.max_dtype_is_unsigned_integral(d.c()) != 0 }

// Name is MAX's member name ("float32"), "" for an unknown code.
func (d DType) Name() string {
	p := C.max_dtype_name(d.c())
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// String is the name, or "DType(n)" for an unknown code.
func (d DType) String() string {
	if n := d.Name(); n != "" {
		return n
	}
	return "DType(" + itoa(int64(d)) + ")"
}

// DTypeFromName looks a dtype up by MAX's member name.
func DTypeFromName(name string) (DType, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var d C.max_dtype_t
	if err := statusError(C.max_dtype_from_name(cs, &d)); err != nil {
		return Invalid, err
	}
	return DType(d), nil
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [24]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

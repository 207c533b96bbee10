package dev.maxc;

import com.sun.jna.ptr.IntByReference;
import java.util.Locale;

/**
 * MAX's element types, with MAX's own numbers as their C codes ({@code MAX_DTYPE_*}). The Java
 * names are MAX's member names in upper case; {@link #maxName()} gives MAX's spelling.
 *
 * <p>Immutable; all methods are thread-safe.
 */
public enum DType {
  BOOL(1, 8),
  FLOAT4_E2M1FN(64, 4),
  /** 8-bit exponent alone, 2^(e - 127): no sign, no zero, 0xFF is NaN (the MX formats' scale). */
  FLOAT8_E8M0FNU(73, 8),
  FLOAT8_E4M3FN(75, 8),
  FLOAT8_E4M3FNUZ(76, 8),
  FLOAT8_E5M2(77, 8),
  FLOAT8_E5M2FNUZ(78, 8),
  FLOAT16(79, 16),
  BFLOAT16(80, 16),
  FLOAT32(81, 32),
  FLOAT64(82, 64),
  /** 2-bit unsigned integer, packed four per byte, the first in the lowest bits. */
  UINT2(130, 2),
  /** 2-bit signed integer, packed four per byte, the first in the lowest bits. */
  INT2(131, 2),
  /** 4-bit unsigned integer, packed two per byte, the first in the low nibble. */
  UINT4(132, 4),
  /** 4-bit signed integer, packed two per byte, the first in the low nibble. */
  INT4(133, 4),
  UINT8(134, 8),
  INT8(135, 8),
  UINT16(136, 16),
  INT16(137, 16),
  UINT32(138, 32),
  INT32(139, 32),
  UINT64(140, 64),
  INT64(141, 64);

  private final int code;
  private final int bits;

  DType(int code, int bits) {
    this.code = code;
    this.bits = bits;
  }

  /** The C code (MAX's number), e.g. 81 for float32. */
  public int code() {
    return code;
  }

  /** MAX's member name, e.g. {@code "float32"}. */
  public String maxName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Bits per element (4 for float4_e2m1fn and int4, 2 for int2). */
  public int sizeInBits() {
    return bits;
  }

  /** Bytes per element, sub-byte types rounded up (their tensors are packed). */
  public int sizeInBytes() {
    return (bits + 7) / 8;
  }

  /** Whether this is a floating-point type (float8 and float4 included); asks the library. */
  public boolean isFloat() {
    return MaxLibrary.lib().max_dtype_is_float(code) != 0;
  }

  /** Whether this is an integer type (bool excluded); asks the library. */
  public boolean isIntegral() {
    return MaxLibrary.lib().max_dtype_is_integral(code) != 0;
  }

  /** Whether this is a signed integer type; asks the library. */
  public boolean isSignedIntegral() {
    return MaxLibrary.lib().max_dtype_is_signed_integral(code) != 0;
  }

  /**
   * The dtype with C code {@code code}.
   *
   * @throws MaxException INVALID_ARGUMENT for a code this binding does not know
   */
  public static DType fromCode(int code) {
    for (DType d : values()) {
      if (d.code == code) return d;
    }
    throw Status.invalid("unknown dtype code " + code);
  }

  /**
   * The dtype MAX names {@code name} ("float32"), looked up by the library.
   *
   * @throws MaxException NOT_FOUND naming {@code name} when there is none
   */
  public static DType fromMaxName(String name) {
    IntByReference out = new IntByReference();
    Status.check(MaxLibrary.lib().max_dtype_from_name(name, out));
    return fromCode(out.getValue());
  }

  @Override
  public String toString() {
    return "DType." + maxName();
  }
}

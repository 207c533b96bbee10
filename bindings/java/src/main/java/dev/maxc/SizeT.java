package dev.maxc;

import com.sun.jna.IntegerType;
import com.sun.jna.Native;

/**
 * C {@code size_t} for JNA: an unsigned integer of {@link Native#SIZE_T_SIZE} bytes.
 *
 * <p>Why not {@code long} or {@code NativeLong}: both happen to be 64 bits on 64-bit Linux
 * (LP64), but {@code NativeLong} is C {@code long}, which is 32 bits on 64-bit Windows, and a
 * plain {@code long} would be wrong on any 32-bit target. {@code IntegerType} sized by JNA's own
 * {@code SIZE_T_SIZE} is correct everywhere, and JNA marshals it by value in arguments and in
 * structure fields. Out-parameters use {@link SizeTByReference}.
 *
 * <p>Immutable in practice (the binding never calls {@code setValue} after construction).
 */
public final class SizeT extends IntegerType {
  private static final long serialVersionUID = 1L;

  /** Zero; JNA needs a public no-argument constructor for return values and fields. */
  public SizeT() {
    this(0);
  }

  /**
   * A size_t holding {@code value}.
   *
   * @throws IllegalArgumentException when {@code value} is negative (a size_t cannot be)
   */
  public SizeT(long value) {
    super(Native.SIZE_T_SIZE, checked(value), true);
  }

  private static long checked(long value) {
    if (value < 0) throw new IllegalArgumentException("size_t cannot be negative: " + value);
    return value;
  }
}

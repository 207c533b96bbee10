package dev.maxc;

import com.sun.jna.Native;
import com.sun.jna.ptr.ByReference;

/**
 * A {@code size_t*} out-parameter (see {@link SizeT} for why size_t is not mapped to
 * {@code long}). Not thread-safe: use one per call.
 */
public final class SizeTByReference extends ByReference {
  /** Room for one size_t, zero-filled. */
  public SizeTByReference() {
    super(Native.SIZE_T_SIZE);
    getPointer().clear(Native.SIZE_T_SIZE);
  }

  /** The value the callee wrote, as a Java long (sizes here never reach 2^63). */
  public long getValue() {
    return Native.SIZE_T_SIZE == 8 ? getPointer().getLong(0) : getPointer().getInt(0) & 0xFFFFFFFFL;
  }
}

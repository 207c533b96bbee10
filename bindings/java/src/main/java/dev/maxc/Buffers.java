package dev.maxc;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

/** {@code max_buffer_t} results: copied into Java and released. Stateless; thread-safe. */
final class Buffers {
  private Buffers() {}

  /** The buffer's bytes (without the trailing NUL), copied; the buffer is released (always). */
  static byte[] takeBytes(Pointer buffer) {
    MaxC lib = MaxLibrary.lib();
    try {
      PointerByReference data = new PointerByReference();
      Status.check(lib.max_buffer_data(buffer, data));
      SizeTByReference size = new SizeTByReference();
      Status.check(lib.max_buffer_size(buffer, size));
      long n = size.getValue();
      if (n > Integer.MAX_VALUE) throw Status.invalid("a buffer of " + n + " bytes does not fit a Java array");
      return n == 0 ? new byte[0] : data.getValue().getByteArray(0, (int) n);
    } finally {
      lib.max_buffer_release(buffer);
    }
  }
}

package dev.maxc;

import java.util.Arrays;

/**
 * The bounds check of {@link Tensor#borrow}: the library cannot know how large a borrowed buffer
 * is, so a view that reaches past it must be refused here. Stateless; thread-safe.
 */
final class Borrowing {
  private Borrowing() {}

  /**
   * Where element (0, 0, ...) of a view lies and that the view fits: returns {@code {offset of
   * element zero in bytes, bytes spanned}}, or null when the view has no elements. Every step is
   * bounded by {@code available} before it is added, so nothing overflows.
   *
   * @throws MaxException INVALID_ARGUMENT naming the shape, strides and sizes when the view does
   *     not fit, a dim is negative, or strides are given for a sub-byte dtype
   */
  static long[] extent(DType dtype, long[] shape, long[] strides, long available) {
    long n = elementCount(shape);
    if (n == 0) return null;
    if (strides == null) {
      long bytes = dtype.sizeInBits() >= 8 ? checkedBytes(n, dtype.sizeInBytes(), shape) : (n * dtype.sizeInBits() + 7) / 8;
      requireFits(bytes, available, shape);
      return new long[] {0, bytes};
    }
    if (strides.length != shape.length) {
      throw Status.invalid("Tensor.borrow: " + strides.length + " strides for the " + shape.length + " dims of shape "
          + Arrays.toString(shape));
    }
    if (dtype.sizeInBits() < 8) throw Status.invalid("Tensor.borrow: " + dtype.maxName() + " elements are packed; they cannot be strided");
    long size = dtype.sizeInBytes();
    long limit = available / size; // elements the buffer holds
    long low = 0;
    long high = 0;
    for (int i = 0; i < shape.length; i++) {
      long d = shape[i];
      long s = strides[i];
      if (d == 1 || s == 0) continue;
      if (s == Long.MIN_VALUE || d - 1 > limit / Math.abs(s)) throw tooFar(shape, strides, available);
      if (s > 0) high += (d - 1) * s;
      else low += (d - 1) * s;
      if (high - low >= limit) throw tooFar(shape, strides, available);
    }
    if (high - low >= limit) throw tooFar(shape, strides, available); // not even one element fits
    return new long[] {-low * size, (high - low + 1) * size};
  }

  private static long elementCount(long[] shape) {
    long n = 1;
    for (int i = 0; i < shape.length; i++) {
      if (shape[i] < 0) throw Status.invalid("Tensor.borrow: dim " + i + " of shape " + Arrays.toString(shape) + " is negative");
      n = checkedBytes(n, shape[i], shape);
    }
    return n;
  }

  private static long checkedBytes(long a, long b, long[] shape) {
    try {
      return Math.multiplyExact(a, b);
    } catch (ArithmeticException e) {
      throw Status.invalid("Tensor.borrow: shape " + Arrays.toString(shape) + " is too large");
    }
  }

  private static void requireFits(long bytes, long available, long[] shape) {
    if (bytes > available) {
      throw Status.invalid("Tensor.borrow: shape " + Arrays.toString(shape) + " needs " + bytes
          + " bytes but the buffer has " + available + " remaining");
    }
  }

  private static MaxException tooFar(long[] shape, long[] strides, long available) {
    return Status.invalid("Tensor.borrow: shape " + Arrays.toString(shape) + " with strides " + Arrays.toString(strides)
        + " reaches past the " + available + " bytes remaining in the buffer");
  }
}

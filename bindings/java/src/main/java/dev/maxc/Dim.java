package dev.maxc;

import com.sun.jna.Memory;
import java.util.List;
import java.util.Objects;

/**
 * A dimension as written in a graph type: a static size, or a symbolic expression — a symbol
 * ("batch") or symbols and integers with + - * // and parentheses ("(seq + 1) // 2"). Two
 * values using the same symbol tell the compiler those dims are equal. Immutable, thread-safe.
 */
public final class Dim {
  private final long size;
  private final String expr;

  private Dim(long size, String expr) {
    this.size = size;
    this.expr = expr;
  }

  /**
   * A static dim.
   *
   * @throws MaxException INVALID_ARGUMENT for a negative size
   */
  public static Dim of(long size) {
    if (size < 0) throw Status.invalid("a static dim must be >= 0, got " + size);
    return new Dim(size, null);
  }

  /** A symbolic dim: a symbol or an expression; the graph canonicalizes it. */
  public static Dim sym(String expr) {
    return new Dim(-1, Objects.requireNonNull(expr, "expr"));
  }

  /**
   * A dim from an Integer/Long (static), a String (symbolic) or a Dim, so that types can be
   * written {@code TensorType.of(FLOAT32, "batch", 4)}.
   *
   * @throws MaxException INVALID_ARGUMENT for anything else
   */
  public static Dim from(Object o) {
    if (o instanceof Dim) return (Dim) o;
    if (o instanceof Integer || o instanceof Long) return of(((Number) o).longValue());
    if (o instanceof String) return sym((String) o);
    throw Status.invalid("a dim is an Integer, a Long, a String or a Dim, not " + (o == null ? "null" : o.getClass().getName()));
  }

  /** Whether the size is known. */
  public boolean isStatic() {
    return expr == null;
  }

  /** The static size, or -1 for a symbolic dim. */
  public long size() {
    return size;
  }

  /** The symbolic expression, or null for a static dim. */
  public String expr() {
    return expr;
  }

  /**
   * A contiguous max_dim_t array for one C call; {@code keep} receives the native strings, which
   * the caller must keep alive (and may close) until the call returns. Null for no dims.
   */
  static MaxC.MaxDim[] toNative(List<Dim> dims, List<Memory> keep) {
    if (dims.isEmpty()) return null;
    MaxC.MaxDim[] arr = (MaxC.MaxDim[]) new MaxC.MaxDim().toArray(dims.size());
    for (int i = 0; i < dims.size(); i++) {
      Dim d = dims.get(i);
      arr[i].size = d.size;
      if (d.expr != null) {
        byte[] utf8 = d.expr.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Memory s = new Memory(utf8.length + 1L);
        s.write(0, utf8, 0, utf8.length);
        s.setByte(utf8.length, (byte) 0);
        keep.add(s);
        arr[i].expr = s;
      }
    }
    return arr;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Dim && ((Dim) o).size == size && Objects.equals(((Dim) o).expr, expr);
  }

  @Override
  public int hashCode() {
    return Objects.hash(size, expr);
  }

  /** The size or the expression. */
  @Override
  public String toString() {
    return expr != null ? expr : Long.toString(size);
  }
}

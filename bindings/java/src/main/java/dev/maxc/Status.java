package dev.maxc;

import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;

/** Turns {@code max_status_t*} results into {@link MaxException}s. Stateless; thread-safe. */
final class Status {
  private Status() {}

  /**
   * Does nothing for NULL (success); otherwise copies the status's code, code name and UTF-8
   * message, releases the status (always, even if copying fails), and throws.
   *
   * @throws MaxException carrying the status
   */
  static void check(Pointer status) {
    if (status == null) return;
    MaxC lib = MaxLibrary.lib();
    int code;
    String name;
    String message;
    try {
      code = lib.max_status_code(status);
      name = lib.max_status_code_name(code);
      Pointer text = lib.max_status_message(status);
      message = text == null ? "" : text.getString(0, StandardCharsets.UTF_8.name());
    } finally {
      lib.max_status_release(status);
    }
    throw new MaxException(code, name, message);
  }

  /**
   * Use after close: an IllegalStateException, as Java's own closed resources throw, naming the
   * closed object and the method called on it. It never reaches C, so it carries no status.
   */
  static IllegalStateException closed(String kind, String method) {
    return new IllegalStateException(kind + "." + method + ": the " + kind + " is closed");
  }

  /** An INVALID_ARGUMENT the binding raises itself. */
  static MaxException invalid(String message) {
    return new MaxException(StatusCode.INVALID_ARGUMENT, message);
  }

  /**
   * {@code value}, or an INVALID_ARGUMENT naming {@code what} ("Weights.addFile: path") when it is
   * null, as the library answers a NULL argument.
   */
  static <T> T nonNull(T value, String what) {
    if (value == null) throw invalid(what + " is null");
    return value;
  }

  /** A string the library returned through an out-parameter, copied (NULL gives null). */
  static String string(Pointer p) {
    return p == null ? null : p.getString(0, StandardCharsets.UTF_8.name());
  }
}

package dev.maxc;

/**
 * Every failure of the binding: a failed {@code max_status_t} from the library (its code, the
 * code's name and its message, copied before the status was released), or a misuse the binding
 * catches itself (a closed handle, a Java array that does not fit the tensor), which gets the code
 * the library would have used. Unchecked, like the failures of most Java I/O-free APIs.
 *
 * <p>Immutable and thread-safe.
 */
public class MaxException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int rawCode;
  private final String codeName;
  private final String statusMessage;

  /**
   * An exception with C code {@code rawCode}, its name and the library's (or binding's) message.
   * Bindings code normally gets these from {@link Status#check}; this is public for tests and
   * wrappers.
   */
  public MaxException(int rawCode, String codeName, String statusMessage) {
    super(codeName + ": " + statusMessage);
    this.rawCode = rawCode;
    this.codeName = codeName;
    this.statusMessage = statusMessage;
  }

  /** An exception the binding raises itself with {@code code} and {@code message}. */
  public MaxException(StatusCode code, String message) {
    this(code.value(), code.name(), message);
  }

  /** The status code (UNKNOWN for a code newer than this binding; see {@link #rawCode()}). */
  public StatusCode code() {
    return StatusCode.fromValue(rawCode);
  }

  /** The status code as the C value. */
  public int rawCode() {
    return rawCode;
  }

  /** The code's upper-case name as the library spells it, e.g. {@code "INVALID_ARGUMENT"}. */
  public String codeName() {
    return codeName;
  }

  /** The library's message alone, without the code name in front. */
  public String statusMessage() {
    return statusMessage;
  }
}

package dev.maxc;

/** The codes of {@code max_status_t} ({@code MAX_STATUS_*}), with the header's numbers. */
public enum StatusCode {
  OK(0),
  CANCELLED(1),
  UNKNOWN(2),
  INVALID_ARGUMENT(3),
  DEADLINE_EXCEEDED(4),
  NOT_FOUND(5),
  ALREADY_EXISTS(6),
  PERMISSION_DENIED(7),
  RESOURCE_EXHAUSTED(8),
  FAILED_PRECONDITION(9),
  ABORTED(10),
  OUT_OF_RANGE(11),
  UNIMPLEMENTED(12),
  INTERNAL(13),
  UNAVAILABLE(14),
  DATA_LOSS(15),
  UNAUTHENTICATED(16);

  private final int value;

  StatusCode(int value) {
    this.value = value;
  }

  /** The C value ({@code MAX_STATUS_<NAME>}). */
  public int value() {
    return value;
  }

  /**
   * The code with C value {@code value}; {@link #UNKNOWN} for a value this binding does not know
   * (a newer library may append codes).
   */
  public static StatusCode fromValue(int value) {
    for (StatusCode c : values()) {
      if (c.value == value) return c;
    }
    return UNKNOWN;
  }
}

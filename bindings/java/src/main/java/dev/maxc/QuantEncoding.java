package dev.maxc;

import com.sun.jna.ptr.IntByReference;

/**
 * Block-quantization encodings ({@code MAX_QUANT_*}, GGUF's Q4_0, Q4_K, Q5_K, Q6_K, Q8_0). A
 * quantized tensor is uint8 {@code [rows..., row_bytes]}; its encoding says how to read the
 * bytes. The graph ops {@code dequantize} and {@code qmatmul} take {@link #maxName()} as their
 * {@code encoding} attribute.
 *
 * <p>Immutable; all methods are thread-safe.
 */
public enum QuantEncoding {
  NONE(0),
  Q4_0(1),
  Q4_K(2),
  Q5_K(3),
  Q6_K(4),
  Q8_0(5);

  private final int code;

  QuantEncoding(int code) {
    this.code = code;
  }

  /** The C value ({@code MAX_QUANT_<NAME>}). */
  public int code() {
    return code;
  }

  /** The library's name: {@code "q4_k"}, {@code "none"}. */
  public String maxName() {
    return MaxLibrary.lib().max_quant_encoding_name(code);
  }

  /**
   * Elements in one block (32 for Q4_0 and Q8_0, 256 for the K-quants).
   *
   * @throws MaxException INVALID_ARGUMENT for {@link #NONE}
   */
  public int elementsPerBlock() {
    return block()[0];
  }

  /**
   * Bytes of one block (34 for Q8_0).
   *
   * @throws MaxException INVALID_ARGUMENT for {@link #NONE}
   */
  public int blockBytes() {
    return block()[1];
  }

  private int[] block() {
    IntByReference elements = new IntByReference();
    IntByReference bytes = new IntByReference();
    Status.check(MaxLibrary.lib().max_quant_encoding_block(code, elements, bytes));
    return new int[] {elements.getValue(), bytes.getValue()};
  }

  /**
   * The encoding with C value {@code code}.
   *
   * @throws MaxException INVALID_ARGUMENT for a value this binding does not know
   */
  public static QuantEncoding fromCode(int code) {
    for (QuantEncoding e : values()) {
      if (e.code == code) return e;
    }
    throw Status.invalid("unknown quantization encoding " + code);
  }
}

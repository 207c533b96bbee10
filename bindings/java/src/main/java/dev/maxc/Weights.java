package dev.maxc;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;

/**
 * A registry of named tensors (MAX's weights registry, ABI 1.3): every tensor of the
 * {@code .safetensors} and {@code .gguf} files added to it, mapped rather than read, and tensors
 * added from memory (shared, not copied). Models bind the weights their graph declares from it by
 * name: {@link CompiledModel#createModel(Weights)}, {@link Model#reload(Weights)}.
 *
 * <p>The caller owns it (close it, or let the Cleaner); models bound from it and tensors taken
 * from it stay valid after it is closed. Thread-safe: adding takes the registry exclusively (as C
 * requires), so an {@code addFile} waits for running queries and binds, which otherwise run in
 * parallel.
 */
public final class Weights extends NativeHandle {
  /** What the registry knows of one weight without reading its bytes. Immutable. */
  public record Info(DType dtype, long[] shape, QuantEncoding encoding) {
    /** The shape as stored: uint8 {@code [rows..., row_bytes]} when quantized. */
    public Info {
      shape = shape.clone();
    }

    /** The shape as stored, a new array. */
    @Override
    public long[] shape() {
      return shape.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Info && ((Info) o).dtype == dtype && Arrays.equals(((Info) o).shape, shape)
          && ((Info) o).encoding == encoding;
    }

    @Override
    public int hashCode() {
      return Objects.hash(dtype, Arrays.hashCode(shape), encoding);
    }

    @Override
    public String toString() {
      return "Info(" + dtype.maxName() + Arrays.toString(shape) + ", " + encoding + ")";
    }
  }

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

  /**
   * An empty registry.
   *
   * @throws MaxException when the library cannot be loaded
   */
  public Weights() {
    super("Weights", create(), MaxLibrary.lib()::max_weights_release);
  }

  private static Pointer create() {
    PointerByReference out = new PointerByReference();
    Status.check(MaxLibrary.lib().max_weights_create(out));
    return out.getValue();
  }

  /**
   * A registry holding every tensor of {@code paths}; the caller owns it.
   *
   * @throws MaxException as {@link #addFile}; nothing is leaked on failure
   */
  public static Weights open(Path... paths) {
    Weights w = new Weights();
    try {
      for (Path p : paths) w.addFile(p);
      return w;
    } catch (RuntimeException e) {
      w.close();
      throw e;
    }
  }

  private <T> T under(Lock l, String method, Function<Pointer, T> body) {
    l.lock();
    try {
      return with(method, body);
    } finally {
      l.unlock();
    }
  }

  /** Runs {@code body} on the C registry while no add can run (for binding models). */
  <T> T read(String method, Function<Pointer, T> body) {
    return under(lock.readLock(), method, body);
  }

  private void write(String method, Function<Pointer, Pointer> call) {
    under(lock.writeLock(), method, p -> {
      Status.check(call.apply(p));
      return null;
    });
  }

  /**
   * Adds every tensor of a weights file, or nothing when anything fails. The format comes from
   * the name ({@code .safetensors}, {@code .gguf}, or a sharded checkpoint's
   * {@code .safetensors.index.json}), else from the content.
   *
   * @throws MaxException NOT_FOUND or PERMISSION_DENIED for a file that cannot be opened;
   *     DATA_LOSS naming the file, tensor and offset for a truncated or corrupt one;
   *     INVALID_ARGUMENT for an unknown dtype or format; UNIMPLEMENTED for a GGUF tensor type the
   *     library does not read; ALREADY_EXISTS naming a weight the registry has
   * @throws IllegalStateException when closed
   */
  public void addFile(Path path) {
    String file = Status.nonNull(path, "Weights.addFile: path").toString();
    write("addFile", p -> MaxLibrary.lib().max_weights_add_file(p, file));
  }

  /** Adds an unquantized tensor. See {@link #addTensor(String, Tensor, QuantEncoding)}. */
  public void addTensor(String name, Tensor tensor) {
    addTensor(name, tensor, QuantEncoding.NONE);
  }

  /**
   * Adds {@code tensor} under {@code name} by reference: the registry keeps its own reference
   * (closing {@code tensor} afterwards is fine) and models read its memory, so do not write to it
   * while they live. With an encoding other than NONE it must be uint8 {@code [rows...,
   * row_bytes]} with row_bytes a whole number of blocks.
   *
   * @throws MaxException INVALID_ARGUMENT for an empty name or a tensor that does not fit the
   *     encoding; ALREADY_EXISTS when the name is taken
   * @throws IllegalStateException when this registry or the tensor is closed
   */
  public void addTensor(String name, Tensor tensor, QuantEncoding encoding) {
    Status.nonNull(tensor, "Weights.addTensor: tensor");
    Status.nonNull(encoding, "Weights.addTensor: encoding");
    write("addTensor", p -> tensor.with("Weights.addTensor",
        t -> MaxLibrary.lib().max_weights_add_tensor(p, name, t, encoding.code())));
  }

  /**
   * The number of tensors.
   *
   * @throws IllegalStateException when closed
   */
  public int size() {
    return read("size", p -> {
      SizeTByReference n = new SizeTByReference();
      Status.check(MaxLibrary.lib().max_weights_count(p, n));
      return (int) n.getValue();
    });
  }

  /**
   * Every name, in the order the tensors were added.
   *
   * @throws IllegalStateException when closed
   */
  public List<String> names() {
    return read("names", p -> {
      MaxC lib = MaxLibrary.lib();
      SizeTByReference n = new SizeTByReference();
      Status.check(lib.max_weights_count(p, n));
      List<String> out = new ArrayList<>();
      for (long i = 0; i < n.getValue(); i++) {
        PointerByReference name = new PointerByReference();
        Status.check(lib.max_weights_name(p, new SizeT(i), name));
        out.add(Status.string(name.getValue()));
      }
      return Collections.unmodifiableList(out);
    });
  }

  /**
   * What the registry knows of {@code name}.
   *
   * @throws MaxException NOT_FOUND naming the weight when absent
   * @throws IllegalStateException when closed
   */
  public Info info(String name) {
    return read("info", p -> {
      IntByReference dtype = new IntByReference();
      IntByReference rank = new IntByReference();
      PointerByReference dims = new PointerByReference();
      IntByReference encoding = new IntByReference();
      Status.check(MaxLibrary.lib().max_weights_info(p, name, dtype, rank, dims, encoding));
      long[] shape = rank.getValue() == 0 ? new long[0] : dims.getValue().getLongArray(0, rank.getValue());
      return new Info(DType.fromCode(dtype.getValue()), shape, QuantEncoding.fromCode(encoding.getValue()));
    });
  }

  /**
   * Whether the registry holds {@code name}.
   *
   * @throws IllegalStateException when closed
   */
  public boolean contains(String name) {
    try {
      info(name);
      return true;
    } catch (MaxException e) {
      if (e.code() == StatusCode.NOT_FOUND) return false;
      throw e;
    }
  }

  /**
   * The weight {@code name} as a new tensor the caller owns: a read-only view of the file (which
   * stays mapped while the view lives, even after this registry is closed), a read-only copy when
   * the file's bytes are not aligned for the dtype, or the tensor that was added.
   *
   * @throws MaxException NOT_FOUND naming the weight when absent
   * @throws IllegalStateException when closed
   */
  public Tensor tensor(String name) {
    return read("tensor", p -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_weights_tensor(p, name, out));
      return new Tensor(out.getValue());
    });
  }

  /**
   * Writes every tensor, in order, as one GGUF v3 file (quantized ones with their encoding), with
   * {@code general.name} set to {@code name} unless it is null or empty. A failed write leaves
   * {@code path} as it was.
   *
   * @throws MaxException INVALID_ARGUMENT for a dtype GGUF cannot hold (bool, unsigned integers
   *     wider than 8 bits, float8) or more than 4 dims; an I/O error naming the path
   * @throws IllegalStateException when closed
   */
  public void saveGguf(Path path, String name) {
    String file = Status.nonNull(path, "Weights.saveGguf: path").toString();
    read("saveGguf", p -> {
      Status.check(MaxLibrary.lib().max_weights_save_gguf(p, file, name == null || name.isEmpty() ? null : name));
      return null;
    });
  }

  @Override
  public String toString() {
    return isClosed() ? "Weights(<closed>)" : "Weights(" + size() + " tensors)";
  }
}

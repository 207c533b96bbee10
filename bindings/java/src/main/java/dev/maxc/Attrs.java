package dev.maxc;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.util.ArrayList;
import java.util.List;

/**
 * Typed op attributes (a name to value map) for {@link Graph#addOp}. Each setter copies its
 * argument, replaces an earlier value of the same name and returns this, so calls chain:
 * {@code new Attrs().setInt("axis", -1)}.
 *
 * <p>The caller owns it (close it, or let the Cleaner); the graph copies what it needs, so it
 * may be closed right after addOp. Methods are synchronized (C attrs need external
 * synchronization).
 */
public final class Attrs extends NativeHandle {
  /**
   * An empty map.
   *
   * @throws MaxException when the library cannot be loaded
   */
  public Attrs() {
    super("Attrs", create(), MaxLibrary.lib()::max_attrs_release);
  }

  private static Pointer create() {
    PointerByReference out = new PointerByReference();
    Status.check(MaxLibrary.lib().max_attrs_create(out));
    return out.getValue();
  }

  private interface Setter {
    Pointer set(Pointer attrs);
  }

  private synchronized Attrs set(String method, Setter s) {
    with(method, p -> {
      Status.check(s.set(p));
      return null;
    });
    return this;
  }

  /** Runs {@code body} with the map locked and held (for Graph.addOp). */
  synchronized <T> T locked(String method, java.util.function.Function<Pointer, T> body) {
    return with(method, body);
  }

  /**
   * Sets an int64 attribute.
   *
   * @throws IllegalStateException when closed
   */
  public Attrs setInt(String name, long value) {
    return set("setInt", p -> MaxLibrary.lib().max_attrs_set_int(p, name, value));
  }

  /**
   * Sets a float64 attribute.
   *
   * @throws IllegalStateException when closed
   */
  public Attrs setFloat(String name, double value) {
    return set("setFloat", p -> MaxLibrary.lib().max_attrs_set_float(p, name, value));
  }

  /**
   * Sets a bool attribute.
   *
   * @throws IllegalStateException when closed
   */
  public Attrs setBool(String name, boolean value) {
    return set("setBool", p -> MaxLibrary.lib().max_attrs_set_bool(p, name, value ? 1 : 0));
  }

  /**
   * Sets a string attribute.
   *
   * @throws IllegalStateException when closed
   */
  public Attrs setString(String name, String value) {
    return set("setString", p -> MaxLibrary.lib().max_attrs_set_string(p, name, value));
  }

  /**
   * Sets a dtype attribute.
   *
   * @throws IllegalStateException when closed
   */
  public Attrs setDType(String name, DType value) {
    return set("setDType", p -> MaxLibrary.lib().max_attrs_set_dtype(p, name, value.code()));
  }

  /**
   * Sets an int64 list attribute.
   *
   * @throws IllegalStateException when closed
   */
  public Attrs setInts(String name, long... values) {
    return set("setInts", p -> MaxLibrary.lib().max_attrs_set_ints(p, name,
        values.length == 0 ? null : values, new SizeT(values.length)));
  }

  /**
   * Sets a float64 list attribute.
   *
   * @throws IllegalStateException when closed
   */
  public Attrs setFloats(String name, double... values) {
    return set("setFloats", p -> MaxLibrary.lib().max_attrs_set_floats(p, name,
        values.length == 0 ? null : values, new SizeT(values.length)));
  }

  /**
   * Sets a dims attribute (a shape that may be symbolic) from Integers/Longs, Strings or Dims.
   *
   * @throws MaxException INVALID_ARGUMENT for a bad dim; FAILED_PRECONDITION when closed
   */
  public Attrs setDims(String name, Object... dims) {
    List<Dim> ds = new ArrayList<>();
    for (Object d : dims) ds.add(Dim.from(d));
    List<Memory> keep = new ArrayList<>();
    try {
      MaxC.MaxDim[] arr = Dim.toNative(ds, keep);
      return set("setDims", p -> MaxLibrary.lib().max_attrs_set_dims(p, name, arr, new SizeT(ds.size())));
    } finally {
      keep.forEach(Memory::close);
    }
  }

  /**
   * Sets a subgraph attribute: an index from {@link Graph#addSubgraph}.
   *
   * @throws IllegalStateException when closed
   */
  public Attrs setGraph(String name, long subgraphIndex) {
    return set("setGraph", p -> MaxLibrary.lib().max_attrs_set_graph(p, name, subgraphIndex));
  }

  /**
   * Sets a device attribute.
   *
   * @throws IllegalStateException when closed
   */
  public Attrs setDevice(String name, DeviceRef device) {
    return set("setDevice", p -> MaxLibrary.lib().max_attrs_set_device(p, name, device.kind().code, device.id()));
  }

  @Override
  public String toString() {
    return isClosed() ? "Attrs(<closed>)" : "Attrs()";
  }
}

package dev.maxc;

import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One entry of the library's op registry: name, version, inputs and attributes, for checking
 * calls or generating helpers. A snapshot; immutable and thread-safe (the registry is too).
 */
public final class OpInfo {
  /**
   * How many values an input takes ({@code MAX_OP_INPUT_*}, in C order): exactly one; zero or one
   * (only at the end); one or more (only last); zero or more (only last; ABI 1.6, the operands of
   * {@code cond} and {@code call}).
   */
  public enum Arity { ONE, OPTIONAL, VARIADIC, ANY }

  /** Whether an attribute must be given ({@code MAX_OP_ATTR_*}). */
  public enum Presence { REQUIRED, OPTIONAL, DEFAULTED }

  /** The kinds of attributes ({@code MAX_ATTR_*}, in C order). */
  public enum AttrKind { INT, FLOAT, STRING, DTYPE, INTS, FLOATS, DIMS, GRAPH, BOOL, DEVICE, UNKNOWN }

  /** An input: its name and arity. */
  public record Input(String name, Arity arity) {}

  /** An attribute: its name, kind and presence. */
  public record Attr(String name, AttrKind kind, Presence presence) {}

  private final String name;
  private final int version;
  private final List<Input> inputs;
  private final List<Attr> attrs;

  private OpInfo(String name, int version, List<Input> inputs, List<Attr> attrs) {
    this.name = name;
    this.version = version;
    this.inputs = inputs;
    this.attrs = attrs;
  }

  /** Every registered (op, version), sorted by name then version. */
  public static List<OpInfo> all() {
    MaxC lib = MaxLibrary.lib();
    SizeTByReference n = new SizeTByReference();
    Status.check(lib.max_op_count(n));
    List<OpInfo> out = new ArrayList<>();
    for (long i = 0; i < n.getValue(); i++) {
      PointerByReference name = new PointerByReference();
      IntByReference version = new IntByReference();
      Status.check(lib.max_op_at(new SizeT(i), name, version));
      out.add(get(Status.string(name.getValue()), version.getValue()));
    }
    return Collections.unmodifiableList(out);
  }

  private static final Map<String, OpInfo> CACHE = new ConcurrentHashMap<>();

  /** As {@link #get}, remembered: the registry never changes while the library is loaded. */
  static OpInfo cached(String name, int version) {
    String key = name + "@" + version;
    OpInfo info = CACHE.get(key);
    if (info == null) {
      info = get(name, version); // throws NOT_FOUND before anything is cached
      CACHE.put(key, info);
    }
    return info;
  }

  /**
   * Op {@code name} at {@code version} (0: the newest).
   *
   * @throws MaxException NOT_FOUND for an unknown op
   */
  public static OpInfo get(String name, int version) {
    MaxC lib = MaxLibrary.lib();
    SizeTByReference n = new SizeTByReference();
    Status.check(lib.max_op_num_inputs(name, version, n));
    List<Input> inputs = new ArrayList<>();
    for (long i = 0; i < n.getValue(); i++) {
      PointerByReference in = new PointerByReference();
      IntByReference arity = new IntByReference();
      Status.check(lib.max_op_input(name, version, new SizeT(i), in, arity));
      inputs.add(new Input(Status.string(in.getValue()), arity(arity.getValue())));
    }
    Status.check(lib.max_op_num_attrs(name, version, n));
    List<Attr> attrs = new ArrayList<>();
    for (long i = 0; i < n.getValue(); i++) {
      PointerByReference an = new PointerByReference();
      IntByReference kind = new IntByReference();
      IntByReference presence = new IntByReference();
      Status.check(lib.max_op_attr(name, version, new SizeT(i), an, kind, presence));
      AttrKind k = kind.getValue() >= 0 && kind.getValue() < AttrKind.UNKNOWN.ordinal()
          ? AttrKind.values()[kind.getValue()] : AttrKind.UNKNOWN;
      attrs.add(new Attr(Status.string(an.getValue()), k, Presence.values()[Math.min(presence.getValue(), 2)]));
    }
    return new OpInfo(name, version, Collections.unmodifiableList(inputs), Collections.unmodifiableList(attrs));
  }

  /** The arity of C code {@code code}; a code newer than this binding reads as ANY, the loosest. */
  private static Arity arity(int code) {
    return code >= 0 && code < Arity.values().length ? Arity.values()[code] : Arity.ANY;
  }

  /** The op's registered name. */
  public String name() {
    return name;
  }

  /** The version asked for (0 means "the newest" when looked up with {@link #get}). */
  public int version() {
    return version;
  }

  /** The inputs in order. */
  public List<Input> inputs() {
    return inputs;
  }

  /** The attributes in registry order. */
  public List<Attr> attrs() {
    return attrs;
  }

  /** The attribute {@code name}, or null when the op has none of that name. */
  public Attr attr(String name) {
    for (Attr a : attrs) {
      if (a.name().equals(name)) return a;
    }
    return null;
  }

  @Override
  public String toString() {
    return "OpInfo(" + name + " v" + version + ", inputs=" + inputs + ", attrs=" + attrs + ")";
  }
}

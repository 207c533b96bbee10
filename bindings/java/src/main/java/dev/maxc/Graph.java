package dev.maxc;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;

/**
 * A computation graph (MAX's max.graph Graph): typed named inputs, external weights bound when
 * a model is made, constants, ops added through one generic entry point ({@link #addOp}, with
 * typed helpers in {@link Ops}), and named outputs. Every failed call leaves the graph as it
 * was. Compile it with {@link Context#compile}.
 *
 * <p>The caller owns it; its {@link Value}s live as long as it. Every method is synchronized
 * on the graph (C graphs need external synchronization).
 */
public final class Graph extends NativeHandle {
  private static final int MAX_STATUS_OUT_OF_RANGE = 11;

  /**
   * An empty graph named {@code name} (null: "main").
   *
   * @throws MaxException when loading fails
   */
  public Graph(String name) {
    this(create(name));
  }

  private Graph(Pointer peer) {
    super("Graph", peer, MaxLibrary.lib()::max_graph_release);
  }

  private static Pointer create(String name) {
    PointerByReference out = new PointerByReference();
    Status.check(MaxLibrary.lib().max_graph_create(name, out));
    return out.getValue();
  }

  /** Runs {@code body} on the C graph with the graph locked and held. */
  synchronized <T> T locked(String method, Function<Pointer, T> body) {
    return with(method, body);
  }

  /**
   * The graph's name.
   *
   * @throws IllegalStateException when closed
   */
  public String name() {
    return locked("name", g -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_graph_name(g, out));
      return Status.string(out.getValue());
    });
  }

  // ---- inputs, weights, constants ----

  /**
   * Adds a named input of {@code type}.
   *
   * @throws MaxException ALREADY_EXISTS when the name is taken; INVALID_ARGUMENT for a bad dim
   *     expression
   */
  public Value addInput(String name, TensorType type) {
    return addTyped("addInput", name, type, true);
  }

  /** Adds a named CPU input; dims as in {@link TensorType#of}. */
  public Value addInput(String name, DType dtype, Object... dims) {
    return addInput(name, TensorType.of(dtype, dims));
  }

  /**
   * Declares the external weight {@code name}, bound by name when a model is made. Declaring it
   * again with the same type gives the same value.
   *
   * @throws MaxException INVALID_ARGUMENT when it exists with another type
   */
  public Value addWeight(String name, TensorType type) {
    return addTyped("addWeight", name, type, false);
  }

  /** Declares a CPU weight; dims as in {@link TensorType#of}. */
  public Value addWeight(String name, DType dtype, Object... dims) {
    return addWeight(name, TensorType.of(dtype, dims));
  }

  private Value addTyped(String method, String name, TensorType type, boolean input) {
    return locked(method, g -> {
      List<Memory> keep = new ArrayList<>();
      try {
        MaxC.MaxDim[] dims = Dim.toNative(type.dims(), keep);
        PointerByReference out = new PointerByReference();
        MaxC lib = MaxLibrary.lib();
        int kind = type.device().kind().code;
        int id = type.device().id();
        Status.check(input
            ? lib.max_graph_add_input(g, name, type.dtype().code(), dims, type.rank(), kind, id, out)
            : lib.max_graph_add_weight(g, name, type.dtype().code(), dims, type.rank(), kind, id, out));
        return new Value(this, out.getValue());
      } finally {
        keep.forEach(Memory::close);
      }
    });
  }

  /**
   * Adds a constant holding a copy of a host tensor's elements, placed on the host ({@code cpu:0}).
   *
   * @throws IllegalStateException when either is closed
   */
  public Value addConstant(Tensor tensor) {
    return locked("addConstant", g -> tensor.with("addConstant", t -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_graph_add_constant(g, t, out));
      return new Value(this, out.getValue());
    }));
  }

  /**
   * Adds a constant holding a copy of {@code tensor}'s elements placed on {@code device} (ABI 1.5):
   * a GPU graph's scalars and tables live on its GPU, as a graph does not span devices. The tensor
   * may be on any device (its elements are read now); no GPU is needed to build the graph.
   * {@link DeviceRef#cpu()} is {@link #addConstant(Tensor)}.
   *
   * @throws MaxException INVALID_ARGUMENT for a bad device id; UNIMPLEMENTED for another device
   *     than the host with a library older than ABI 1.5
   * @throws IllegalStateException when the graph or the tensor is closed
   */
  public Value addConstant(Tensor tensor, DeviceRef device) {
    if (device.equals(DeviceRef.cpu())) return addConstant(tensor);
    MaxLibrary.requireAbiMinor(5, "a constant placed on a device (max_graph_add_constant_on)");
    return locked("addConstant", g -> tensor.with("addConstant", t -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_graph_add_constant_on(g, t, device.kind().code, device.id(), out));
      return new Value(this, out.getValue());
    }));
  }

  // ---- ops ----

  /** Adds op {@code op} (newest version). See {@link #addOp(String, int, List, Attrs)}. */
  public List<Value> addOp(String op, List<Value> inputs, Attrs attrs) {
    return addOp(op, 0, inputs, attrs);
  }

  /**
   * Adds op {@code op} at {@code version} (0: the newest) on {@code inputs} with {@code attrs}
   * (null: none) and gives its outputs. The library checks arity, dtypes, shapes and attributes.
   *
   * @throws MaxException NOT_FOUND for an unknown op; INVALID_ARGUMENT naming the op, the input
   *     and the mismatch (also for a value of another graph)
   */
  public List<Value> addOp(String op, int version, List<Value> inputs, Attrs attrs) {
    return addOp(op, version, inputs, attrs, false);
  }

  /**
   * As {@link #addOp(String, List, Attrs)} for an op that must give exactly one output: one that
   * gives more is refused before it is added.
   */
  Value addOp1(String op, List<Value> inputs, Attrs attrs) {
    return addOp(op, 0, inputs, attrs, true).get(0);
  }

  private List<Value> addOp(String op, int version, List<Value> inputs, Attrs attrs, boolean single) {
    Pointer[] ins = new Pointer[inputs.size()];
    for (int i = 0; i < ins.length; i++) {
      Value v = inputs.get(i);
      if (v == null || v.graph() != this) {
        throw Status.invalid(op + ": input #" + i + (v == null ? " is null" : " belongs to another graph"));
      }
      ins[i] = v.peer();
    }
    return locked("addOp", g -> {
      if (attrs == null) return addOpLocked(g, op, version, ins, null, single);
      return attrs.locked("addOp", a -> addOpLocked(g, op, version, ins, a, single));
    });
  }

  private List<Value> addOpLocked(Pointer g, String op, int version, Pointer[] ins, Pointer attrs, boolean single) {
    MaxC lib = MaxLibrary.lib();
    int capacity = single ? 1 : 4;
    for (;;) {
      try (Memory outs = new Memory((long) Native.POINTER_SIZE * capacity)) {
        SizeTByReference n = new SizeTByReference();
        Pointer status = lib.max_graph_add_op(g, op, version, ins.length == 0 ? null : ins, new SizeT(ins.length),
            attrs, outs, new SizeT(capacity), n);
        // OUT_OF_RANGE with a larger count means "room for n outputs needed": nothing was added.
        if (status != null && lib.max_status_code(status) == MAX_STATUS_OUT_OF_RANGE && n.getValue() > capacity) {
          lib.max_status_release(status);
          if (single) throw Status.invalid(op + " gives " + n.getValue() + " outputs, not 1; use the List form");
          capacity = (int) n.getValue();
          continue;
        }
        Status.check(status);
        List<Value> values = new ArrayList<>((int) n.getValue());
        for (int i = 0; i < n.getValue(); i++) values.add(new Value(this, outs.getPointer((long) Native.POINTER_SIZE * i)));
        return Collections.unmodifiableList(values);
      }
    }
  }

  /** Sets the outputs, named "output0", "output1", .... */
  public void output(Value... values) {
    setOutputs(Arrays.asList(values), null);
  }

  /**
   * Sets the graph's outputs with {@code names} (null, or null entries: "output&lt;i&gt;").
   *
   * @throws MaxException INVALID_ARGUMENT for a value of another graph or a count mismatch
   */
  public void setOutputs(List<Value> values, List<String> names) {
    if (names != null && names.size() != values.size()) {
      throw Status.invalid("setOutputs: " + values.size() + " values but " + names.size() + " names");
    }
    Pointer[] vs = new Pointer[values.size()];
    for (int i = 0; i < vs.length; i++) {
      Value v = values.get(i);
      if (v == null || v.graph() != this) throw Status.invalid("setOutputs: output #" + i + " is null or of another graph");
      vs[i] = v.peer();
    }
    String[] ns = names == null ? null : names.toArray(new String[0]);
    locked("setOutputs", g -> {
      Status.check(MaxLibrary.lib().max_graph_set_outputs(g, vs.length == 0 ? null : vs, ns, new SizeT(vs.length)));
      return null;
    });
  }

  /**
   * Appends a copy of {@code subgraph} (for control flow and call ops) and gives its index, for
   * {@link Attrs#setGraph}.
   */
  public long addSubgraph(Graph subgraph) {
    return locked("addSubgraph", g -> subgraph.locked("addSubgraph", s -> {
      LongByReference out = new LongByReference();
      Status.check(MaxLibrary.lib().max_graph_add_subgraph(g, s, out));
      return out.getValue();
    }));
  }

  // ---- queries ----

  /**
   * The inputs in order.
   *
   * @throws IllegalStateException when closed
   */
  public List<Value> inputs() {
    return endpoints("inputs", true, false);
  }

  /**
   * The input names in order.
   *
   * @throws IllegalStateException when closed
   */
  public List<String> inputNames() {
    return endpoints("inputNames", true, true);
  }

  /**
   * The outputs in order.
   *
   * @throws IllegalStateException when closed
   */
  public List<Value> outputs() {
    return endpoints("outputs", false, false);
  }

  /**
   * The output names in order.
   *
   * @throws IllegalStateException when closed
   */
  public List<String> outputNames() {
    return endpoints("outputNames", false, true);
  }

  @SuppressWarnings("unchecked")
  private <T> List<T> endpoints(String method, boolean inputs, boolean names) {
    return locked(method, g -> {
      MaxC lib = MaxLibrary.lib();
      SizeTByReference n = new SizeTByReference();
      Status.check(inputs ? lib.max_graph_num_inputs(g, n) : lib.max_graph_num_outputs(g, n));
      List<Object> out = new ArrayList<>();
      for (long i = 0; i < n.getValue(); i++) {
        PointerByReference value = new PointerByReference();
        PointerByReference name = new PointerByReference();
        Status.check(inputs ? lib.max_graph_input(g, new SizeT(i), value, name)
            : lib.max_graph_output(g, new SizeT(i), value, name));
        out.add(names ? Status.string(name.getValue()) : new Value(this, value.getValue()));
      }
      return (List<T>) Collections.unmodifiableList(out);
    });
  }

  /**
   * The number of ops.
   *
   * @throws IllegalStateException when closed
   */
  public long numOps() {
    return locked("numOps", g -> {
      SizeTByReference n = new SizeTByReference();
      Status.check(MaxLibrary.lib().max_graph_num_ops(g, n));
      return n.getValue();
    });
  }

  /**
   * Re-checks the whole graph.
   *
   * @throws MaxException INVALID_ARGUMENT naming what is wrong
   */
  public void verify() {
    locked("verify", g -> {
      Status.check(MaxLibrary.lib().max_graph_verify(g));
      return null;
    });
  }

  // ---- serialization and printing ----

  /**
   * The graph in the MAXG format.
   *
   * @throws IllegalStateException when closed
   */
  public byte[] serialize() {
    return locked("serialize", g -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_graph_serialize(g, out));
      return Buffers.takeBytes(out.getValue());
    });
  }

  /**
   * A new graph read from a MAXG image; the caller owns it.
   *
   * @throws MaxException DATA_LOSS for a truncated or corrupt image, INVALID_ARGUMENT for an
   *     invalid graph
   */
  public static Graph deserialize(byte[] image) {
    PointerByReference out = new PointerByReference();
    Status.check(MaxLibrary.lib().max_graph_deserialize(image.length == 0 ? null : image, new SizeT(image.length), out));
    return new Graph(out.getValue());
  }

  /**
   * Writes the graph to a MAXG file.
   *
   * @throws MaxException on an I/O failure
   */
  public void save(Path path) {
    locked("save", g -> {
      Status.check(MaxLibrary.lib().max_graph_save(g, path.toString()));
      return null;
    });
  }

  /**
   * Loads a MAXG file (large constants stay mapped); the caller owns the graph.
   *
   * @throws MaxException NOT_FOUND for a missing file; DATA_LOSS / INVALID_ARGUMENT as deserialize
   */
  public static Graph load(Path path) {
    PointerByReference out = new PointerByReference();
    Status.check(MaxLibrary.lib().max_graph_load(path.toString(), out));
    return new Graph(out.getValue());
  }

  /**
   * The graph as readable text.
   *
   * @throws IllegalStateException when closed
   */
  public String toText() {
    return locked("toText", g -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_graph_to_text(g, out));
      return new String(Buffers.takeBytes(out.getValue()), StandardCharsets.UTF_8);
    });
  }

  /**
   * The graph in Graphviz DOT.
   *
   * @throws IllegalStateException when closed
   */
  public String toDot() {
    return locked("toDot", g -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_graph_to_dot(g, out));
      return new String(Buffers.takeBytes(out.getValue()), StandardCharsets.UTF_8);
    });
  }

  @Override
  public String toString() {
    return isClosed() ? "Graph(<closed>)" : "Graph(" + name() + ")";
  }
}

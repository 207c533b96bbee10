package dev.maxc;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.util.ArrayList;
import java.util.List;

/**
 * An edge of a {@link Graph} (MAX's TensorValue): a graph input, weight, constant or op result.
 * Values belong to their graph: they own nothing, need no closing, and fail with
 * IllegalStateException once the graph is closed. The sugar methods ({@link #add}, {@link #matmul},
 * ...) add ops through {@link Ops}.
 *
 * <p>Every method locks the graph (graphs need external synchronization in C), so values may be
 * used from several threads, one call at a time.
 */
public final class Value {
  private final Graph graph;
  private final Pointer peer;

  Value(Graph graph, Pointer peer) {
    this.graph = graph;
    this.peer = peer;
  }

  /** The graph this value belongs to. */
  public Graph graph() {
    return graph;
  }

  Pointer peer() {
    return peer;
  }

  /**
   * The element type.
   *
   * @throws IllegalStateException when the graph is closed
   */
  public DType dtype() {
    return graph.locked("Value.dtype", g -> {
      IntByReference out = new IntByReference();
      Status.check(MaxLibrary.lib().max_value_dtype(peer, out));
      return DType.fromCode(out.getValue());
    });
  }

  /**
   * The number of dims.
   *
   * @throws IllegalStateException when the graph is closed
   */
  public int rank() {
    return graph.locked("Value.rank", g -> {
      IntByReference out = new IntByReference();
      Status.check(MaxLibrary.lib().max_value_rank(peer, out));
      return out.getValue();
    });
  }

  /** Dim {@code index}: static, or symbolic in the graph's canonical form ("batch * 5"). */
  public Dim dim(int index) {
    return graph.locked("Value.dim", g -> readDim(index));
  }

  private Dim readDim(int index) {
    LongByReference size = new LongByReference();
    PointerByReference expr = new PointerByReference();
    Status.check(MaxLibrary.lib().max_value_dim(peer, index, size, expr));
    return size.getValue() >= 0 ? Dim.of(size.getValue()) : Dim.sym(Status.string(expr.getValue()));
  }

  /**
   * All dims.
   *
   * @throws IllegalStateException when the graph is closed
   */
  public List<Dim> shape() {
    return graph.locked("Value.shape", g -> {
      IntByReference rank = new IntByReference();
      Status.check(MaxLibrary.lib().max_value_rank(peer, rank));
      List<Dim> dims = new ArrayList<>(rank.getValue());
      for (int i = 0; i < rank.getValue(); i++) dims.add(readDim(i));
      return dims;
    });
  }

  /**
   * Where the value lives.
   *
   * @throws IllegalStateException when the graph is closed
   */
  public DeviceRef device() {
    return graph.locked("Value.device", g -> {
      IntByReference kind = new IntByReference();
      IntByReference id = new IntByReference();
      Status.check(MaxLibrary.lib().max_value_device(peer, kind, id));
      return DeviceRef.of(kind.getValue(), id.getValue());
    });
  }

  /** The value's type as a {@link TensorType}. */
  public TensorType type() {
    return new TensorType(dtype(), shape(), device());
  }

  /** The library's text of the type: {@code tensor<[batch, 10], float32, cpu:0>}. */
  public String typeString() {
    return graph.locked("Value.typeString", g -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_value_type_string(peer, out));
      return Status.string(out.getValue());
    });
  }

  /** {@code this + other} (op "add", broadcasting). */
  public Value add(Value other) {
    return Ops.add(this, other);
  }

  /** {@code this - other} (op "sub"). */
  public Value sub(Value other) {
    return Ops.sub(this, other);
  }

  /** {@code this * other} (op "mul"). */
  public Value mul(Value other) {
    return Ops.mul(this, other);
  }

  /** {@code this / other} (op "div"). */
  public Value div(Value other) {
    return Ops.div(this, other);
  }

  /** {@code this @ other} (op "matmul"). */
  public Value matmul(Value other) {
    return Ops.matmul(this, other);
  }

  /** {@code max(this, 0)} (op "relu"). */
  public Value relu() {
    return Ops.relu(this);
  }

  @Override
  public String toString() {
    return graph.isClosed() ? "Value(<closed graph>)" : "Value(" + typeString() + ")";
  }
}

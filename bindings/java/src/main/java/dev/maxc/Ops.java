package dev.maxc;

import java.util.Arrays;
import java.util.List;

/**
 * Typed helpers over {@link Graph#addOp} (MAX's max.graph.ops). Each adds one op to the graph
 * of its first input and returns its result; the library checks dtypes, shapes and
 * attributes, and a failure is a {@link MaxException} naming the op (INVALID_ARGUMENT) with the
 * graph unchanged. Thread-safety is the graph's (every call locks it).
 */
public final class Ops {
  private Ops() {}

  /**
   * Adds op {@code name} (newest version) on {@code inputs} with {@code attrs} (null: none) and
   * gives all its outputs. {@code inputs} must not be empty (use {@link Graph#addOp} for ops
   * without inputs).
   */
  public static List<Value> op(String name, Attrs attrs, Value... inputs) {
    if (inputs.length == 0 || inputs[0] == null) {
      throw Status.invalid(name + ": Ops.op needs a first input to find the graph; use Graph.addOp");
    }
    return inputs[0].graph().addOp(name, Arrays.asList(inputs), attrs);
  }

  /** As {@link #op}, for an op with exactly one output. */
  public static Value op1(String name, Attrs attrs, Value... inputs) {
    List<Value> out = op(name, attrs, inputs);
    if (out.size() != 1) throw new MaxException(StatusCode.INTERNAL, name + " gave " + out.size() + " outputs, expected 1");
    return out.get(0);
  }

  /** Elementwise {@code a + b} with broadcasting. */
  public static Value add(Value a, Value b) {
    return op1("add", null, a, b);
  }

  /** Elementwise {@code a - b} with broadcasting. */
  public static Value sub(Value a, Value b) {
    return op1("sub", null, a, b);
  }

  /** Elementwise {@code a * b} with broadcasting. */
  public static Value mul(Value a, Value b) {
    return op1("mul", null, a, b);
  }

  /** Elementwise {@code a / b} with broadcasting. */
  public static Value div(Value a, Value b) {
    return op1("div", null, a, b);
  }

  /** Matrix product over the last two dims, batch dims broadcast. */
  public static Value matmul(Value lhs, Value rhs) {
    return op1("matmul", null, lhs, rhs);
  }

  /** {@code max(x, 0)}. */
  public static Value relu(Value x) {
    return op1("relu", null, x);
  }

  /** Softmax over the last axis. */
  public static Value softmax(Value x) {
    return op1("softmax", null, x);
  }

  /** Softmax over {@code axis} (negative counts from the end). */
  public static Value softmax(Value x, long axis) {
    try (Attrs a = new Attrs().setInt("axis", axis)) {
      return op1("softmax", a, x);
    }
  }

  /** {@code x} converted to {@code dtype}. */
  public static Value cast(Value x, DType dtype) {
    try (Attrs a = new Attrs().setDType("dtype", dtype)) {
      return op1("cast", a, x);
    }
  }

  /** {@code x} with a new shape of the same element count; dims as in {@link TensorType#of}. */
  public static Value reshape(Value x, Object... shape) {
    try (Attrs a = new Attrs().setDims("shape", shape)) {
      return op1("reshape", a, x);
    }
  }

  /** {@code x} with dims {@code axis1} and {@code axis2} swapped. */
  public static Value transpose(Value x, long axis1, long axis2) {
    try (Attrs a = new Attrs().setInt("axis_1", axis1).setInt("axis_2", axis2)) {
      return op1("transpose", a, x);
    }
  }

  /** A constant in {@code graph} holding a copy of {@code tensor}. */
  public static Value constant(Graph graph, Tensor tensor) {
    return graph.addConstant(tensor);
  }
}

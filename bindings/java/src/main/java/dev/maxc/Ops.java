package dev.maxc;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Graph ops (MAX's max.graph.ops): {@link #call}, which reaches every op the library registers
 * (see {@link OpInfo#all()}) with attributes converted by the registry's kinds, and typed helpers
 * for the common ones. Each adds one op to the graph of its inputs and returns its result; the
 * library checks dtypes, shapes and attributes, and a failure is a {@link MaxException} naming the
 * op (INVALID_ARGUMENT) with the graph unchanged. Thread-safety is the graph's (every call locks
 * it).
 */
public final class Ops {
  private Ops() {}

  // ---- any registered op ----

  /**
   * Adds registry op {@code name} (newest version) to {@code graph} on {@code inputs} (flat: a
   * variadic input's values in order) with {@code attrs} by name, each converted by the kind the
   * registry declares: INT from an Integer or Long; FLOAT from a Number; BOOL from a Boolean;
   * STRING from a String or a {@link QuantEncoding}; DTYPE from a {@link DType}; INTS and FLOATS
   * from arrays, Lists or one Number; DIMS from a List or array of dims (Integers, Longs, Strings,
   * {@link Dim}s) or one dim; GRAPH from a {@link Graph} (added as a subgraph) or an index; DEVICE
   * from a {@link DeviceRef} or {@link Device}. A null value leaves the attribute at its default.
   * Gives all of the op's outputs.
   *
   * @throws MaxException NOT_FOUND for an unknown op; INVALID_ARGUMENT naming the op and the
   *     attribute for an unknown attribute or a value of the wrong kind, and for the library's
   *     checks
   */
  public static List<Value> call(Graph graph, String name, List<Value> inputs, Map<String, ?> attrs) {
    OpInfo info = OpInfo.cached(Status.nonNull(name, "Ops.call: name"), 0);
    Status.nonNull(graph, "Ops.call(" + name + "): graph");
    if (attrs == null || attrs.isEmpty()) return graph.addOp(name, inputs, null);
    try (Attrs a = new Attrs()) {
      AttrValues.fill(a, info, attrs, graph);
      return graph.addOp(name, inputs, a);
    }
  }

  /** As {@link #call(Graph, String, List, Map)}, on the graph of the first input. */
  public static List<Value> call(String name, Map<String, ?> attrs, Value... inputs) {
    OpInfo.cached(Status.nonNull(name, "Ops.call: name"), 0); // an unknown op is NOT_FOUND whatever the inputs
    return call(graphOf(name, inputs), name, Arrays.asList(inputs), attrs);
  }

  /**
   * As {@link #call(String, Map, Value...)}, for an op with exactly one output; one that gives
   * more is refused (INVALID_ARGUMENT) before it is added.
   */
  public static Value call1(String name, Map<String, ?> attrs, Value... inputs) {
    OpInfo info = OpInfo.cached(Status.nonNull(name, "Ops.call1: name"), 0);
    Graph graph = graphOf(name, inputs);
    if (attrs == null || attrs.isEmpty()) return graph.addOp1(name, Arrays.asList(inputs), null);
    try (Attrs a = new Attrs()) {
      AttrValues.fill(a, info, attrs, graph);
      return graph.addOp1(name, Arrays.asList(inputs), a);
    }
  }

  /**
   * Adds op {@code name} (newest version) on {@code inputs} with {@code attrs} (null: none) and
   * gives all its outputs. {@code inputs} must not be empty (use {@link Graph#addOp} or
   * {@link #call(Graph, String, List, Map)} for ops without inputs).
   */
  public static List<Value> op(String name, Attrs attrs, Value... inputs) {
    return graphOf(name, inputs).addOp(name, Arrays.asList(inputs), attrs);
  }

  /**
   * As {@link #op}, for an op with exactly one output; one that gives more is refused
   * (INVALID_ARGUMENT) before it is added.
   */
  public static Value op1(String name, Attrs attrs, Value... inputs) {
    return graphOf(name, inputs).addOp1(name, Arrays.asList(inputs), attrs);
  }

  private static Graph graphOf(String name, Value[] inputs) {
    if (inputs.length == 0 || inputs[0] == null) {
      throw Status.invalid(name + ": needs a first input to find the graph; pass the graph to Ops.call");
    }
    return inputs[0].graph();
  }

  private static Value unary(String name, Value x) {
    return op1(name, null, x);
  }

  private static Value withAxis(String name, Value x, long axis) {
    return call1(name, Map.of("axis", axis), x);
  }

  // ---- elementwise binary, with broadcasting ----

  /** Elementwise {@code a + b}. */
  public static Value add(Value a, Value b) {
    return op1("add", null, a, b);
  }

  /** Elementwise {@code a - b}. */
  public static Value sub(Value a, Value b) {
    return op1("sub", null, a, b);
  }

  /** Elementwise {@code a * b}. */
  public static Value mul(Value a, Value b) {
    return op1("mul", null, a, b);
  }

  /** Elementwise {@code a / b} (true division, also on integers). */
  public static Value div(Value a, Value b) {
    return op1("div", null, a, b);
  }

  /** Elementwise {@code a mod b}. */
  public static Value mod(Value a, Value b) {
    return op1("mod", null, a, b);
  }

  /** Elementwise {@code a ** b}. */
  public static Value pow(Value a, Value b) {
    return op1("pow", null, a, b);
  }

  /** Elementwise maximum (op "max" with a second input). */
  public static Value maximum(Value a, Value b) {
    return op1("max", null, a, b);
  }

  /** Elementwise minimum (op "min" with a second input). */
  public static Value minimum(Value a, Value b) {
    return op1("min", null, a, b);
  }

  /** Elementwise {@code a == b}, bool. */
  public static Value equal(Value a, Value b) {
    return op1("equal", null, a, b);
  }

  /** Elementwise {@code a != b}, bool. */
  public static Value notEqual(Value a, Value b) {
    return op1("not_equal", null, a, b);
  }

  /** Elementwise {@code a > b}, bool. */
  public static Value greater(Value a, Value b) {
    return op1("greater", null, a, b);
  }

  /** Elementwise {@code a >= b}, bool. */
  public static Value greaterEqual(Value a, Value b) {
    return op1("greater_equal", null, a, b);
  }

  /** Elementwise {@code a < b}, bool. */
  public static Value less(Value a, Value b) {
    return op1("less", null, a, b);
  }

  /** Elementwise {@code a <= b}, bool. */
  public static Value lessEqual(Value a, Value b) {
    return op1("less_equal", null, a, b);
  }

  /** Elementwise logical and of bools. */
  public static Value logicalAnd(Value a, Value b) {
    return op1("logical_and", null, a, b);
  }

  /** Elementwise logical or of bools. */
  public static Value logicalOr(Value a, Value b) {
    return op1("logical_or", null, a, b);
  }

  /** Elementwise logical xor of bools. */
  public static Value logicalXor(Value a, Value b) {
    return op1("logical_xor", null, a, b);
  }

  /** {@code condition ? x : y}, elementwise with broadcasting. */
  public static Value where(Value condition, Value x, Value y) {
    return op1("where", null, condition, x, y);
  }

  // ---- elementwise unary ----

  /** {@code |x|}. */
  public static Value abs(Value x) {
    return unary("abs", x);
  }

  /** {@code -x}. */
  public static Value negate(Value x) {
    return unary("negate", x);
  }

  /** {@code e^x}. */
  public static Value exp(Value x) {
    return unary("exp", x);
  }

  /** Natural logarithm. */
  public static Value log(Value x) {
    return unary("log", x);
  }

  /** {@code log(1 + x)}. */
  public static Value log1p(Value x) {
    return unary("log1p", x);
  }

  /** Square root. */
  public static Value sqrt(Value x) {
    return unary("sqrt", x);
  }

  /** {@code 1 / sqrt(x)}. */
  public static Value rsqrt(Value x) {
    return unary("rsqrt", x);
  }

  /** {@code max(x, 0)}. */
  public static Value relu(Value x) {
    return unary("relu", x);
  }

  /** {@code 1 / (1 + e^-x)}. */
  public static Value sigmoid(Value x) {
    return unary("sigmoid", x);
  }

  /** {@code x * sigmoid(x)}. */
  public static Value silu(Value x) {
    return unary("silu", x);
  }

  /** GELU (exact, with erf). */
  public static Value gelu(Value x) {
    return unary("gelu", x);
  }

  /** Hyperbolic tangent. */
  public static Value tanh(Value x) {
    return unary("tanh", x);
  }

  /** The error function. */
  public static Value erf(Value x) {
    return unary("erf", x);
  }

  /** Sine. */
  public static Value sin(Value x) {
    return unary("sin", x);
  }

  /** Cosine. */
  public static Value cos(Value x) {
    return unary("cos", x);
  }

  /** Rounded down. */
  public static Value floor(Value x) {
    return unary("floor", x);
  }

  /** Rounded to nearest, ties to even. */
  public static Value round(Value x) {
    return unary("round", x);
  }

  /** Rounded toward zero. */
  public static Value trunc(Value x) {
    return unary("trunc", x);
  }

  /** Logical not of bools. */
  public static Value logicalNot(Value x) {
    return unary("logical_not", x);
  }

  /** Whether each element is NaN, bool. */
  public static Value isNan(Value x) {
    return unary("is_nan", x);
  }

  /** Whether each element is infinite, bool. */
  public static Value isInf(Value x) {
    return unary("is_inf", x);
  }

  /** {@code x} clamped to [{@code min}, {@code max}]. */
  public static Value clamp(Value x, double min, double max) {
    return call1("clamp", Map.of("min", min, "max", max), x);
  }

  /** {@code x} converted to {@code dtype}. */
  public static Value cast(Value x, DType dtype) {
    return call1("cast", Map.of("dtype", dtype), x);
  }

  // ---- reductions (the reduced axis stays, with size 1) and normalizations ----

  /** Sum over {@code axis}. */
  public static Value sum(Value x, long axis) {
    return withAxis("sum", x, axis);
  }

  /** Mean over {@code axis}. */
  public static Value mean(Value x, long axis) {
    return withAxis("mean", x, axis);
  }

  /** Maximum over {@code axis}. */
  public static Value max(Value x, long axis) {
    return withAxis("max", x, axis);
  }

  /** Minimum over {@code axis}. */
  public static Value min(Value x, long axis) {
    return withAxis("min", x, axis);
  }

  /** Index of the maximum over {@code axis}, int64. */
  public static Value argmax(Value x, long axis) {
    return withAxis("argmax", x, axis);
  }

  /** Index of the minimum over {@code axis}, int64. */
  public static Value argmin(Value x, long axis) {
    return withAxis("argmin", x, axis);
  }

  /** Running sum over {@code axis} (same shape). */
  public static Value cumsum(Value x, long axis) {
    return withAxis("cumsum", x, axis);
  }

  /** The {@code k} largest values over {@code axis} and their indices: [values, indices]. */
  public static List<Value> topK(Value x, long k, long axis) {
    return call("top_k", Map.of("k", k, "axis", axis), x);
  }

  /** Softmax over the last axis. */
  public static Value softmax(Value x) {
    return unary("softmax", x);
  }

  /** Softmax over {@code axis} (negative counts from the end). */
  public static Value softmax(Value x, long axis) {
    return withAxis("softmax", x, axis);
  }

  /** Log-softmax over {@code axis}. */
  public static Value logsoftmax(Value x, long axis) {
    return withAxis("logsoftmax", x, axis);
  }

  /** Layer normalization over the last axis: {@code (x - mean) / sqrt(var + epsilon) * gamma + beta}. */
  public static Value layerNorm(Value x, Value gamma, Value beta, double epsilon) {
    return call1("layer_norm", Map.of("epsilon", epsilon), x, gamma, beta);
  }

  /** RMS normalization over the last axis: {@code x / sqrt(mean(x^2) + epsilon) * weight}. */
  public static Value rmsNorm(Value x, Value weight, double epsilon) {
    return call1("rms_norm", Map.of("epsilon", epsilon), x, weight);
  }

  // ---- linear algebra ----

  /** Matrix product over the last two dims, batch dims broadcast. */
  public static Value matmul(Value lhs, Value rhs) {
    return op1("matmul", null, lhs, rhs);
  }

  /** Outer product of two vectors. */
  public static Value outer(Value lhs, Value rhs) {
    return op1("outer", null, lhs, rhs);
  }

  /** A block-quantized weight (uint8 {@code [rows, row_bytes]}) as float32. */
  public static Value dequantize(Value quantized, QuantEncoding encoding) {
    return call1("dequantize", Map.of("encoding", encoding), quantized);
  }

  /** {@code lhs @ dequantize(rhs).T} for a block-quantized {@code rhs}, computed on the blocks. */
  public static Value qmatmul(Value lhs, Value rhs, QuantEncoding encoding) {
    return call1("qmatmul", Map.of("encoding", encoding), lhs, rhs);
  }

  // ---- shapes ----

  /** {@code x} with a new shape of the same element count; dims as in {@link TensorType#of}. */
  public static Value reshape(Value x, Object... shape) {
    return call1("reshape", Map.of("shape", shape), x);
  }

  /** {@code x} with dims {@code axis1} and {@code axis2} swapped. */
  public static Value transpose(Value x, long axis1, long axis2) {
    return call1("transpose", Map.of("axis_1", axis1, "axis_2", axis2), x);
  }

  /** {@code x} with its dims reordered: output dim i is input dim {@code dims[i]}. */
  public static Value permute(Value x, long... dims) {
    return call1("permute", Map.of("dims", dims), x);
  }

  /** {@code x} with every dim flattened into one. */
  public static Value flatten(Value x) {
    return unary("flatten", x);
  }

  /** {@code x} without its size-1 dim {@code axis}. */
  public static Value squeeze(Value x, long axis) {
    return withAxis("squeeze", x, axis);
  }

  /** {@code x} with a new size-1 dim at {@code axis}. */
  public static Value unsqueeze(Value x, long axis) {
    return withAxis("unsqueeze", x, axis);
  }

  /** {@code x} broadcast to {@code shape}; dims as in {@link TensorType#of}. */
  public static Value broadcastTo(Value x, Object... shape) {
    return call1("broadcast_to", Map.of("shape", shape), x);
  }

  /** {@code x} repeated {@code repeats[i]} times along each dim. */
  public static Value tile(Value x, Object... repeats) {
    return call1("tile", Map.of("repeats", repeats), x);
  }

  /** {@code values} joined along {@code axis}. */
  public static Value concat(long axis, Value... values) {
    return call1("concat", Map.of("axis", axis), values);
  }

  /** {@code values} stacked along a new dim {@code axis}. */
  public static Value stack(long axis, Value... values) {
    return call1("stack", Map.of("axis", axis), values);
  }

  /** {@code x} cut along {@code axis} into pieces of the given sizes. */
  public static List<Value> split(Value x, long axis, Object... sizes) {
    return call("split", Map.of("split_sizes", sizes, "axis", axis), x);
  }

  /** {@code x} cut along {@code axis} into {@code chunks} pieces. */
  public static List<Value> chunk(Value x, long chunks, long axis) {
    return call("chunk", Map.of("chunks", chunks, "axis", axis), x);
  }

  /** The slices of {@code x} along {@code axis} at {@code indices} (int32 or int64). */
  public static Value gather(Value x, Value indices, long axis) {
    return call1("gather", Map.of("axis", axis), x, indices);
  }

  /**
   * The row-major indices of {@code x}'s nonzero elements, int64 {@code [outDim, rank(x)]} (MAX's
   * {@code nonzero(x, out_dim)}). Only the data decides the count, so {@code outDim} names it: a
   * symbol (a String) no input binds is bound when the op runs, and the engine plans what follows
   * for it; a size, or a symbol an input binds, is checked then. Dims as in {@link TensorType#of}.
   */
  public static Value nonzero(Value x, Object outDim) {
    return call1("nonzero", Map.of("out_dim", outDim), x);
  }

  /**
   * {@code input} with the positions where the bool {@code mask} (broadcast to input's shape)
   * holds filled, in row-major order, by the elements of {@code updates} (input's dtype) taken in
   * order (MAX's {@code masked_scatter(input, mask, updates, out_dim)}); {@code outDim} names how
   * many positions that is. Too few updates is an execution error.
   */
  public static Value maskedScatter(Value input, Value mask, Value updates, Object outDim) {
    return call1("masked_scatter", Map.of("out_dim", outDim), input, mask, updates);
  }

  // ---- bitwise (libmax_c's extras beyond MAX's op set) ----

  /**
   * Elementwise bitwise and of integers or bools of one dtype, with broadcasting; never promoted,
   * since widening a signed operand would change the bits the other one meets.
   */
  public static Value bitwiseAnd(Value a, Value b) {
    return op1("bitwise_and", null, a, b);
  }

  /** Elementwise bitwise or, as {@link #bitwiseAnd}. */
  public static Value bitwiseOr(Value a, Value b) {
    return op1("bitwise_or", null, a, b);
  }

  /** Elementwise bitwise xor, as {@link #bitwiseAnd}. */
  public static Value bitwiseXor(Value a, Value b) {
    return op1("bitwise_xor", null, a, b);
  }

  /** Every bit of an integer {@code x} flipped (bool is refused: use {@link #logicalNot}). */
  public static Value bitwiseNot(Value x) {
    return unary("bitwise_not", x);
  }

  /**
   * Each element's bytes of {@code x} read as {@code dtype}, which must have the same width
   * (unlike {@link #cast}, no value is converted).
   */
  public static Value bitcast(Value x, DType dtype) {
    return call1("bitcast", Map.of("dtype", dtype), x);
  }

  /** A constant in {@code graph} holding a copy of {@code tensor}. */
  public static Value constant(Graph graph, Tensor tensor) {
    return graph.addConstant(tensor);
  }

  /**
   * A constant in {@code graph} holding a copy of {@code tensor}, placed on {@code device} (MAX's
   * {@code ops.constant(value, dtype, device)}; see {@link Graph#addConstant(Tensor, DeviceRef)}).
   */
  public static Value constant(Graph graph, Tensor tensor, DeviceRef device) {
    return graph.addConstant(tensor, device);
  }
}

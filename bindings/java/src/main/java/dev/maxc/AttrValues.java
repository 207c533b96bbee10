package dev.maxc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Converts Java values to op attributes by the kind the op registry declares, for
 * {@link Ops#call}. Stateless; thread-safety is the Attrs'.
 */
final class AttrValues {
  private AttrValues() {}

  /**
   * Fills {@code attrs} from {@code values} for op {@code op}.
   *
   * @throws MaxException INVALID_ARGUMENT naming the op and attribute for a name the op does not
   *     have (listing the ones it has) or a value that does not fit its kind
   */
  static void fill(Attrs attrs, OpInfo op, Map<String, ?> values, Graph graph) {
    for (Map.Entry<String, ?> e : values.entrySet()) {
      OpInfo.Attr spec = op.attr(e.getKey());
      if (spec == null) {
        List<String> names = new ArrayList<>();
        for (OpInfo.Attr a : op.attrs()) names.add(a.name());
        throw Status.invalid("op '" + op.name() + "' has no attribute '" + e.getKey() + "' (it has: "
            + (names.isEmpty() ? "none" : String.join(", ", names)) + ")");
      }
      if (e.getValue() == null) continue; // null leaves an optional attribute at its default
      try {
        set(attrs, spec, e.getValue(), graph);
      } catch (ClassCastException | IllegalArgumentException ex) {
        throw Status.invalid("op '" + op.name() + "': attribute '" + spec.name() + "' ("
            + spec.kind().name().toLowerCase(java.util.Locale.ROOT) + ") cannot take a "
            + e.getValue().getClass().getSimpleName() + ": " + e.getValue());
      }
    }
  }

  private static void set(Attrs attrs, OpInfo.Attr spec, Object v, Graph graph) {
    String n = spec.name();
    switch (spec.kind()) {
      case INT -> attrs.setInt(n, integral(v));
      case FLOAT -> attrs.setFloat(n, ((Number) v).doubleValue());
      case BOOL -> attrs.setBool(n, (Boolean) v);
      case STRING -> attrs.setString(n, v instanceof QuantEncoding q ? q.maxName() : (String) v);
      case DTYPE -> attrs.setDType(n, (DType) v);
      case INTS -> attrs.setInts(n, longs(v));
      case FLOATS -> attrs.setFloats(n, doubles(v));
      case DIMS -> attrs.setDims(n, dims(v));
      case GRAPH -> attrs.setGraph(n, v instanceof Graph g ? graph.addSubgraph(g) : integral(v));
      case DEVICE -> attrs.setDevice(n, v instanceof Device d ? d.ref() : (DeviceRef) v);
      default -> throw new IllegalArgumentException("unknown kind");
    }
  }

  private static long integral(Object v) {
    if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    throw new IllegalArgumentException("not an integer");
  }

  private static long[] longs(Object v) {
    if (v instanceof long[] a) return a;
    if (v instanceof int[] a) return java.util.Arrays.stream(a).asLongStream().toArray();
    if (v instanceof List<?> l) return l.stream().mapToLong(AttrValues::integral).toArray();
    return new long[] {integral(v)};
  }

  private static double[] doubles(Object v) {
    if (v instanceof double[] a) return a;
    if (v instanceof float[] a) {
      double[] d = new double[a.length];
      for (int i = 0; i < a.length; i++) d[i] = a[i];
      return d;
    }
    if (v instanceof List<?> l) return l.stream().mapToDouble(x -> ((Number) x).doubleValue()).toArray();
    return new double[] {((Number) v).doubleValue()};
  }

  private static Object[] dims(Object v) {
    if (v instanceof Object[] a) return a;
    if (v instanceof List<?> l) return l.toArray();
    if (v instanceof long[] a) return java.util.Arrays.stream(a).boxed().toArray();
    if (v instanceof int[] a) return java.util.Arrays.stream(a).boxed().toArray();
    return new Object[] {v};
  }
}

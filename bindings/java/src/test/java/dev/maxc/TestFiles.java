package dev.maxc;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Writers of the file formats the tests feed the library, written from their specs so the tests
 * need no Python: safetensors (an 8-byte little-endian header length, a JSON header, the raw
 * bytes) and the protobuf wire format of ONNX models.
 */
final class TestFiles {
  private TestFiles() {}

  // ---- safetensors ----

  /** One safetensors entry; dtype as the format spells it ("F32", "I64"). */
  record StTensor(String name, String dtype, long[] shape, byte[] data) {}

  /** Writes the entries in order, the header padded with spaces to keep the data 8-byte aligned. */
  static void writeSafetensors(Path path, StTensor... entries) throws IOException {
    StringBuilder header = new StringBuilder("{");
    long offset = 0;
    for (StTensor e : entries) {
      if (header.length() > 1) header.append(',');
      header.append('"').append(e.name()).append("\":{\"dtype\":\"").append(e.dtype()).append("\",\"shape\":")
          .append(Arrays.toString(e.shape()).replace(" ", "")).append(",\"data_offsets\":[").append(offset).append(',')
          .append(offset + e.data().length).append("]}");
      offset += e.data().length;
    }
    header.append('}');
    while (header.length() % 8 != 0) header.append(' ');
    byte[] json = header.toString().getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(le(8).putLong(json.length).array());
    out.write(json);
    for (StTensor e : entries) out.write(e.data());
    Files.write(path, out.toByteArray());
  }

  static ByteBuffer le(int bytes) {
    return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }

  static byte[] f32(float... v) {
    ByteBuffer b = le(4 * v.length);
    for (float x : v) b.putFloat(x);
    return b.array();
  }

  static byte[] i64(long... v) {
    ByteBuffer b = le(8 * v.length);
    for (long x : v) b.putLong(x);
    return b.array();
  }

  // ---- protobuf wire format ----

  /** One protobuf message; each method appends a field (tag = field << 3 | wire type). */
  static final class Pb {
    private final ByteArrayOutputStream b = new ByteArrayOutputStream();

    private void varint(long v) {
      while ((v & ~0x7FL) != 0) {
        b.write((int) ((v & 0x7F) | 0x80));
        v >>>= 7;
      }
      b.write((int) v);
    }

    Pb integer(int field, long v) {
      varint((long) field << 3);
      varint(v);
      return this;
    }

    Pb bytes(int field, byte[] v) {
      varint(((long) field << 3) | 2);
      varint(v.length);
      b.write(v, 0, v.length);
      return this;
    }

    Pb str(int field, String v) {
      return bytes(field, v.getBytes(StandardCharsets.UTF_8));
    }

    Pb msg(int field, Pb v) {
      return bytes(field, v.toBytes());
    }

    byte[] toBytes() {
      return b.toByteArray();
    }
  }

  // ---- ONNX messages (field numbers from onnx.proto) ----

  static final int ONNX_FLOAT = 1; // TensorProto.DataType.FLOAT

  /**
   * ValueInfoProto{name: 1, type: 2 = TypeProto{tensor_type: 1 = Tensor{elem_type: 1, shape: 2 =
   * TensorShapeProto{dim: 1 = Dimension{dim_value: 1, dim_param: 2}}}}}; a dim is a Long/Integer
   * or a String symbol.
   */
  static Pb valueInfo(String name, int elemType, Object... dims) {
    Pb shape = new Pb();
    for (Object d : dims) {
      shape.msg(1, d instanceof String s ? new Pb().str(2, s) : new Pb().integer(1, ((Number) d).longValue()));
    }
    Pb tensorType = new Pb().integer(1, elemType).msg(2, shape);
    return new Pb().str(1, name).msg(2, new Pb().msg(1, tensorType));
  }

  /** TensorProto{dims: 1, data_type: 2, float_data: 4 (packed) or raw_data: 9, name: 8}. */
  static Pb floatTensor(String name, long[] dims, float[] values, boolean raw) {
    Pb t = new Pb();
    for (long d : dims) t.integer(1, d);
    t.integer(2, ONNX_FLOAT);
    t.bytes(raw ? 9 : 4, f32(values)); // packed floats are the same little-endian bytes
    return t.str(8, name);
  }

  /** NodeProto{input: 1, output: 2, name: 3, op_type: 4}. */
  static Pb node(String opType, String name, String[] inputs, String[] outputs) {
    Pb n = new Pb();
    for (String i : inputs) n.str(1, i);
    for (String o : outputs) n.str(2, o);
    return n.str(3, name).str(4, opType);
  }

  /**
   * ModelProto{ir_version: 1, producer_name: 2, graph: 7, opset_import: 8 =
   * OperatorSetIdProto{domain: 1, version: 2}} around GraphProto{node: 1, name: 2, initializer: 5,
   * input: 11, output: 12}.
   */
  static byte[] model(long opset, Pb[] nodes, Pb[] initializers, Pb[] inputs, Pb[] outputs) {
    Pb g = new Pb().str(2, "tiny");
    for (Pb n : nodes) g.msg(1, n);
    for (Pb i : initializers) g.msg(5, i);
    for (Pb i : inputs) g.msg(11, i);
    for (Pb o : outputs) g.msg(12, o);
    return new Pb().integer(1, 8).str(2, "maxc-java-test").msg(7, g)
        .msg(8, new Pb().str(1, "").integer(2, opset)).toBytes();
  }
}

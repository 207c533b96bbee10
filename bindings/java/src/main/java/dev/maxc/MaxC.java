package dev.maxc;

import com.sun.jna.Callback;
import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The raw C ABI of libmax_c ({@code include/max_c.h}, ABI 1.7) as a JNA interface mapping:
 * only the functions this binding wraps. Prefer the idiomatic classes ({@link Tensor},
 * {@link Graph}, {@link Model}, ...); use this only for what they do not cover, through
 * {@link MaxLibrary#raw()}, which loads and ABI-checks the library first.
 *
 * <p>Type mapping, which follows the header's rules (no struct by value, no varargs, no
 * {@code bool} or {@code long}): handles are {@link Pointer} (opaque, owned by whoever the
 * header says); {@code int32_t} codes, dtypes and kinds are {@code int}; {@code int64_t} and
 * {@code uint64_t} are {@code long}; {@code size_t} is {@link SizeT} (its out-parameters
 * {@link SizeTByReference}), see {@link SizeT} for why; {@code const char*} arguments are
 * {@link String} (encoded as UTF-8 by the library options); {@code const char* const*} is
 * {@code String[]} and {@code T* const*} is {@code Pointer[]}. Every {@code max_status_t*}
 * result must be passed to {@code max_status_release} (the binding does this in
 * {@link Status#check}).
 *
 * <p>Thread-safety is the header's, per function.
 */
public interface MaxC extends Library {
  /** {@code MAX_ABI_VERSION_MAJOR} of the header this binding was written against. */
  int ABI_VERSION_MAJOR = 1;
  /** {@code MAX_ABI_VERSION_MINOR} of the header this binding was written against. */
  int ABI_VERSION_MINOR = 8;
  /** {@code MAX_ABI_VERSION}: (major &lt;&lt; 16) | minor. */
  int ABI_VERSION = (ABI_VERSION_MAJOR << 16) | ABI_VERSION_MINOR;
  /**
   * The oldest library ABI this binding runs against (1.4, whose device graphs it binds), packed
   * like {@link #ABI_VERSION}; the library is checked against it when loaded. The ABI 1.5
   * additions ({@code max_graph_add_constant_on}, {@code file_device}) are used only when asked
   * for and give UNIMPLEMENTED with a 1.4 library.
   */
  int MIN_ABI_VERSION = (1 << 16) | 4;

  /** {@code max_dim_t}: a static {@code size} when {@code expr} is NULL, else a symbolic expression. */
  @Structure.FieldOrder({"size", "expr"})
  class MaxDim extends Structure {
    public long size;
    public Pointer expr;
  }

  /** {@code max_context_options_t} (fill it with {@code max_context_options_init}). */
  @Structure.FieldOrder({"struct_size", "devices", "num_devices", "num_threads", "log_level"})
  class ContextOptions extends Structure {
    public SizeT struct_size = new SizeT();
    public Pointer devices;
    public SizeT num_devices = new SizeT();
    public int num_threads;
    public int log_level;
  }

  /** {@code max_run_options_t} (ABI 1.8; fill it with {@code max_run_options_init}). */
  @Structure.FieldOrder({"struct_size", "timeout_us", "cancel_flag"})
  class RunOptions extends Structure {
    public SizeT struct_size = new SizeT();
    public long timeout_us;
    public Pointer cancel_flag;
  }

  /**
   * {@code max_compile_options_t} (fill it with {@code max_compile_options_init}). A library older
   * than a field reads the fields it knows and refuses a nonzero value in the others: leave the
   * newer fields zero (their defaults) to stay compatible with it.
   */
  @Structure.FieldOrder({"struct_size", "enable_fusion", "enable_constant_folding", "fold_limit_bytes",
      "plan_cache_capacity", "copy_inputs_to_device", "file_device"})
  class CompileOptions extends Structure {
    public SizeT struct_size = new SizeT();
    public int enable_fusion;
    public int enable_constant_folding;
    public long fold_limit_bytes;
    public long plan_cache_capacity;
    /** ABI 1.4: 1 copies an input on another device than the model's to it on each call. */
    public int copy_inputs_to_device;
    /** ABI 1.5: the device a model file wholly on the host is moved onto (NULL: keep its own). */
    public Pointer file_device;
  }

  /** {@code DLDevice}: a DLPack device type and id. */
  @Structure.FieldOrder({"device_type", "device_id"})
  class DLDevice extends Structure {
    public int device_type;
    public int device_id;
  }

  /**
   * {@code max_release_fn}: called once, on any thread, when the library lets go of borrowed
   * memory. An instance passed to C must stay strongly reachable until then (JNA frees the
   * native trampoline of a collected callback).
   */
  interface ReleaseFn extends Callback {
    void invoke(Pointer userData);
  }

  // ---- versions, status, logging ----
  int max_abi_version();
  String max_version_string();
  Pointer max_check_abi(int headerVersion);

  int max_status_code(Pointer status);
  Pointer max_status_message(Pointer status);
  String max_status_code_name(int code);
  void max_status_release(Pointer status);

  Pointer max_log_set_level(int level);
  int max_log_level();

  // ---- dtypes ----
  int max_dtype_is_valid(int dtype);
  int max_dtype_size_in_bits(int dtype);
  int max_dtype_size_in_bytes(int dtype);
  int max_dtype_is_float(int dtype);
  int max_dtype_is_integral(int dtype);
  int max_dtype_is_signed_integral(int dtype);
  String max_dtype_name(int dtype);
  Pointer max_dtype_from_name(String name, IntByReference outDtype);

  // ---- devices ----
  Pointer max_accelerator_count(IntByReference outCount);
  Pointer max_device_create(int kind, int id, PointerByReference outDevice);
  void max_device_retain(Pointer device);
  void max_device_release(Pointer device);
  Pointer max_device_kind(Pointer device, IntByReference outKind);
  Pointer max_device_id(Pointer device, IntByReference outId);
  Pointer max_device_label(Pointer device, PointerByReference outLabel);
  Pointer max_device_api(Pointer device, PointerByReference outApi);
  Pointer max_device_is_host(Pointer device, IntByReference outIsHost);
  Pointer max_device_synchronize(Pointer device);

  // ---- context ----
  Pointer max_context_options_init(ContextOptions options, SizeT structSize);
  Pointer max_context_create(ContextOptions options, PointerByReference outContext);
  void max_context_release(Pointer context);
  Pointer max_context_num_threads(Pointer context, IntByReference outNumThreads);
  Pointer max_context_num_devices(Pointer context, SizeTByReference outNumDevices);
  Pointer max_context_device(Pointer context, SizeT index, PointerByReference outDevice);

  // ---- tensors ----
  Pointer max_tensor_create(Pointer device, int dtype, long[] dims, int rank, PointerByReference outTensor);
  Pointer max_tensor_create_from_host(Pointer device, int dtype, long[] dims, int rank, Pointer data,
      SizeT numBytes, PointerByReference outTensor);
  Pointer max_tensor_create_borrowed(int dtype, long[] dims, int rank, long[] strides, Pointer data, int readOnly,
      ReleaseFn release, Pointer userData, PointerByReference outTensor);
  void max_tensor_retain(Pointer tensor);
  void max_tensor_release(Pointer tensor);
  Pointer max_tensor_dtype(Pointer tensor, IntByReference outDtype);
  Pointer max_tensor_rank(Pointer tensor, IntByReference outRank);
  Pointer max_tensor_dims(Pointer tensor, PointerByReference outDims);
  Pointer max_tensor_strides(Pointer tensor, PointerByReference outStrides);
  Pointer max_tensor_num_elements(Pointer tensor, LongByReference outNumElements);
  Pointer max_tensor_byte_size(Pointer tensor, SizeTByReference outBytes);
  Pointer max_tensor_device(Pointer tensor, PointerByReference outDevice);
  Pointer max_tensor_is_contiguous(Pointer tensor, IntByReference outIsContiguous);
  Pointer max_tensor_is_read_only(Pointer tensor, IntByReference outIsReadOnly);
  Pointer max_tensor_to_host(Pointer tensor, Pointer dst, SizeT numBytes);
  Pointer max_tensor_copy(Pointer tensor, Pointer device, PointerByReference outTensor);
  Pointer max_tensor_copy_from(Pointer dst, Pointer src);
  Pointer max_tensor_view(Pointer tensor, int dtype, long[] dims, int rank, PointerByReference outTensor);

  void max_tensor_list_release(Pointer list);
  Pointer max_tensor_list_size(Pointer list, SizeTByReference outSize);
  Pointer max_tensor_list_get(Pointer list, SizeT index, PointerByReference outTensor);

  void max_buffer_release(Pointer buffer);
  Pointer max_buffer_data(Pointer buffer, PointerByReference outData);
  Pointer max_buffer_size(Pointer buffer, SizeTByReference outSize);

  // ---- DLPack ----
  Pointer max_tensor_to_dlpack(Pointer tensor, PointerByReference outManaged);
  Pointer max_tensor_from_dlpack(Pointer managed, PointerByReference outTensor);
  Pointer max_tensor_to_dlpack_unversioned(Pointer tensor, PointerByReference outManaged);
  Pointer max_tensor_from_dlpack_unversioned(Pointer managed, PointerByReference outTensor);
  Pointer max_tensor_dlpack_device(Pointer tensor, DLDevice outDevice);

  // ---- graphs ----
  Pointer max_graph_create(String name, PointerByReference outGraph);
  void max_graph_release(Pointer graph);
  Pointer max_graph_name(Pointer graph, PointerByReference outName);
  Pointer max_graph_add_input(Pointer graph, String name, int dtype, MaxDim[] dims, int rank, int deviceKind,
      int deviceId, PointerByReference outValue);
  Pointer max_graph_add_constant(Pointer graph, Pointer tensor, PointerByReference outValue);
  /** ABI 1.5 (JNA binds it on first call: a 1.4 library fails that call, not the load). */
  Pointer max_graph_add_constant_on(Pointer graph, Pointer tensor, int deviceKind, int deviceId,
      PointerByReference outValue);
  Pointer max_graph_add_weight(Pointer graph, String name, int dtype, MaxDim[] dims, int rank, int deviceKind,
      int deviceId, PointerByReference outValue);
  Pointer max_graph_add_op(Pointer graph, String op, int version, Pointer[] inputs, SizeT numInputs,
      Pointer attrs, Pointer outputs, SizeT capacity, SizeTByReference outNumOutputs);
  Pointer max_graph_set_outputs(Pointer graph, Pointer[] values, String[] names, SizeT numOutputs);
  Pointer max_graph_add_subgraph(Pointer graph, Pointer subgraph, LongByReference outIndex);
  Pointer max_graph_num_inputs(Pointer graph, SizeTByReference outCount);
  Pointer max_graph_input(Pointer graph, SizeT index, PointerByReference outValue, PointerByReference outName);
  Pointer max_graph_num_outputs(Pointer graph, SizeTByReference outCount);
  Pointer max_graph_output(Pointer graph, SizeT index, PointerByReference outValue, PointerByReference outName);
  Pointer max_graph_num_ops(Pointer graph, SizeTByReference outCount);
  Pointer max_graph_verify(Pointer graph);

  Pointer max_value_dtype(Pointer value, IntByReference outDtype);
  Pointer max_value_rank(Pointer value, IntByReference outRank);
  Pointer max_value_dim(Pointer value, int index, LongByReference outSize, PointerByReference outExpr);
  Pointer max_value_device(Pointer value, IntByReference outKind, IntByReference outId);
  Pointer max_value_type_string(Pointer value, PointerByReference outText);

  Pointer max_attrs_create(PointerByReference outAttrs);
  void max_attrs_release(Pointer attrs);
  Pointer max_attrs_set_int(Pointer attrs, String name, long value);
  Pointer max_attrs_set_float(Pointer attrs, String name, double value);
  Pointer max_attrs_set_bool(Pointer attrs, String name, int value);
  Pointer max_attrs_set_string(Pointer attrs, String name, String value);
  Pointer max_attrs_set_dtype(Pointer attrs, String name, int value);
  Pointer max_attrs_set_ints(Pointer attrs, String name, long[] values, SizeT count);
  Pointer max_attrs_set_floats(Pointer attrs, String name, double[] values, SizeT count);
  Pointer max_attrs_set_dims(Pointer attrs, String name, MaxDim[] dims, SizeT count);
  Pointer max_attrs_set_graph(Pointer attrs, String name, long subgraphIndex);
  Pointer max_attrs_set_device(Pointer attrs, String name, int kind, int id);

  Pointer max_op_count(SizeTByReference outCount);
  Pointer max_op_at(SizeT index, PointerByReference outName, IntByReference outVersion);
  Pointer max_op_num_inputs(String name, int version, SizeTByReference outCount);
  Pointer max_op_input(String name, int version, SizeT index, PointerByReference outInputName,
      IntByReference outArity);
  Pointer max_op_num_attrs(String name, int version, SizeTByReference outCount);
  Pointer max_op_attr(String name, int version, SizeT index, PointerByReference outAttrName, IntByReference outKind,
      IntByReference outPresence);

  Pointer max_graph_serialize(Pointer graph, PointerByReference outBuffer);
  Pointer max_graph_deserialize(byte[] data, SizeT size, PointerByReference outGraph);
  Pointer max_graph_save(Pointer graph, String path);
  Pointer max_graph_load(String path, PointerByReference outGraph);
  Pointer max_graph_to_text(Pointer graph, PointerByReference outText);
  Pointer max_graph_to_dot(Pointer graph, PointerByReference outDot);

  // ---- engine (ABI 1.2) ----
  Pointer max_compile_options_init(CompileOptions options, SizeT structSize);
  Pointer max_context_compile(Pointer context, Pointer graph, CompileOptions options, PointerByReference outCompiled);
  Pointer max_context_compile_file(Pointer context, String path, CompileOptions options,
      PointerByReference outCompiled);
  void max_compiled_model_release(Pointer compiled);
  Pointer max_compiled_model_num_inputs(Pointer compiled, SizeTByReference outCount);
  Pointer max_compiled_model_input(Pointer compiled, SizeT index, PointerByReference outSpec);
  Pointer max_compiled_model_num_outputs(Pointer compiled, SizeTByReference outCount);
  Pointer max_compiled_model_output(Pointer compiled, SizeT index, PointerByReference outSpec);
  Pointer max_compiled_model_num_weights(Pointer compiled, SizeTByReference outCount);
  Pointer max_compiled_model_weight(Pointer compiled, SizeT index, PointerByReference outSpec);

  void max_tensor_spec_release(Pointer spec);
  Pointer max_tensor_spec_name(Pointer spec, PointerByReference outName);
  Pointer max_tensor_spec_dtype(Pointer spec, IntByReference outDtype);
  Pointer max_tensor_spec_rank(Pointer spec, SizeTByReference outRank);
  Pointer max_tensor_spec_dim(Pointer spec, SizeT axis, LongByReference outDim, PointerByReference outName);
  Pointer max_tensor_spec_device(Pointer spec, PointerByReference outDevice);

  Pointer max_model_create(Pointer compiled, String[] weightNames, Pointer[] weights, SizeT numWeights,
      PointerByReference outModel);
  void max_model_release(Pointer model);
  Pointer max_model_compiled_model(Pointer model, PointerByReference outCompiled);
  Pointer max_model_execute(Pointer model, Pointer[] inputs, SizeT numInputs, PointerByReference outOutputs);
  Pointer max_model_execute_named(Pointer model, String[] names, Pointer[] inputs, SizeT numInputs,
      PointerByReference outOutputs);
  Pointer max_model_reload(Pointer model, String[] weightNames, Pointer[] weights, SizeT numWeights);
  // run options (ABI 1.8)
  Pointer max_run_options_init(RunOptions options, SizeT structSize);
  Pointer max_model_execute_with_options(Pointer model, Pointer[] inputs, SizeT numInputs, RunOptions options,
      PointerByReference outOutputs);

  // ---- weights and quantization (ABI 1.3) ----
  String max_quant_encoding_name(int encoding);
  Pointer max_quant_encoding_block(int encoding, IntByReference outElementsPerBlock, IntByReference outBlockBytes);
  Pointer max_weights_create(PointerByReference outWeights);
  void max_weights_release(Pointer weights);
  Pointer max_weights_add_file(Pointer weights, String path);
  Pointer max_weights_add_tensor(Pointer weights, String name, Pointer tensor, int encoding);
  Pointer max_weights_count(Pointer weights, SizeTByReference outCount);
  Pointer max_weights_name(Pointer weights, SizeT index, PointerByReference outName);
  Pointer max_weights_info(Pointer weights, String name, IntByReference outDtype, IntByReference outRank,
      PointerByReference outDims, IntByReference outEncoding);
  Pointer max_weights_tensor(Pointer weights, String name, PointerByReference outTensor);
  Pointer max_weights_save_gguf(Pointer weights, String path, String name);
  Pointer max_tensor_quantize(Pointer tensor, int encoding, PointerByReference outTensor);
  Pointer max_model_create_from_weights(Pointer compiled, Pointer weights, PointerByReference outModel);
  Pointer max_model_reload_from_weights(Pointer model, Pointer weights);

  // ---- device graphs (ABI 1.4) ----
  // graph_keys is const uint64_t*: each Java long carries one key's 64 bits (read unsigned).
  Pointer max_model_capture(Pointer model, long[] graphKeys, SizeT numKeys, Pointer[] inputs, SizeT numInputs,
      PointerByReference outOutputs);
  Pointer max_model_replay(Pointer model, long[] graphKeys, SizeT numKeys, Pointer[] inputs, SizeT numInputs);
  Pointer max_model_debug_verify_replay(Pointer model, long[] graphKeys, SizeT numKeys, Pointer[] inputs,
      SizeT numInputs);
}

package dev.maxc;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An inference context (MAX's InferenceSession): the devices models run on and their thread
 * team. It compiles graphs into {@link CompiledModel}s; {@link #load} also binds weights.
 *
 * <p>The caller owns a context and closes it; compiled models and models keep it alive in C, so
 * closing it early is safe. Thread-safe.
 */
public final class Context extends NativeHandle {
  private Context(Pointer peer) {
    super("Context", peer, MaxLibrary.lib()::max_context_release);
  }

  /**
   * A context on the CPU with one thread per available core.
   *
   * @throws MaxException on failure
   */
  public static Context create() {
    return create(0);
  }

  /**
   * A context on the CPU with {@code numThreads} threads (0: one per available core).
   *
   * @throws MaxException INVALID_ARGUMENT for a negative count
   */
  public static Context create(int numThreads) {
    return create(numThreads, new Device[0]);
  }

  /**
   * A context on {@code devices} (none: the CPU alone) with {@code numThreads} threads (0: one
   * per core). The context takes its own references to the devices.
   *
   * @throws MaxException INVALID_ARGUMENT for a negative count; FAILED_PRECONDITION for a closed device
   */
  public static Context create(int numThreads, Device... devices) {
    MaxC lib = MaxLibrary.lib();
    MaxC.ContextOptions opts = new MaxC.ContextOptions();
    Status.check(lib.max_context_options_init(opts, new SizeT(opts.size())));
    opts.num_threads = numThreads;
    List<Device> held = new ArrayList<>();
    Memory list = null;
    try {
      if (devices.length > 0) {
        list = new Memory((long) Native.POINTER_SIZE * devices.length);
        for (int i = 0; i < devices.length; i++) {
          list.setPointer((long) Native.POINTER_SIZE * i, devices[i].acquire("Context.create"));
          held.add(devices[i]);
        }
        opts.devices = list;
        opts.num_devices = new SizeT(devices.length);
      }
      PointerByReference out = new PointerByReference();
      Status.check(lib.max_context_create(opts, out));
      return new Context(out.getValue());
    } finally {
      for (Device d : held) d.release();
      if (list != null) list.close();
    }
  }

  /**
   * The size of the thread team.
   *
   * @throws IllegalStateException when closed
   */
  public int numThreads() {
    return with("numThreads", p -> {
      IntByReference out = new IntByReference();
      Status.check(MaxLibrary.lib().max_context_num_threads(p, out));
      return out.getValue();
    });
  }

  /**
   * The context's devices; the caller owns (and should close) each.
   *
   * @throws IllegalStateException when closed
   */
  public List<Device> devices() {
    return with("devices", p -> {
      SizeTByReference n = new SizeTByReference();
      Status.check(MaxLibrary.lib().max_context_num_devices(p, n));
      List<Device> out = new ArrayList<>();
      for (long i = 0; i < n.getValue(); i++) {
        PointerByReference d = new PointerByReference();
        Status.check(MaxLibrary.lib().max_context_device(p, new SizeT(i), d));
        out.add(new Device(d.getValue()));
      }
      return out;
    });
  }

  /** Compiles {@code graph} with default options. See {@link #compile(Graph, CompileOptions)}. */
  public CompiledModel compile(Graph graph) {
    return compile(graph, null);
  }

  /**
   * Compiles {@code graph} (read, not kept: it may be changed or closed afterwards). The caller
   * owns the result. Thread-safe for distinct graphs; the graph is locked during the call.
   *
   * @throws MaxException INVALID_ARGUMENT for a graph that does not verify or has no outputs;
   *     UNIMPLEMENTED naming an op without a CPU kernel
   */
  public CompiledModel compile(Graph graph, CompileOptions options) {
    MaxC.CompileOptions native_ = options == null ? null : options.toNative();
    return with("compile", c -> graph.locked("compile", g -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_context_compile(c, g, native_, out));
      return new CompiledModel(out.getValue());
    }));
  }

  /** Compiles a model file with default options. See {@link #compileFile(Path, CompileOptions)}. */
  public CompiledModel compileFile(Path path) {
    return compileFile(path, null);
  }

  /**
   * Compiles a model file: a path ending in {@code .onnx} is imported as an ONNX model (opset 7
   * or newer), whose initializers become the compiled model's own weights; anything else is read
   * as a MAXG file (see {@link Graph#save}). With {@link CompileOptions#fileDevice(Device)} set,
   * the file is moved onto that device first. The caller owns the result.
   *
   * @throws MaxException NOT_FOUND naming a missing file; DATA_LOSS or INVALID_ARGUMENT, with the
   *     offset, for a corrupt one; UNIMPLEMENTED naming an ONNX node whose operator the importer
   *     does not know; FAILED_PRECONDITION for a file device when the file already places a value
   *     elsewhere; and as {@link #compile(Graph, CompileOptions)}
   */
  public CompiledModel compileFile(Path path, CompileOptions options) {
    MaxC.CompileOptions native_ = options == null ? null : options.toNative();
    Device device = options == null ? null : options.fileDevice();
    if (device == null) return compileNative(path, native_);
    MaxLibrary.requireAbiMinor(5, "CompileOptions.fileDevice (a model file placed on a device)");
    // The device is held (not closed under the call) while the library reads the pointer.
    return device.with("compileFile", d -> {
      native_.file_device = d;
      return compileNative(path, native_);
    });
  }

  private CompiledModel compileNative(Path path, MaxC.CompileOptions native_) {
    return with("compileFile", c -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_context_compile_file(c, path.toString(), native_, out));
      return new CompiledModel(out.getValue());
    });
  }

  /**
   * Compiles {@code graph} and binds {@code weights} by name (MAX's InferenceSession.load). The
   * intermediate compiled model is released (the model keeps it alive); the caller owns the model.
   *
   * @throws MaxException as {@link #compile(Graph, CompileOptions)} and
   *     {@link CompiledModel#createModel(Map)}
   */
  public Model load(Graph graph, Map<String, Tensor> weights) {
    try (CompiledModel compiled = compile(graph)) {
      return compiled.createModel(weights);
    }
  }

  /**
   * Compiles {@code graph} and binds each declared weight by name from {@code weights}. The
   * caller owns the model.
   *
   * @throws MaxException as {@link #compile(Graph, CompileOptions)} and
   *     {@link CompiledModel#createModel(Weights)}
   */
  public Model load(Graph graph, Weights weights) {
    try (CompiledModel compiled = compile(graph)) {
      return compiled.createModel(weights);
    }
  }

  /**
   * Compiles a model file that carries its weights (an ONNX model with initializers, or a MAXG
   * file of constants) and binds them. The caller owns the model.
   *
   * @throws MaxException as {@link #compileFile(Path, CompileOptions)}; NOT_FOUND naming a
   *     declared weight the file does not carry
   */
  public Model load(Path modelFile) {
    try (CompiledModel compiled = compileFile(modelFile)) {
      return compiled.createModel(Map.of());
    }
  }

  /**
   * MAX's {@code InferenceSession.load(path, device=...)}: {@link #load(Path)} with the model file
   * moved onto {@code device}, one of this context's devices (see
   * {@link CompileOptions#fileDevice(Device)}; ABI 1.5). An ONNX model carries no placement, so
   * this is how one runs on an accelerator. The caller owns the model.
   *
   * @throws MaxException as {@link #load(Path)}; FAILED_PRECONDITION when the file already places
   *     a value on another device; INVALID_ARGUMENT for a device not among the context's
   */
  public Model load(Path modelFile, Device device) {
    try (CompiledModel compiled = compileFile(modelFile, new CompileOptions().fileDevice(device))) {
      return compiled.createModel(Map.of());
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "Context(<closed>)" : "Context(numThreads=" + numThreads() + ")";
  }
}

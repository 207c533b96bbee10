package dev.maxc;

/**
 * Options of {@link Context#compile(Graph, CompileOptions)}. Unset fields keep the library's
 * defaults (fusion and constant folding on, a 1 MiB fold limit, 16 cached plans). A plain
 * mutable builder: not thread-safe, but it can be reused once built.
 */
public final class CompileOptions {
  private Boolean fusion;
  private Boolean constantFolding;
  private Long foldLimitBytes;
  private Long planCacheCapacity;
  private Device fileDevice;

  /** Pattern and elementwise fusion (results stay the same either way). Returns this. */
  public CompileOptions fusion(boolean on) {
    this.fusion = on;
    return this;
  }

  /** Folding of ops whose inputs are all constants. Returns this. */
  public CompileOptions constantFolding(boolean on) {
    this.constantFolding = on;
    return this;
  }

  /** The most bytes of results constant folding may produce. Returns this. */
  public CompileOptions foldLimitBytes(long bytes) {
    this.foldLimitBytes = bytes;
    return this;
  }

  /** Plans kept per compiled model for distinct input shapes (at least 1). Returns this. */
  public CompileOptions planCacheCapacity(long plans) {
    this.planCacheCapacity = plans;
    return this;
  }

  /**
   * ABI 1.5, for {@link Context#compileFile(java.nio.file.Path, CompileOptions)}: moves a model
   * file wholly on the host (an ONNX model, which carries no placement, or a MAXG file of a host
   * graph) onto {@code device}, one of the context's devices, before it compiles, so that it runs
   * there (MAX's {@code InferenceSession.load(path, device=...)}). {@code null}, the default,
   * keeps the file's own placement. {@link Context#compile(Graph, CompileOptions)} ignores it: a
   * graph names its own devices. The device is not owned: keep it open while compiling. Returns
   * this.
   *
   * <p>Compiling then throws FAILED_PRECONDITION when the file already places a value on another
   * device ("already placed on gpu:0"), and UNIMPLEMENTED with a library older than ABI 1.5.
   */
  public CompileOptions fileDevice(Device device) {
    this.fileDevice = device;
    return this;
  }

  /** The device set with {@link #fileDevice(Device)}, or null. */
  public Device fileDevice() {
    return fileDevice;
  }

  /**
   * The C struct: the library's defaults for this struct size, then the fields set here. The file
   * device is left NULL (the caller sets it while holding the device), so a 1.4 library, which
   * refuses a nonzero tail it does not know, accepts the struct.
   */
  MaxC.CompileOptions toNative() {
    MaxC.CompileOptions o = new MaxC.CompileOptions();
    Status.check(MaxLibrary.lib().max_compile_options_init(o, new SizeT(o.size())));
    if (fusion != null) o.enable_fusion = fusion ? 1 : 0;
    if (constantFolding != null) o.enable_constant_folding = constantFolding ? 1 : 0;
    if (foldLimitBytes != null) o.fold_limit_bytes = foldLimitBytes;
    if (planCacheCapacity != null) o.plan_cache_capacity = planCacheCapacity;
    return o;
  }
}

package dev.maxc;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A compiled model with its weights bound (MAX's Model): execute it by position or by name, swap
 * weights in place with {@link #reload}, and record a run to replay it ({@link #capture},
 * {@link #replay}: MAX's device graphs, ABI 1.4).
 *
 * <p>The caller owns it. Thread-safe: many threads may {@code execute} one model at once, each
 * call with its own working memory; a {@code reload} lets calls already running finish with the
 * old weights.
 */
public final class Model extends NativeHandle {
  // Metadata only; C keeps the compiled model alive on its own.
  private final List<TensorSpec> inputs;
  private final List<TensorSpec> outputs;

  Model(Pointer peer, CompiledModel compiled) {
    super("Model", peer, MaxLibrary.lib()::max_model_release);
    this.inputs = compiled.inputs();
    this.outputs = compiled.outputs();
  }

  /** The inputs in order (MAX's input_metadata). */
  public List<TensorSpec> inputMetadata() {
    return inputs;
  }

  /** The outputs in order (MAX's output_metadata). */
  public List<TensorSpec> outputMetadata() {
    return outputs;
  }

  /**
   * The compiled model (a new reference the caller owns).
   *
   * @throws IllegalStateException when closed
   */
  public CompiledModel compiledModel() {
    return with("compiledModel", p -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_model_compiled_model(p, out));
      return new CompiledModel(out.getValue());
    });
  }

  /** Runs the model on {@code inputs} by position. See {@link #execute(List)}. */
  public List<Tensor> execute(Tensor... inputs) {
    return execute(Arrays.asList(inputs));
  }

  /**
   * Runs the model on {@code inputs} by position (as many as the model has). Inputs are checked
   * before anything runs and only read. The caller owns the returned tensors (an unmodifiable
   * list). Thread-safe.
   *
   * @throws MaxException INVALID_ARGUMENT naming the input and the mismatch (count, dtype, rank, a
   *     static dim, a symbolic dim that disagrees across inputs, a non-CPU tensor); the model stays
   *     usable
   */
  public List<Tensor> execute(List<Tensor> inputs) {
    return with("execute", p -> {
      try (TensorArgs args = TensorArgs.of(inputs, "Model.execute")) {
        PointerByReference out = new PointerByReference();
        Status.check(MaxLibrary.lib().max_model_execute(p, args.cHandles(), args.count(), out));
        return TensorArgs.takeList(out.getValue());
      }
    });
  }

  /**
   * As {@link #execute(List)}, stopping at {@code options}' timeout (DEADLINE_EXCEEDED) or once
   * another thread calls its {@link RunOptions#cancel()} (CANCELLED), checked before every step
   * and every loop iteration; the message names the op, and the model stays usable (ABI 1.8).
   */
  public List<Tensor> execute(List<Tensor> inputs, RunOptions options) {
    if (options == null) {
      return execute(inputs);
    }
    return with("execute", p -> {
      try (TensorArgs args = TensorArgs.of(inputs, "Model.execute")) {
        PointerByReference out = new PointerByReference();
        MaxLibrary.requireAbiMinor(8, "Model.execute with RunOptions (max_model_execute_with_options)");
        MaxC.RunOptions o = options.toNative();
        Status.check(MaxLibrary.lib().max_model_execute_with_options(p, args.cHandles(), args.count(), o, out));
        java.lang.ref.Reference.reachabilityFence(options); // its flag stays allocated through the call
        return TensorArgs.takeList(out.getValue());
      }
    });
  }

  /**
   * Runs the model on inputs given by name, in any order. As {@link #execute(List)} otherwise.
   *
   * @throws MaxException NOT_FOUND for an unknown name, INVALID_ARGUMENT for a missing one or a
   *     mismatch
   */
  public List<Tensor> execute(Map<String, Tensor> inputs) {
    return with("execute", p -> {
      try (TensorArgs args = TensorArgs.named(inputs, "Model.execute")) {
        PointerByReference out = new PointerByReference();
        Status.check(MaxLibrary.lib().max_model_execute_named(p, args.cNames(), args.cHandles(), args.count(), out));
        return TensorArgs.takeList(out.getValue());
      }
    });
  }

  /**
   * Swaps the named weights in place without recompiling; the others stay. Nothing changes when
   * a check fails. The same in-place rule as {@link CompiledModel#createModel} applies.
   *
   * @throws MaxException NOT_FOUND / INVALID_ARGUMENT naming the weight, as for createModel
   */
  public void reload(Map<String, Tensor> weights) {
    with("reload", p -> {
      try (TensorArgs args = TensorArgs.named(weights, "Model.reload")) {
        Status.check(MaxLibrary.lib().max_model_reload(p, args.cNames(), args.cHandles(), args.count()));
        return null;
      }
    });
  }

  /**
   * Swaps in every declared weight that {@code weights} has, without recompiling; the others
   * stay. All or nothing: when a check fails nothing changes. Calls already running finish with
   * the old weights.
   *
   * @throws MaxException INVALID_ARGUMENT naming a weight whose dtype or shape differs from its
   *     declaration
   * @throws IllegalStateException when this or {@code weights} is closed
   */
  public void reload(Weights weights) {
    Status.nonNull(weights, "Model.reload: weights");
    with("reload", p -> weights.read("Model.reload", w -> {
      Status.check(MaxLibrary.lib().max_model_reload_from_weights(p, w));
      return null;
    }));
  }

  // ---- device graphs (ABI 1.4) ----
  //
  // A capture runs the model once, as execute does, and records the run under a key the caller
  // picks; a replay runs the recording again. On a GPU the recording is a CUDA graph (one launch
  // instead of the run's many); on the CPU the captured plan is rerun. Every address in it is
  // fixed, so the capture's outputs are every replay's outputs too.

  /**
   * Runs the model on {@code inputs} and records the run under {@code graphKey}. See
   * {@link #capture(long[], List)}; this is the form for a model on one device (every model today).
   */
  public List<Tensor> capture(long graphKey, Tensor... inputs) {
    return capture(new long[] {graphKey}, inputList(inputs, "Model.capture"));
  }

  /**
   * Runs the model on {@code inputs} (by position, checked as {@link #execute(List)} checks them)
   * and records the run under {@code graphKeys}, one key per device of the model (one today),
   * replacing what that key held (MAX's Model.capture). A key is any 64-bit value, read unsigned
   * by the library ({@code -1L} is key 18446744073709551615). The graph keeps the weights it was
   * captured with ({@link #reload} applies to later captures) and lives as long as the model.
   *
   * <p><b>Outputs are rewritten in place.</b> The returned tensors (in the order of
   * {@link #outputMetadata()}) are shared with the graph, not copied: every {@link #replay} of
   * the key rewrites them, so they hold the latest replay's results. Copy one out
   * ({@code toFloatArray()}, {@code copy()}) to keep a result. The caller owns these references
   * and may close them (the graph keeps its own); a later capture under the same key returns new
   * tensors and leaves these with their last values.
   *
   * <p>Thread-safe. Replays of one key take turns inside the library, but a read of that key's
   * outputs while another thread replays it races with the rewrite: order such reads after the
   * replay (for example under a lock of the caller's).
   *
   * @throws MaxException INVALID_ARGUMENT for a key count other than one or for the input checks
   *     of execute (the model stays usable); FAILED_PRECONDITION when the model's work cannot be
   *     recorded (an op that waits on the host mid-run)
   * @throws IllegalStateException when this model or an input is closed
   */
  public List<Tensor> capture(long[] graphKeys, List<Tensor> inputs) {
    return graphCall("capture", graphKeys, inputs, (p, keys, numKeys, args) -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_model_capture(p, keys, numKeys, args.cHandles(), args.count(), out));
      return TensorArgs.takeList(out.getValue());
    });
  }

  /** Replays the graph of {@code graphKey} on {@code inputs}. See {@link #replay(long[], List)}. */
  public void replay(long graphKey, Tensor... inputs) {
    replay(new long[] {graphKey}, inputList(inputs, "Model.replay"));
  }

  /**
   * Runs the graph captured under {@code graphKeys} on {@code inputs}, which must have the dtypes
   * and shapes it was captured with (MAX's Model.replay). It rewrites, in place, the tensors
   * {@link #capture(long[], List)} returned and returns when they hold the new results. Inputs
   * are only read. A refused replay runs nothing, so the outputs keep their values. Thread-safe,
   * with the read ordering rule of capture.
   *
   * @throws MaxException FAILED_PRECONDITION naming the key when nothing is captured under it;
   *     INVALID_ARGUMENT naming the difference when the inputs do not match the capture (say
   *     another batch size), or for a key count other than one
   * @throws IllegalStateException when this model or an input is closed
   */
  public void replay(long[] graphKeys, List<Tensor> inputs) {
    graphCall("replay", graphKeys, inputs, (p, keys, numKeys, args) -> {
      Status.check(MaxLibrary.lib().max_model_replay(p, keys, numKeys, args.cHandles(), args.count()));
      return null;
    });
  }

  /**
   * Checks the graph of {@code graphKey} against an eager run. See
   * {@link #debugVerifyReplay(long[], List)}.
   */
  public void debugVerifyReplay(long graphKey, Tensor... inputs) {
    debugVerifyReplay(new long[] {graphKey}, inputList(inputs, "Model.debugVerifyReplay"));
  }

  /**
   * A debugging aid (MAX's Model.debug_verify_replay): runs the model eagerly on {@code inputs}
   * (into new outputs, discarded; the capture's outputs are not touched) and checks that it
   * launches the kernels the graph of {@code graphKeys} recorded, in order and with the same
   * launch shapes. Returning normally means the graph replays what execute would run.
   * Thread-safe.
   *
   * @throws MaxException FAILED_PRECONDITION naming the first difference, or that nothing is
   *     captured under the key; INVALID_ARGUMENT as for {@link #replay(long[], List)}
   * @throws IllegalStateException when this model or an input is closed
   */
  public void debugVerifyReplay(long[] graphKeys, List<Tensor> inputs) {
    graphCall("debugVerifyReplay", graphKeys, inputs, (p, keys, numKeys, args) -> {
      Status.check(MaxLibrary.lib().max_model_debug_verify_replay(p, keys, numKeys, args.cHandles(), args.count()));
      return null;
    });
  }

  /** One graph call's body: the model, the keys for C (null when none) and their count, the inputs. */
  @FunctionalInterface
  private interface GraphBody<T> {
    T run(Pointer model, long[] keys, SizeT numKeys, TensorArgs inputs);
  }

  private <T> T graphCall(String method, long[] graphKeys, List<Tensor> inputs, GraphBody<T> body) {
    String where = "Model." + method;
    Status.nonNull(graphKeys, where + ": graphKeys");
    Status.nonNull(inputs, where + ": inputs");
    // A copy, so another thread changing the caller's array cannot change the call; JNA cannot
    // pass an empty array, and the library answers NULL with the count 0 (INVALID_ARGUMENT).
    long[] keys = graphKeys.length == 0 ? null : graphKeys.clone();
    SizeT numKeys = new SizeT(graphKeys.length);
    return with(method, p -> {
      try (TensorArgs args = TensorArgs.of(inputs, where)) {
        return body.run(p, keys, numKeys, args);
      }
    });
  }

  /** Varargs as a list: a null array is INVALID_ARGUMENT, as the library answers NULL. */
  private static List<Tensor> inputList(Tensor[] inputs, String where) {
    return Arrays.asList(Status.nonNull(inputs, where + ": inputs"));
  }

  @Override
  public String toString() {
    return isClosed() ? "Model(<closed>)" : "Model(inputs=" + inputs + ", outputs=" + outputs + ")";
  }
}

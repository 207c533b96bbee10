package dev.maxc;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A compiled model with its weights bound (MAX's Model): execute it by position or by name, and
 * swap weights in place with {@link #reload}.
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

  @Override
  public String toString() {
    return isClosed() ? "Model(<closed>)" : "Model(inputs=" + inputs + ", outputs=" + outputs + ")";
  }
}

package dev.maxc;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * A compiled graph (the result of {@link Context#compile}): its signature, and the factory of
 * {@link Model}s, each with its own weights. It keeps its context alive in C.
 *
 * <p>The caller owns it; models keep it alive, so it may be closed once they are made.
 * Immutable and thread-safe.
 */
public final class CompiledModel extends NativeHandle {
  private interface Count {
    Pointer call(Pointer compiled, SizeTByReference out);
  }

  private interface At {
    Pointer call(Pointer compiled, SizeT index, PointerByReference out);
  }

  private volatile List<TensorSpec> inputs;
  private volatile List<TensorSpec> outputs;
  private volatile List<TensorSpec> weights;

  CompiledModel(Pointer peer) {
    super("CompiledModel", peer, MaxLibrary.lib()::max_compiled_model_release);
  }

  /**
   * The inputs in order (cached after the first call).
   *
   * @throws IllegalStateException when closed
   */
  public List<TensorSpec> inputs() {
    List<TensorSpec> l = inputs;
    if (l == null) {
      MaxC lib = MaxLibrary.lib();
      inputs = l = specs("inputs", lib::max_compiled_model_num_inputs, lib::max_compiled_model_input);
    }
    return l;
  }

  /**
   * The outputs in order (cached after the first call).
   *
   * @throws IllegalStateException when closed
   */
  public List<TensorSpec> outputs() {
    List<TensorSpec> l = outputs;
    if (l == null) {
      MaxC lib = MaxLibrary.lib();
      outputs = l = specs("outputs", lib::max_compiled_model_num_outputs, lib::max_compiled_model_output);
    }
    return l;
  }

  /**
   * The weights a model must be given (cached after the first call).
   *
   * @throws IllegalStateException when closed
   */
  public List<TensorSpec> weights() {
    List<TensorSpec> l = weights;
    if (l == null) {
      MaxC lib = MaxLibrary.lib();
      weights = l = specs("weights", lib::max_compiled_model_num_weights, lib::max_compiled_model_weight);
    }
    return l;
  }

  private List<TensorSpec> specs(String method, Count count, At at) {
    return with(method, p -> {
      SizeTByReference n = new SizeTByReference();
      Status.check(count.call(p, n));
      List<TensorSpec> out = new ArrayList<>();
      for (long i = 0; i < n.getValue(); i++) {
        PointerByReference spec = new PointerByReference();
        Status.check(at.call(p, new SizeT(i), spec));
        out.add(TensorSpec.take(spec.getValue()));
      }
      return Collections.unmodifiableList(out);
    });
  }

  /**
   * Makes a model with {@code weights} bound by name (each declared weight exactly once, with its
   * declared dtype and shape, except the model file's own weights, such as ONNX initializers,
   * which are bound unless given: an empty map binds them all). Contiguous CPU tensors are used in place: the model holds its own
   * reference, so they may be closed, but must not be written while the model lives. The caller
   * owns the model.
   *
   * @throws MaxException NOT_FOUND naming a missing weight; INVALID_ARGUMENT naming an unknown,
   *     duplicate or mismatched one
   */
  public Model createModel(Map<String, Tensor> weights) {
    return with("createModel", p -> {
      try (TensorArgs args = TensorArgs.named(weights, "CompiledModel.createModel")) {
        PointerByReference out = new PointerByReference();
        Status.check(MaxLibrary.lib().max_model_create(p, args.cNames(), args.cHandles(), args.count(), out));
        return new Model(out.getValue(), this);
      }
    });
  }

  /**
   * Makes a model with each weight the graph declares taken by name from {@code weights} (else
   * from the model file's own weights, such as ONNX initializers); tensors of the registry that
   * the graph does not declare are ignored. The model keeps what it binds, so the registry may be
   * closed afterwards. The caller owns the model.
   *
   * @throws MaxException NOT_FOUND naming a declared weight that neither has; INVALID_ARGUMENT a
   *     dtype or shape that differs from the declaration
   * @throws IllegalStateException when this or {@code weights} is closed
   */
  public Model createModel(Weights weights) {
    Status.nonNull(weights, "CompiledModel.createModel: weights");
    return with("createModel", p -> weights.read("CompiledModel.createModel", w -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_model_create_from_weights(p, w, out));
      return new Model(out.getValue(), this);
    }));
  }

  @Override
  public String toString() {
    return isClosed() ? "CompiledModel(<closed>)" : "CompiledModel(inputs=" + inputs() + ", outputs=" + outputs() + ")";
  }
}

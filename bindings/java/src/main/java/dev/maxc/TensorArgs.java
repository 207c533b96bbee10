package dev.maxc;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Tensors passed to one C call: each is held (see {@link NativeHandle#acquire}) from construction
 * to {@link #close()}, so another thread closing one cannot free it under the call. Also turns a
 * returned {@code max_tensor_list_t*} into Java tensors. Not thread-safe; one per call.
 */
final class TensorArgs implements AutoCloseable {
  final String[] names;
  final Pointer[] handles;
  private int held;
  private final List<Tensor> tensors;

  private TensorArgs(String[] names, List<Tensor> tensors, String method) {
    this.names = names;
    this.tensors = tensors;
    this.handles = new Pointer[tensors.size()];
    try {
      for (Tensor t : tensors) {
        if (t == null) throw Status.invalid(method + ": tensor #" + held + " is null");
        handles[held] = t.acquire(method);
        held++;
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * Positional tensors.
   *
   * @throws MaxException for a null or closed tensor
   */
  static TensorArgs of(List<Tensor> tensors, String method) {
    return new TensorArgs(null, tensors, method);
  }

  /**
   * Named tensors, in the map's iteration order.
   *
   * @throws MaxException for a null or closed tensor
   */
  static TensorArgs named(Map<String, Tensor> byName, String method) {
    String[] names = byName.keySet().toArray(new String[0]);
    List<Tensor> ts = new ArrayList<>(byName.values());
    return new TensorArgs(names, ts, method);
  }

  SizeT count() {
    return new SizeT(handles.length);
  }

  /** The names for C: null when there are none (JNA cannot pass an empty array). */
  String[] cNames() {
    return names == null || names.length == 0 ? null : names;
  }

  /** The handles for C: null when there are none (JNA cannot pass an empty array). */
  Pointer[] cHandles() {
    return handles.length == 0 ? null : handles;
  }

  @Override
  public void close() {
    for (int i = 0; i < held; i++) tensors.get(i).release();
    held = 0;
  }

  /**
   * The tensors of a list the library returned, each a new reference the caller owns; the list
   * itself is released.
   */
  static List<Tensor> takeList(Pointer list) {
    MaxC lib = MaxLibrary.lib();
    List<Tensor> out = new ArrayList<>();
    try {
      SizeTByReference n = new SizeTByReference();
      Status.check(lib.max_tensor_list_size(list, n));
      for (long i = 0; i < n.getValue(); i++) {
        PointerByReference t = new PointerByReference();
        Status.check(lib.max_tensor_list_get(list, new SizeT(i), t));
        out.add(new Tensor(t.getValue()));
      }
    } catch (RuntimeException e) {
      for (Tensor t : out) t.close();
      throw e;
    } finally {
      lib.max_tensor_list_release(list);
    }
    return Collections.unmodifiableList(out);
  }
}

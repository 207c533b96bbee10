package dev.maxc;

import com.sun.jna.Pointer;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One reference to a refcounted C handle, released by {@link #close()} or, as a safety net, by
 * a {@link Cleaner} once the Java object is unreachable. The C side keeps parents alive for
 * their children, so handles may be closed or collected in any order.
 *
 * <p>Calls into C go through {@link #acquire(String)} / {@link #release()}: an in-flight count
 * that {@code close()} waits out, so closing a handle while another thread is inside a call on it
 * never frees memory under that call; the handle is freed when the last call returns. Use after
 * close is an {@link IllegalStateException}, never a crash.
 *
 * <p>Thread-safe; whether the underlying object may be used from several threads at once is the
 * subclass's (the header's) business.
 */
abstract class NativeHandle implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  /** What the Cleaner runs: it must not refer to the handle object, or it would never run. */
  private static final class Releaser implements Runnable {
    private final Pointer peer;
    private final Consumer<Pointer> release;

    Releaser(Pointer peer, Consumer<Pointer> release) {
      this.peer = peer;
      this.release = release;
    }

    @Override
    public void run() {
      release.accept(peer);
    }
  }

  private final String kind;
  private final Pointer peer;
  private final Cleaner.Cleanable cleanable;
  // 1 for "open" plus one per call in flight; the native reference is dropped at 0.
  private final AtomicInteger uses = new AtomicInteger(1);
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * Takes ownership of one reference to {@code peer}, to be dropped with {@code release}.
   *
   * @param kind the class's name for error messages ("Tensor")
   */
  NativeHandle(String kind, Pointer peer, Consumer<Pointer> release) {
    if (peer == null) throw new MaxException(StatusCode.INTERNAL, kind + ": the library returned a NULL handle");
    this.kind = kind;
    this.peer = peer;
    this.cleanable = CLEANER.register(this, new Releaser(peer, release));
  }

  /**
   * Marks a call in flight and gives the C handle; pair with {@link #release()} in a finally.
   *
   * @throws IllegalStateException when the handle is closed
   */
  final Pointer acquire(String method) {
    for (;;) {
      int n = uses.get();
      if (n == 0 || closed.get()) throw Status.closed(kind, method);
      if (uses.compareAndSet(n, n + 1)) return peer;
    }
  }

  /** Ends a call begun by {@link #acquire(String)}. */
  final void release() {
    if (uses.decrementAndGet() == 0) cleanable.clean();
    // The C call used only `peer`; keep `this` reachable until here so the Cleaner cannot run
    // in the middle of the call.
    Reference.reachabilityFence(this);
  }

  /** Whether {@link #close()} was called. */
  public final boolean isClosed() {
    return closed.get();
  }

  /**
   * Drops this object's reference to the C handle; idempotent. Calls in flight on other threads
   * finish first (the handle is freed by the last of them). Objects that the library keeps alive
   * through this one (a model's compiled model, a tensor's device) stay valid.
   */
  @Override
  public final void close() {
    if (closed.compareAndSet(false, true)) release();
  }

  /** The C handle's address, for identity comparisons (Device equality). */
  final Pointer peer() {
    return peer;
  }

  /**
   * Runs {@code body} on the C handle with the handle held (see {@link #acquire(String)}).
   *
   * @throws IllegalStateException when closed, or whatever {@code body} throws
   */
  final <T> T with(String method, Function<Pointer, T> body) {
    Pointer p = acquire(method);
    try {
      return body.apply(p);
    } finally {
      release();
    }
  }
}

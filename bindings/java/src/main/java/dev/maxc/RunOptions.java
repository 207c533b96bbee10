package dev.maxc;

import com.sun.jna.Memory;
import java.time.Duration;

/**
 * Limits for {@link Model#execute(java.util.List, RunOptions)} (ABI 1.8), as onnxruntime's
 * RunOptions: a timeout counted from each call's start, and a cancel flag that any thread may set
 * with {@link #cancel()} to stop every call running under these options (they throw CANCELLED,
 * and so do new ones until {@link #reset()}). Checked before every step and every loop iteration.
 * Thread-safe. The flag lives in native memory, which the library polls while a call runs; it is
 * freed with this object.
 */
public final class RunOptions {
  private volatile Duration timeout;
  final Memory flag = new Memory(4);

  public RunOptions() {
    flag.setInt(0, 0);
  }

  /** The longest a call may run (at least a microsecond); null, the default, is no limit. */
  public RunOptions timeout(Duration timeout) {
    if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
      throw new IllegalArgumentException("RunOptions.timeout must be positive, not " + timeout);
    }
    this.timeout = timeout;
    return this;
  }

  public Duration timeout() {
    return timeout;
  }

  /** Stops the calls running under these options, each before its next step or iteration. */
  public void cancel() {
    flag.setInt(0, 1); // one aligned 32-bit store, which the library reads atomically
  }

  /** Clears a {@link #cancel()}, so that calls under these options run again. */
  public void reset() {
    flag.setInt(0, 0);
  }

  public boolean isCancelled() {
    return flag.getInt(0) != 0;
  }

  MaxC.RunOptions toNative() {
    MaxC.RunOptions o = new MaxC.RunOptions();
    Status.check(MaxLibrary.lib().max_run_options_init(o, new SizeT(o.size())));
    Duration t = timeout;
    if (t != null) {
      long us;
      try {
        us = Math.max(1, t.toNanos() / 1000);
      } catch (ArithmeticException overflow) {
        us = Long.MAX_VALUE;
      }
      o.timeout_us = us;
    }
    o.cancel_flag = flag;
    return o;
  }
}

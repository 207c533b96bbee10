package dev.maxc;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * A device of this process (MAX's driver Device): the host CPU or an accelerator. The library
 * keeps one object per (kind, id), so two {@code Device}s for the CPU are {@link #equals equal};
 * each holds its own reference, released by {@link #close()} (or the Cleaner).
 *
 * <p>Thread-safe.
 */
public final class Device extends NativeHandle {
  /** {@code MAX_DEVICE_KIND_*}. */
  public enum Kind {
    CPU(1),
    CUDA(2),
    HIP(3);

    final int code;

    Kind(int code) {
      this.code = code;
    }

    static Kind fromCode(int code) {
      for (Kind k : values()) {
        if (k.code == code) return k;
      }
      throw new MaxException(StatusCode.INTERNAL, "unknown device kind " + code);
    }
  }

  Device(Pointer peer) {
    super("Device", peer, MaxLibrary.lib()::max_device_release);
  }

  /** The host CPU. The caller owns the returned object. */
  public static Device cpu() {
    return create(Kind.CPU, 0);
  }

  /**
   * Accelerator {@code id} (-1: the first one) of its API (CUDA or HIP). The caller owns it.
   *
   * @throws MaxException NOT_FOUND when there is no such accelerator
   */
  public static Device accelerator(Kind kind, int id) {
    return create(kind, id);
  }

  /** How many accelerators this process can use (0 on a machine without one). */
  public static int acceleratorCount() {
    IntByReference out = new IntByReference();
    Status.check(MaxLibrary.lib().max_accelerator_count(out));
    return out.getValue();
  }

  private static Device create(Kind kind, int id) {
    PointerByReference out = new PointerByReference();
    Status.check(MaxLibrary.lib().max_device_create(kind.code, id, out));
    return new Device(out.getValue());
  }

  /**
   * The device's kind.
   *
   * @throws IllegalStateException when closed
   */
  public Kind kind() {
    return with("kind", p -> {
      IntByReference out = new IntByReference();
      Status.check(MaxLibrary.lib().max_device_kind(p, out));
      return Kind.fromCode(out.getValue());
    });
  }

  /**
   * Zero-based id; always 0 for the CPU.
   *
   * @throws IllegalStateException when closed
   */
  public int id() {
    return with("id", p -> {
      IntByReference out = new IntByReference();
      Status.check(MaxLibrary.lib().max_device_id(p, out));
      return out.getValue();
    });
  }

  /**
   * {@code "cpu"} or {@code "gpu"}.
   *
   * @throws IllegalStateException when closed
   */
  public String label() {
    return with("label", p -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_device_label(p, out));
      return Status.string(out.getValue());
    });
  }

  /**
   * {@code "cpu"}, {@code "cuda"} or {@code "hip"}.
   *
   * @throws IllegalStateException when closed
   */
  public String api() {
    return with("api", p -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_device_api(p, out));
      return Status.string(out.getValue());
    });
  }

  /**
   * Whether this is the host.
   *
   * @throws IllegalStateException when closed
   */
  public boolean isHost() {
    return with("isHost", p -> {
      IntByReference out = new IntByReference();
      Status.check(MaxLibrary.lib().max_device_is_host(p, out));
      return out.getValue() != 0;
    });
  }

  /**
   * Waits for every operation queued on the device.
   *
   * @throws MaxException on a device error
   */
  public void synchronize() {
    with("synchronize", p -> {
      Status.check(MaxLibrary.lib().max_device_synchronize(p));
      return null;
    });
  }

  /**
   * This device as a graph placement.
   *
   * @throws IllegalStateException when closed
   */
  public DeviceRef ref() {
    return kind() == Kind.CPU ? DeviceRef.cpu() : DeviceRef.gpu(id());
  }

  /** Same C device (the library keeps one per kind and id). */
  @Override
  public boolean equals(Object o) {
    return o instanceof Device && ((Device) o).peer().equals(peer());
  }

  @Override
  public int hashCode() {
    return peer().hashCode();
  }

  @Override
  public String toString() {
    if (isClosed()) return "Device(<closed>)";
    return "Device(" + label() + ":" + id() + ")";
  }
}

package dev.maxc;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Loads libmax_c once per JVM, checks its ABI, and answers the process-wide queries (versions,
 * log level).
 *
 * <p>Where the library comes from, first match wins: the system property {@code MAX_C_LIBRARY}
 * (a path to the .so), the environment variable {@code MAX_C_LIBRARY}, then JNA's search for
 * {@code max_c} ({@code jna.library.path}, then the system's default search). Right after loading,
 * {@code max_check_abi(MaxC.MIN_ABI_VERSION)} must succeed: a library older than ABI 1.4, the
 * oldest this binding runs against, fails here, with the library's message, instead of with a
 * missing symbol later. A 1.4 library serves everything but the ABI 1.5 additions
 * ({@link CompileOptions#fileDevice}, {@link Graph#addConstant(Tensor, DeviceRef)} off the host),
 * which throw UNIMPLEMENTED when used with it. The outcome (success or failure) is remembered, so every later use fails the same
 * way.
 *
 * <p>All methods are thread-safe.
 */
public final class MaxLibrary {
  /** The system property and environment variable naming the library's path. */
  public static final String LIBRARY_PATH_KEY = "MAX_C_LIBRARY";

  private static final Object LOCK = new Object();
  private static volatile MaxC lib;
  private static volatile RuntimeException loadFailure;
  private static volatile UnsatisfiedLinkError linkFailure;
  private static volatile String origin = "";

  private MaxLibrary() {}

  /**
   * The loaded, ABI-checked library.
   *
   * @throws UnsatisfiedLinkError when the library cannot be found or loaded (the message names
   *     every place tried)
   * @throws MaxException FAILED_PRECONDITION when the library is older than ABI 1.4
   *     ({@link MaxC#MIN_ABI_VERSION}), with the library's message naming both versions
   */
  static MaxC lib() {
    MaxC l = lib;
    if (l != null) return l;
    synchronized (LOCK) {
      if (lib == null) {
        if (linkFailure != null) throw new UnsatisfiedLinkError(linkFailure.getMessage());
        if (loadFailure != null) throw copy(loadFailure);
        load();
      }
      return lib;
    }
  }

  private static RuntimeException copy(RuntimeException e) {
    if (e instanceof MaxException) {
      MaxException m = (MaxException) e;
      return new MaxException(m.rawCode(), m.codeName(), m.statusMessage());
    }
    return new IllegalStateException(e.getMessage(), e);
  }

  private static void load() {
    Map<String, Object> options = Map.of(Library.OPTION_STRING_ENCODING, StandardCharsets.UTF_8.name());
    String explicit = System.getProperty(LIBRARY_PATH_KEY);
    String from = "system property " + LIBRARY_PATH_KEY;
    if (explicit == null || explicit.isEmpty()) {
      explicit = System.getenv(LIBRARY_PATH_KEY);
      from = "environment variable " + LIBRARY_PATH_KEY;
    }
    MaxC loaded;
    try {
      if (explicit != null && !explicit.isEmpty()) {
        if (!new File(explicit).isFile()) {
          throw new UnsatisfiedLinkError(from + " is " + explicit + ", which is not a file");
        }
        loaded = Native.load(explicit, MaxC.class, options);
        origin = explicit + " (" + from + ")";
      } else {
        loaded = Native.load("max_c", MaxC.class, options);
        origin = "max_c (jna.library.path=" + System.getProperty("jna.library.path", "") + ", then the default search)";
      }
    } catch (UnsatisfiedLinkError e) {
      linkFailure = new UnsatisfiedLinkError("cannot load libmax_c: set " + LIBRARY_PATH_KEY
          + " (system property or environment) to the library's path, or put it on jna.library.path: "
          + e.getMessage());
      throw linkFailure;
    }
    Pointer status = loaded.max_check_abi(MaxC.MIN_ABI_VERSION);
    if (status != null) {
      int code = loaded.max_status_code(status);
      String name = loaded.max_status_code_name(code);
      String message = Status.string(loaded.max_status_message(status));
      loaded.max_status_release(status);
      loadFailure = new MaxException(code, name, message + " (loaded from " + origin + ")");
      throw copy(loadFailure);
    }
    lib = loaded;
  }

  /**
   * The raw JNA interface, for ABI functions the idiomatic classes do not wrap. The caller owns
   * every handle and status it gets from it.
   *
   * @throws UnsatisfiedLinkError or MaxException as for loading (see the class comment)
   */
  public static MaxC raw() {
    return lib();
  }

  /** Where the library was loaded from (empty before the first load). */
  public static String origin() {
    return origin;
  }

  /** The ABI version this binding was written against, packed as (major &lt;&lt; 16) | minor. */
  public static int headerAbiVersion() {
    return MaxC.ABI_VERSION;
  }

  /** The ABI version the loaded library implements, packed like {@link #headerAbiVersion()}. */
  public static int abiVersion() {
    return lib().max_abi_version();
  }

  /**
   * Throws UNIMPLEMENTED, naming {@code what}, unless the loaded library has ABI 1.{@code minor}
   * (the binding's newer features check this before they are used).
   */
  static void requireAbiMinor(int minor, String what) {
    int have = abiVersion();
    if ((have >>> 16) == MaxC.ABI_VERSION_MAJOR && (have & 0xFFFF) >= minor) return;
    throw new MaxException(StatusCode.UNIMPLEMENTED, what + " needs libmax_c ABI " + MaxC.ABI_VERSION_MAJOR + "."
        + minor + "; the loaded library (" + origin + ") has ABI " + formatVersion(have));
  }

  /** The library's release version, e.g. {@code "1.2.0"}. */
  public static String versionString() {
    return lib().max_version_string();
  }

  /**
   * Checks that the loaded library serves a client built against {@code headerVersion}; the
   * binding already did so for its own version when it loaded the library.
   *
   * @throws MaxException FAILED_PRECONDITION when the majors differ or the library is older
   */
  public static void checkAbi(int headerVersion) {
    Status.check(lib().max_check_abi(headerVersion));
  }

  /**
   * Sets the process-wide log level (0 off, 1 error, 2 warning, 3 info, 4 debug, 5 trace).
   *
   * @throws MaxException INVALID_ARGUMENT outside [0, 5]
   */
  public static void setLogLevel(int level) {
    Status.check(lib().max_log_set_level(level));
  }

  /** The process-wide log level. */
  public static int logLevel() {
    return lib().max_log_level();
  }

  /** "major.minor" of a packed version. */
  public static String formatVersion(int packed) {
    return (packed >>> 16) + "." + (packed & 0xFFFF);
  }
}

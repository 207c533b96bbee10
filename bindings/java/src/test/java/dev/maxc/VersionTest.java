package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Native;
import org.junit.jupiter.api.Test;

class VersionTest {
  @Test
  void libraryServesTheHeaderVersion() {
    int lib = MaxLibrary.abiVersion();
    int header = MaxLibrary.headerAbiVersion();
    assertEquals(header >>> 16, lib >>> 16, "major");
    // The library must serve at least MIN_ABI_VERSION (1.4: the device graphs, Model.capture ...,
    // are bound); the ABI 1.5 additions check the library's version when used.
    assertEquals((1 << 16) | 4, MaxC.MIN_ABI_VERSION);
    assertTrue((lib & 0xFFFF) >= (MaxC.MIN_ABI_VERSION & 0xFFFF), "library " + MaxLibrary.formatVersion(lib) + " is older");
    assertEquals((1 << 16) | 8, header);
    assertEquals("1.8", MaxLibrary.formatVersion(header));
    assertTrue(MaxLibrary.versionString().matches("\\d+\\.\\d+\\.\\d+.*"), MaxLibrary.versionString());
    assertFalse(MaxLibrary.origin().isEmpty());
  }

  @Test
  void checkAbiAcceptsThisHeaderAndRefusesNewerOnes() {
    MaxLibrary.checkAbi(MaxC.MIN_ABI_VERSION);
    if (MaxLibrary.abiVersion() >= MaxC.ABI_VERSION) MaxLibrary.checkAbi(MaxC.ABI_VERSION);
    MaxLibrary.checkAbi(1 << 16); // 1.0: an older client is served
    MaxException newer = assertThrows(MaxException.class, () -> MaxLibrary.checkAbi((1 << 16) | 999));
    assertEquals(StatusCode.FAILED_PRECONDITION, newer.code());
    assertEquals("FAILED_PRECONDITION", newer.codeName());
    assertTrue(newer.statusMessage().contains("1.999"), newer.getMessage());
    MaxException otherMajor = assertThrows(MaxException.class, () -> MaxLibrary.checkAbi(2 << 16));
    assertEquals(StatusCode.FAILED_PRECONDITION, otherMajor.code());
  }

  @Test
  void sizeTMatchesThePlatform() {
    // 64-bit Linux: size_t is 8 bytes, and the structs built on it have the C layout.
    assertEquals(Native.POINTER_SIZE, Native.SIZE_T_SIZE);
    // max_compile_options_t: ..., int32 copy_inputs_to_device at 32 (ABI 1.4), padding, then the
    // pointer file_device at 40 (ABI 1.5).
    assertEquals(8 + 4 + 4 + 8 + 8 + 4 + 4 + 8, new MaxC.CompileOptions().size());
    MaxC.CompileOptions o = new MaxC.CompileOptions();
    o.copy_inputs_to_device = 7;
    o.file_device = new com.sun.jna.Pointer(0x1234);
    o.write();
    assertEquals(7, o.getPointer().getInt(32));
    assertEquals(0x1234, com.sun.jna.Pointer.nativeValue(o.getPointer().getPointer(40)));
    assertEquals(8 + 8 + 8 + 4 + 4, new MaxC.ContextOptions().size());
    assertEquals(16, new MaxC.MaxDim().size());
    assertEquals(8, new MaxC.DLDevice().size());
    // DLTensor: data, device, ndim + dtype, shape, strides, byte_offset.
    assertEquals(8 + 8 + 4 + 4 + 8 + 8 + 8, new DLPack.DLTensor().size());
    assertEquals(48 + 8 + 8, new DLPack.ManagedTensor().size());
    assertEquals(8 + 8 + 8 + 8 + 48, new DLPack.ManagedTensorVersioned().size());
    assertThrows(IllegalArgumentException.class, () -> new SizeT(-1));
  }

  @Test
  void logLevelRoundTripsAndRejectsBadLevels() {
    int before = MaxLibrary.logLevel();
    try {
      MaxLibrary.setLogLevel(1);
      assertEquals(1, MaxLibrary.logLevel());
      MaxException e = assertThrows(MaxException.class, () -> MaxLibrary.setLogLevel(42));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      assertEquals(1, MaxLibrary.logLevel());
    } finally {
      MaxLibrary.setLogLevel(before);
    }
  }
}

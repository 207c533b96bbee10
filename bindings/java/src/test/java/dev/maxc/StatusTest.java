package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Errors carry the library's code and message; handles close idempotently and fail clearly after. */
class StatusTest {
  @Test
  void libraryErrorCarriesCodeNameAndMessage() {
    MaxException e = assertThrows(MaxException.class, () -> DType.fromMaxName("float33"));
    assertEquals(StatusCode.NOT_FOUND, e.code());
    assertEquals(5, e.rawCode());
    assertEquals("NOT_FOUND", e.codeName());
    assertTrue(e.statusMessage().contains("float33"), e.statusMessage());
    assertEquals("NOT_FOUND: " + e.statusMessage(), e.getMessage());
  }

  @Test
  void sizeMismatchNamesBothSizes() {
    MaxException e = assertThrows(MaxException.class, () -> Tensor.fromBytes(DType.FLOAT32, new byte[10], 2, 2));
    assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
    assertTrue(e.statusMessage().contains("10") && e.statusMessage().contains("16"), e.statusMessage());
  }

  @Test
  void negativeDimIsInvalidArgument() {
    MaxException e = assertThrows(MaxException.class, () -> Tensor.zeros(DType.FLOAT32, 2, -3));
    assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
  }

  @Test
  void statusCodesMatchTheHeader() {
    assertEquals(0, StatusCode.OK.value());
    assertEquals(16, StatusCode.UNAUTHENTICATED.value());
    assertEquals(StatusCode.UNKNOWN, StatusCode.fromValue(1000));
    for (StatusCode c : StatusCode.values()) {
      assertEquals(c.name(), MaxLibrary.raw().max_status_code_name(c.value()));
    }
  }

  @Test
  void closeIsIdempotentAndUseAfterCloseIsAnError() {
    Tensor t = Tensor.of(new float[] {1, 2}, 2);
    t.close();
    t.close();
    assertTrue(t.isClosed());
    IllegalStateException e = assertThrows(IllegalStateException.class, t::toFloatArray);
    assertTrue(e.getMessage().contains("Tensor.toFloatArray"), e.getMessage());
    assertEquals("Tensor(<closed>)", t.toString());

    Graph g = new Graph("g");
    Value x = g.addInput("x", DType.FLOAT32, 2);
    g.close();
    IllegalStateException v = assertThrows(IllegalStateException.class, x::dtype);
    assertTrue(v.getMessage().contains("Graph"), v.getMessage());
  }

  @Test
  void unclosedHandlesAreReleasedByTheCleaner() throws InterruptedException {
    // Nothing to observe from Java but the absence of a crash: many handles left to the GC,
    // children collected after and before their parents.
    List<Tensor> keep = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      Tensor t = Tensor.of(new float[] {i}, 1);
      Device d = t.device();
      if (i % 2 == 0) keep.add(t);
      d.hashCode();
    }
    keep.clear();
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(20);
    }
    assertDoesNotThrow(() -> Tensor.of(new float[] {1}, 1).close());
  }
}

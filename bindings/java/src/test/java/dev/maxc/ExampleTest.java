package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Runs examples/Mlp.java as its header says (Java's single-file source launcher on this
 * classpath) and checks its comparable lines against the MLP computed here.
 */
class ExampleTest {
  static final Path EXAMPLE = Path.of("examples", "Mlp.java");

  /** The example's output lines and exit code, with {@code library} as MAX_C_LIBRARY (null: inherited). */
  static List<String> runExample(String library, int[] exitCode) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    String lib = library != null ? library : System.getProperty(MaxLibrary.LIBRARY_PATH_KEY);
    if (lib != null) cmd.add("-D" + MaxLibrary.LIBRARY_PATH_KEY + "=" + lib);
    String jnaPath = System.getProperty("jna.library.path");
    if (jnaPath != null) cmd.add("-Djna.library.path=" + jnaPath);
    cmd.add(EXAMPLE.toString());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the example hangs");
    exitCode[0] = p.exitValue();
    return out.lines().collect(Collectors.toList());
  }

  /** Element i of a pattern tensor: ((i*7 % 11) - 5) * scale, in float32 as the example makes it. */
  static double pattern(int i, float scale) {
    return ((i * 7 % 11) - 5) * scale;
  }

  /** The first row of relu(x @ w1 + b1) @ w2 (every batch's first row is the same x row). */
  static double[] expectedFirstRow() {
    double[] hidden = new double[16];
    for (int j = 0; j < 16; j++) {
      double s = pattern(j, 0.01f);
      for (int k = 0; k < 4; k++) s += pattern(k, 0.5f) * pattern(k * 16 + j, 0.1f);
      hidden[j] = Math.max(s, 0);
    }
    double[] row = new double[3];
    for (int c = 0; c < 3; c++) {
      for (int j = 0; j < 16; j++) row[c] += hidden[j] * pattern(j * 3 + c, 0.05f);
    }
    return row;
  }

  @Test
  void mlpExamplePrintsTheComparableLines() throws Exception {
    assumeTrue(Files.isRegularFile(EXAMPLE), "run from bindings/java (Maven's default)");
    int[] exit = new int[1];
    List<String> lines = runExample(null, exit);
    assertEquals(0, exit[0], String.join("\n", lines));
    double[] r = expectedFirstRow();
    List<String> expected = new ArrayList<>();
    for (int b : new int[] {1, 7, 64}) {
      expected.add(String.format(Locale.ROOT, "batch %2d: first row %.6f %.6f %.6f", b, r[0], r[1], r[2]));
    }
    assertEquals(expected, lines.stream().filter(l -> l.startsWith("batch")).collect(Collectors.toList()));
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("as expected: INVALID_ARGUMENT") && l.contains("'x'")),
        String.join("\n", lines));
  }
}

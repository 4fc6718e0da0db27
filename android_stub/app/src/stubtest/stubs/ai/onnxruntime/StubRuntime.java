package ai.onnxruntime;

import java.util.Map;

/**
 * NOT part of ONNX Runtime: the JVM test's hand on the signature stubs of this package. A real
 * session runs the exported graph; the stub session answers from these fields instead, so the
 * test can check what the glue sends (tensor shape and values) and that it acts on the score.
 */
public final class StubRuntime {
    /** Scores one window tensor; the test installs one. */
    public interface Scorer {
        float score(float[] data, long[] shape);
    }

    public static Map<String, String> customMetadata;
    public static long[] inputShape;
    /** Shape of the graph's {@code step_context} input, or null when the model has none. */
    public static long[] stepContextShape;
    /** The {@code step_context} tensors the session was run with, in order. */
    public static final java.util.List<float[]> stepContexts = new java.util.ArrayList<>();
    /** Shape of the graph's {@code height} input, or null when the model has none. */
    public static long[] heightShape;
    /** The {@code height} tensors the session was run with, in order. */
    public static final java.util.List<float[]> heights = new java.util.ArrayList<>();
    public static Scorer scorer;
    /** The graph's {@code stair} rule: score &gt; 0 for a trees head, else score ≥ 0 (KOMD's). */
    public static boolean treesHead;
    /** Scores the graph's {@code onset_score} output, or null when the model has none. */
    public static Scorer onsetScorer;
    public static byte[] lastModel;

    private StubRuntime() {
    }
}

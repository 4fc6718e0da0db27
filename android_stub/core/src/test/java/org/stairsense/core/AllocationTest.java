package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * The requirement "no allocation per sample in steady state", measured with the JVM's
 * per-thread allocation counter ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}).
 */
class AllocationTest {
    private static final int WARM_UP = 200_000;
    private static final int MEASURED = 2_000_000;

    private static long allocatedBytes() {
        com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return bean.getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    private static double bytesPerSample(String overrides, String method) {
        long[] classified = new long[1];
        Pipeline.WindowClassifier classifier = (samples, rows, columns) -> {
            classified[0]++;
            return samples[0] > 0;
        };
        Pipeline pipeline = new Pipeline(TestConfigs.config(overrides), method, 50, classifier, null);
        Walk walk = new Walk(4, 50, 1.7);
        for (int i = 0; i < WARM_UP; i++) {
            pipeline.push(walk.next(), walk.raw);
        }
        long before = allocatedBytes();
        for (int i = 0; i < MEASURED; i++) {
            pipeline.push(walk.next(), walk.raw);
        }
        long bytes = allocatedBytes() - before;
        assertTrue(classified[0] > MEASURED / 50, "the stream should have steps to classify");
        return (double) bytes / MEASURED;
    }

    @Test
    void steadyStateAllocatesNothingPerSample() {
        for (String[] c : new String[][] {{"", "rotvec"}, {"\"rate_hz\": 30", "vertical"},
                                          {"\"smoothing\": \"count\", \"rate_hz\": 30", "mizell"},
                                          {"\"step_context\": 5, \"step_context_gap_s\": 1.5", "rotvec"},
                                          {"\"step_context\": 5, \"barometer\": true, \"vote_steps\": 3", "rotvec"}}) {
            double perSample = bytesPerSample(c[0], c[1]);
            System.out.printf("allocation %s/%s: %.5f bytes per sample%n", c[1], c[0], perSample);
            // The counter itself allocates a few hundred bytes once; spread over 2 M samples that is < 0.001.
            assertTrue(perSample < 0.001, c[1] + ": " + perSample + " bytes allocated per sample");
        }
    }
}

package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The running-sum buffer against the definition (spec §3.3–§3.4): a brute-force mean over the buffer. */
class BufferMeanTest {
    private static final long MS = 1_000_000L;

    /** Brute force: mean of x[j] with t[j] in [t[i] - span, t[i]] (current included or not), NaN while filling. */
    private static double bruteTime(long[] t, double[] x, int i, long span, boolean includeCurrent) {
        if (t[i] - t[0] < span) {
            return Double.NaN;
        }
        double sum = 0;
        int n = 0;
        for (int j = 0; j < (includeCurrent ? i + 1 : i); j++) {
            if (t[j] >= t[i] - span) {
                sum += x[j];
                n++;
            }
        }
        return sum / n;
    }

    @Test
    void timeModeMatchesTheDefinitionOnAJitteryStreamLongerThanTheResumPeriod() {
        Random rng = new Random(1);
        int n = 3 * BufferMean.RESUM_EVERY;
        long[] t = new long[n];
        double[] x = new double[n];
        for (int i = 1; i < n; i++) {
            t[i] = t[i - 1] + 5 * MS + rng.nextInt(30) * MS;
            x[i] = 9.81 + rng.nextGaussian();
        }
        for (boolean include : new boolean[] {false, true}) {
            BufferMean mean = BufferMean.ofSpan(300 * MS, include);
            for (int i = 0; i < n; i++) {
                boolean ready = mean.push(t[i], x[i], -x[i], 2 * x[i]);
                double expected = bruteTime(t, x, i, 300 * MS, include);
                assertEquals(!Double.isNaN(expected), ready, "ready at " + i);
                if (ready) {
                    assertEquals(expected, mean.meanX, 1e-12);
                    assertEquals(-expected, mean.meanY, 1e-12);
                    assertEquals(2 * expected, mean.meanZ, 1e-12);
                }
            }
        }
    }

    @Test
    void countModeAveragesTheLastSamples() {
        BufferMean smoother = BufferMean.ofCount(3, false);  // the current sample is excluded
        BufferMean gravity = BufferMean.ofCount(3, true);    // the current sample is included
        double[] expectedSmoother = {Double.NaN, Double.NaN, Double.NaN, 1, 2, 3};
        double[] expectedGravity = {Double.NaN, Double.NaN, 1, 2, 3, 4};
        for (int i = 0; i < 6; i++) {
            boolean s = smoother.push(i, i, 0, 0);
            boolean g = gravity.push(i, i, 0, 0);
            assertEquals(!Double.isNaN(expectedSmoother[i]), s);
            assertEquals(!Double.isNaN(expectedGravity[i]), g);
            if (s) {
                assertEquals(expectedSmoother[i], smoother.meanX, 0);
            }
            if (g) {
                assertEquals(expectedGravity[i], gravity.meanX, 0);
            }
        }
    }

    @Test
    void aGapLongerThanTheBufferIsAnErrorNamingTheSample() {
        BufferMean smoother = BufferMean.ofSpan(300 * MS, false);
        for (int i = 0; i <= 30; i++) {
            smoother.push(i * 20 * MS, 1, 2, 3);
        }
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> smoother.push(1000 * MS, 1, 2, 3));
        assertTrue(e.getMessage().contains("t_ns=" + 1000 * MS), e.getMessage());
    }

    @Test
    void resetStartsFilling() {
        BufferMean gravity = BufferMean.ofSpan(100 * MS, true);
        for (int i = 0; i < 20; i++) {
            gravity.push(i * 10 * MS, 1, 1, 1);
        }
        gravity.reset();
        assertFalse(gravity.push(10_000 * MS, 5, 5, 5));
    }
}

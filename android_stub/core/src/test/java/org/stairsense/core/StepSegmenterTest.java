package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The spec §3.5 state machine on signals whose windows are known by construction. */
class StepSegmenterTest {
    private static final long MS = 1_000_000L;

    private static List<long[]> run(PipelineConfig config, double[] z, long periodNs) {
        StepSegmenter segmenter = new StepSegmenter(config);
        List<long[]> out = new ArrayList<>();
        for (int i = 0; i < z.length; i++) {
            Window w = segmenter.push(i * periodNs, z[i]);
            if (w != null) {
                out.add(new long[] {w.start(), w.stop(), w.status().ordinal()});
            }
        }
        return out;
    }

    /** A sine with whole samples per period, plus two samples so the last upward crossing is inside the array. */
    private static double[] sine(double amplitude, int samplesPerPeriod, int periods) {
        double[] z = new double[samplesPerPeriod * periods + 2];
        for (int i = 0; i < z.length; i++) {
            z[i] = amplitude * Math.sin(2 * Math.PI * (i + 0.5) / samplesPerPeriod);
        }
        return z;
    }

    @Test
    void everyPeriodOfAStrongSineIsOneKeptWindow() {
        // 1 s periods. z starts positive, so the first upward crossing (state -1 -> +1) is in period 2:
        // its first sample above the +0.1 band is 101 (z[100] = 2 sin(pi/100) = 0.063 is inside the band).
        List<long[]> windows = run(TestConfigs.config(""), sine(2.0, 100, 5), 10 * MS);
        assertEquals(4, windows.size());  // crossings at 101, 201, ..., 501 close 4 windows
        long first = 101;
        for (int k = 0; k < windows.size(); k++) {
            assertEquals(first + 100L * k, windows.get(k)[0]);
            assertEquals(first + 100L * (k + 1), windows.get(k)[1]);
            assertEquals(WindowStatus.KEPT.ordinal(), windows.get(k)[2]);
        }
    }

    @Test
    void theDurationFilterRejectsWithItsReason() {
        assertEquals(WindowStatus.TOO_SHORT.ordinal(), run(TestConfigs.config(""), sine(2.0, 20, 3), 10 * MS).get(0)[2]);
        assertEquals(WindowStatus.TOO_LONG.ordinal(), run(TestConfigs.config(""), sine(2.0, 300, 3), 10 * MS).get(0)[2]);
    }

    @Test
    void aSineBelowThePeakThresholdOpensNoWindow() {
        StepSegmenter segmenter = new StepSegmenter(TestConfigs.config(""));
        double[] z = sine(0.4, 100, 5);
        for (int i = 0; i < z.length; i++) {
            assertNull(segmenter.push(i * 10 * MS, z[i]));
        }
    }

    @Test
    void aPeakWithoutAValleyKeepsTheWindowOpenUntilOne() {
        // Segment 1: peak 2, valley only -0.3 (not a valley); segment 2: peak 0.3, valley -2: one window over both.
        double[] z = {-1, 2, -0.3, 0.3, -2, 1, -1};
        List<long[]> windows = run(TestConfigs.config(""), z, 200 * MS);
        assertEquals(1, windows.size());
        assertEquals(1, windows.get(0)[0]);
        assertEquals(5, windows.get(0)[1]);
    }
}

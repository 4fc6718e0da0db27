package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PipelineTest {
    /** Records what the pipeline reports, for oracles computed from the standardized samples. */
    private static final class Recorder implements Pipeline.Listener {
        final List<double[]> samples = new ArrayList<>();
        final List<long[]> windows = new ArrayList<>();
        final List<Long> restarts = new ArrayList<>();

        @Override
        public void onRestart(long tNs) {
            restarts.add(tNs);
            samples.clear();
        }

        @Override
        public void onSample(long index, long tNs, double[] sample, double vertical) {
            assertEquals(samples.size(), index);
            assertEquals(sample[2], vertical);
            samples.add(sample.clone());
        }

        @Override
        public void onWindow(Window w, boolean stair) {
            windows.add(new long[] {w.start(), w.stop(), w.kept() ? 1 : 0});
        }
    }

    @Test
    void countsOneStepPerKeptWindowWithoutAModel() {
        Recorder recorder = new Recorder();
        Pipeline pipeline = new Pipeline(TestConfigs.config(""), "rotvec", 50, null, recorder);
        Walk walk = new Walk(1, 50, 1.8);
        for (int i = 0; i < 50 * 60; i++) {
            pipeline.push(walk.next(), walk.raw);
        }
        long kept = recorder.windows.stream().filter(w -> w[2] == 1).count();
        assertEquals(kept, pipeline.steps());
        assertEquals(1.8 * 60, pipeline.steps(), 3);  // one window per cycle of the cadence
        assertEquals(50 * 60, pipeline.samples());
    }

    @Test
    void theClassifierGetsEachKeptWindowAsFloat32Rows() {
        Recorder recorder = new Recorder();
        List<float[]> seen = new ArrayList<>();
        Pipeline.WindowClassifier classifier = (samples, rows, columns) -> {
            assertEquals(3, columns);
            seen.add(java.util.Arrays.copyOf(samples, rows * columns));
            return seen.size() % 2 == 0;
        };
        Pipeline pipeline = new Pipeline(TestConfigs.config("\"rate_hz\": 30"), "vertical", 50, classifier, recorder);
        Walk walk = new Walk(2, 50, 1.5);
        for (int i = 0; i < 50 * 30; i++) {
            pipeline.push(walk.next(), walk.raw);
        }
        List<long[]> kept = new ArrayList<>();
        for (long[] w : recorder.windows) {
            if (w[2] == 1) {
                kept.add(w);
            }
        }
        assertEquals(kept.size(), seen.size());
        assertEquals(kept.size() / 2, pipeline.stairSteps());
        for (int k = 0; k < kept.size(); k++) {
            long start = kept.get(k)[0];
            long stop = kept.get(k)[1];
            float[] expected = new float[(int) (stop - start) * 3];
            for (long i = start; i < stop; i++) {
                for (int c = 0; c < 3; c++) {
                    expected[(int) (i - start) * 3 + c] = (float) recorder.samples.get((int) i)[c];
                }
            }
            assertArrayEquals(expected, seen.get(k));
        }
    }

    @Test
    void aGapLongerThanMaxGapRestartsTheFrontEnd() {
        Recorder recorder = new Recorder();
        Pipeline pipeline = new Pipeline(TestConfigs.config(""), "rotvec", 50, null, recorder);
        Walk walk = new Walk(3, 50, 1.8);
        for (int i = 0; i < 500; i++) {
            pipeline.push(walk.next(), walk.raw);
        }
        walk.gap(2_000_000_000L);
        long resumed = walk.next();
        pipeline.push(resumed, walk.raw);
        assertEquals(List.of(resumed), recorder.restarts);
        assertEquals(2, pipeline.segments());
        assertTrue(recorder.samples.isEmpty(), "the buffers fill again after a restart");
        for (int i = 0; i < 500; i++) {
            pipeline.push(walk.next(), walk.raw);
        }
        assertTrue(pipeline.steps() > 20);
    }

    @Test
    void timestampsMustIncrease() {
        Pipeline pipeline = new Pipeline(TestConfigs.config(""), "vertical", 50, null, null);
        double[] raw = new double[RawSample.WIDTH];
        raw[2] = 9.8;
        pipeline.push(1000, raw);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> pipeline.push(1000, raw));
        assertTrue(e.getMessage().contains("must increase"));
    }
}

package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PipelineTest {
    private static final double HEIGHT_HPA_PER_M = 0.12;  // near sea level
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
    void stairStepsAreTheVotedDecisionsDecidedAtRestartsAndAtTheFlush() {
        Random rng = new Random(8);
        List<List<Boolean>> raw = new ArrayList<>();  // the classifier's answers, per segment
        List<long[]> times = new ArrayList<>();
        List<Boolean> voted = new ArrayList<>();
        List<Integer> votedAtRestart = new ArrayList<>();
        Pipeline.Listener listener = new Pipeline.Listener() {
            @Override
            public void onRestart(long tNs) {
                votedAtRestart.add(voted.size());
                raw.add(new ArrayList<>());
            }

            @Override
            public void onWindow(Window w, boolean stair) {
                if (w.kept()) {
                    raw.get(raw.size() - 1).add(stair);
                    times.add(new long[] {w.tStartNs(), w.tEndNs()});
                }
            }

            @Override
            public void onStairDecision(long step, boolean stair) {
                assertEquals(voted.size(), step, "decisions come in the windows' order");
                voted.add(stair);
            }
        };
        raw.add(new ArrayList<>());
        Pipeline pipeline = new Pipeline(TestConfigs.config("\"vote_steps\": 3"), "rotvec", 50,
                (samples, rows, columns) -> rng.nextBoolean(), listener);
        Walk walk = new Walk(7, 50, 1.8);
        for (int i = 0; i < 50 * 20; i++) {
            pipeline.push(walk.next(), walk.raw);
        }
        walk.gap(1_000_000_000L);  // over max_gap_s (0.3 s), under step_context_gap_s (1.5 s): the restart ends the run
        for (int i = 0; i < 50 * 20; i++) {
            pipeline.push(walk.next(), walk.raw);
        }
        assertEquals(List.of(raw.get(0).size()), votedAtRestart, "the first segment is decided before the restart");
        assertEquals(pipeline.steps() - 1, voted.size(), "the last window waits for its successor");
        pipeline.flush();
        assertEquals(pipeline.steps(), voted.size());
        // The oracle: each segment is one run (a steady walk); a window's vote is the majority of it and
        // its neighbours, the run's first and last windows keeping their own answer.
        for (int k = 1; k < times.size(); k++) {
            assertTrue(times.get(k)[0] - times.get(k - 1)[1] < 1_500_000_000L || k == raw.get(0).size());
        }
        List<Boolean> want = new ArrayList<>();
        for (List<Boolean> segment : raw) {
            int n = segment.size();
            assertTrue(n > 20, "each segment should have steps");
            for (int i = 0; i < n; i++) {
                int votes = (segment.get(Math.max(i - 1, 0)) ? 1 : 0) + (segment.get(i) ? 1 : 0)
                        + (segment.get(Math.min(i + 1, n - 1)) ? 1 : 0);
                want.add(votes >= 2);
            }
        }
        assertEquals(want, voted);
        assertEquals(want.stream().filter(b -> b).count(), pipeline.stairSteps());
        List<Boolean> answered = new ArrayList<>();
        raw.forEach(answered::addAll);
        assertNotEquals(answered, voted, "the vote changed decisions, so the test can fail");
    }

    /** Answers the k-th window it classifies with {@code stair[k]}, and {@code onset[k]} for {@link #onset}. */
    private static final class Answers implements Pipeline.WindowClassifier {
        final boolean[] stair;
        final boolean[] onset;
        int calls;

        Answers(boolean[] stair, boolean[] onset) {
            this.stair = stair;
            this.onset = onset;
        }

        @Override
        public boolean isStair(float[] samples, int rows, int columns) {
            return stair[calls++];
        }

        @Override
        public boolean onset() {
            return onset[calls - 1];
        }
    }

    @Test
    void theVoteReadsTheClassifiersOnsetFlagOfEachWindow() {
        Random rng = new Random(9);
        boolean[] stair = new boolean[200];
        boolean[] onset = new boolean[200];
        for (int k = 0; k < stair.length; k++) {
            stair[k] = rng.nextBoolean();
            onset[k] = rng.nextBoolean();
        }
        List<Boolean> voted = new ArrayList<>();
        Pipeline.Listener listener = new Pipeline.Listener() {
            @Override
            public void onStairDecision(long step, boolean decision) {
                voted.add(decision);
            }
        };
        Answers answers = new Answers(stair, onset);
        Pipeline pipeline = new Pipeline(TestConfigs.config("\"vote_steps\": 3"), "rotvec", 50, answers, listener);
        Walk walk = new Walk(7, 50, 1.8);
        for (int i = 0; i < 50 * 20; i++) {
            pipeline.push(walk.next(), walk.raw);
        }
        pipeline.flush();
        // The oracle: one run (a steady walk, as above); the majority of three, or an onset window
        // before a window the classifier called STAIR.
        int n = answers.calls;
        assertTrue(n > 20 && n == pipeline.steps());
        List<Boolean> want = new ArrayList<>();
        int added = 0;
        for (int i = 0; i < n; i++) {
            int votes = (stair[Math.max(i - 1, 0)] ? 1 : 0) + (stair[i] ? 1 : 0)
                    + (stair[Math.min(i + 1, n - 1)] ? 1 : 0);
            boolean flight = onset[i] && i + 1 < n && stair[i + 1];
            added += votes < 2 && flight ? 1 : 0;
            want.add(votes >= 2 || flight);
        }
        assertEquals(want, voted);
        assertTrue(added > 0, "the onset flag changed decisions, so the test can fail");
    }

    @Test
    void aBarometerModelGetsHeightFeaturesAndRefusesRowsWithoutPressureUnchanged() {
        String baro = "\"step_context\": 5, \"step_context_gap_s\": 1.5, \"barometer\": true";
        List<float[]> heights = new ArrayList<>();
        Pipeline.WindowClassifier classifier = new Pipeline.WindowClassifier() {
            @Override
            public boolean isStair(float[] samples, int rows, int columns) {
                throw new AssertionError("a barometer model's windows come with their height features");
            }

            @Override
            public boolean isStair(float[] samples, int rows, int columns, float[] stepContext, float[] height) {
                heights.add(height.clone());
                return false;
            }
        };
        Pipeline pipeline = new Pipeline(TestConfigs.config(baro), "rotvec", 50, classifier, null);
        Walk walk = new Walk(5, 50, 1.8);
        for (int i = 0; i < 50 * 20; i++) {
            pipeline.push(walk.next(), walk.raw);
        }
        assertTrue(heights.size() > 20 && heights.size() == pipeline.steps());
        // On the level (0.03 hPa of noise, about 0.25 m) the filter keeps each step's height change small.
        for (float[] h : heights) {
            assertEquals(HeightContext.N_FEATURES, h.length);
            assertTrue(h[0] < 0.2 && h[3] < 0.2, java.util.Arrays.toString(h));
        }
        long before = pipeline.samples();
        long t = walk.next();
        double[] raw = walk.raw.clone();
        raw[RawSample.PRESSURE] = Double.NaN;
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> pipeline.push(t, raw));
        assertTrue(none.getMessage().contains("t_ns=" + t + " has no air pressure")
                && none.getMessage().contains("accelerometer-only model"), none.getMessage());
        raw[RawSample.PRESSURE] = 101325.0;  // Pa, not hPa
        IllegalArgumentException pascal = assertThrows(IllegalArgumentException.class, () -> pipeline.push(t, raw));
        assertTrue(pascal.getMessage().contains("101325.0 hPa; a barometer reads 300–1100 hPa"), pascal.getMessage());
        assertEquals(before, pipeline.samples());
        pipeline.push(t, walk.raw);  // the same row with its pressure: the refusals changed nothing
        assertEquals(before + 1, pipeline.samples());
    }

    @Test
    void aBarometerModelCountsTheClimbOfItsVotedStairSteps() {
        String baro = "\"step_context\": 5, \"step_context_gap_s\": 1.5, \"barometer\": true, \"vote_steps\": 3";
        Pipeline.WindowClassifier always = (samples, rows, columns) -> true;
        Pipeline pipeline = new Pipeline(TestConfigs.config(baro), "rotvec", 50, always, null);
        assertTrue(new Pipeline(TestConfigs.config("\"step_context\": 5"), "rotvec", 50, always, null).climb() == null);
        Walk walk = new Walk(5, 50, 1.8);
        double metresPerSecond = 0.1;  // a slow climb: 0.012 hPa/s
        double seconds = 30;
        for (int i = 0; i < 50 * seconds; i++) {
            long t = walk.next();
            double[] raw = walk.raw.clone();
            raw[RawSample.PRESSURE] -= HEIGHT_HPA_PER_M * metresPerSecond * i / 50.0;
            pipeline.push(t, raw);
        }
        ClimbCounter climb = pipeline.climb();
        long decidedBeforeFlush = climb.up() + climb.down();
        pipeline.flush();
        assertEquals(pipeline.stairSteps(), climb.up() + climb.down());
        assertTrue(pipeline.stairSteps() == pipeline.steps() && decidedBeforeFlush == pipeline.steps() - 1,
                "the vote of 3 holds back the last window until the flush");
        // one flight: from the first window's context start to the last window's end, all climbed
        double rise = metresPerSecond * seconds;
        assertEquals(rise, climb.climbedM(), 0.5, "climbed " + climb.climbedM() + " m of " + rise);
        assertEquals(0.0, climb.descendedM());
        assertEquals(1, climb.floorsAscended());
    }

    @Test
    void anAccelerometerOnlyModelIgnoresPressure() {
        Recorder withPressure = new Recorder();
        Recorder without = new Recorder();
        Pipeline a = new Pipeline(TestConfigs.config(""), "rotvec", 50, null, withPressure);
        Pipeline b = new Pipeline(TestConfigs.config(""), "rotvec", 50, null, without);
        Walk walk = new Walk(6, 50, 1.8);
        for (int i = 0; i < 50 * 20; i++) {
            long t = walk.next();
            a.push(t, walk.raw);
            double[] raw = walk.raw.clone();
            raw[RawSample.PRESSURE] = Double.NaN;
            b.push(t, raw);
        }
        assertTrue(a.steps() > 20 && a.steps() == b.steps());
        assertEquals(withPressure.windows.size(), without.windows.size());
        assertEquals(null, a.heightFeatures());
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

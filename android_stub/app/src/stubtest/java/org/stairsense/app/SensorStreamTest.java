package org.stairsense.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnxruntime.StubRuntime;
import android.hardware.Sensor;
import android.hardware.SensorEvent;
import android.hardware.SensorEventListener;
import android.hardware.SensorManager;
import android.os.Handler;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.stairsense.core.ClimbCounter;
import org.stairsense.core.HeightContext;
import org.stairsense.core.ModelConfigException;
import org.stairsense.core.Pipeline;
import org.stairsense.core.PipelineConfig;
import org.stairsense.core.RawSample;
import org.stairsense.core.Window;

/**
 * The Android glue driven on the JVM through the signature stubs: a replayed sensor log (three
 * sensors, batched, batches delivered in every order) through {@link SensorStream}, the
 * {@link SensorAligner} and the {@link OrtStairClassifier}, against the core {@link Pipeline} fed
 * directly with the rows the spec's zero-order hold gives (the oracle).
 */
class SensorStreamTest {
    private static final String CONFIG = "{\"rate_hz\": 30, \"smoothing\": \"time\", \"smooth_ms\": 300.0, "
            + "\"gravity_ms\": 500.0, \"orientation\": \"auto\", \"segmentation\": \"pattern\", \"peak_threshold\": 0.5, "
            + "\"valley_threshold\": 0.5, \"hysteresis\": 0.1, \"min_step_s\": 0.3, \"max_step_s\": 2.0, "
            + "\"window_ms\": 500.0, \"window_overlap\": 0.5, \"max_gap_s\": 0.3}";
    private static final String BAROMETER = CONFIG.replace("}", ", \"step_context\": 5, \"step_context_gap_s\": 1.5, "
            + "\"barometer\": true}");

    /** A stand-in for the graph: STAIR when the window's mean vertical sample is positive. */
    private static float score(float[] data, long[] shape) {
        double sum = 0;
        for (int r = 0; r < shape[0]; r++) {
            sum += data[(int) (r * shape[1] + 2)];
        }
        return (float) sum;
    }

    private static Map<String, String> metadata(String config) {
        Map<String, String> m = new HashMap<>();
        m.put("stairsense.format", "stairsense-stairstep-onnx");
        m.put("stairsense.format_version", "1");
        m.put("stairsense.config", config);
        return m;
    }

    private final List<float[]> tensors = new ArrayList<>();

    @BeforeEach
    void installModel() {
        StubRuntime.customMetadata = metadata(CONFIG);
        StubRuntime.inputShape = new long[] {-1, 3};
        StubRuntime.stepContextShape = null;
        StubRuntime.stepContexts.clear();
        StubRuntime.heightShape = null;
        StubRuntime.heights.clear();
        StubRuntime.onsetScorer = null;
        StubRuntime.treesHead = false;
        StubRuntime.scorer = (data, shape) -> {
            assertEquals(2, shape.length);
            assertEquals(3, shape[1]);
            assertEquals(shape[0] * 3, data.length);
            tensors.add(data.clone());
            return score(data, shape);
        };
    }

    /** Records registrations; hands out stub sensors, a barometer only when the phone has one. */
    private static final class FakeSensorManager extends SensorManager {
        final Map<Integer, int[]> registered = new HashMap<>();
        final boolean hasBarometer;
        SensorEventListener listener;
        int flushes;

        FakeSensorManager(boolean hasBarometer) {
            this.hasBarometer = hasBarometer;
        }

        @Override
        public Sensor getDefaultSensor(int type) {
            return type == Sensor.TYPE_PRESSURE && !hasBarometer ? null : new Sensor(type);
        }

        @Override
        public boolean registerListener(SensorEventListener l, Sensor sensor, int samplingPeriodUs, int maxReportLatencyUs,
                                        Handler handler) {
            listener = l;
            registered.put(sensor.getType(), new int[] {samplingPeriodUs, maxReportLatencyUs});
            return true;
        }

        @Override
        public boolean flush(SensorEventListener l) {
            assertEquals(listener, l);
            flushes++;
            return true;
        }

        @Override
        public void unregisterListener(SensorEventListener l) {
            registered.clear();
        }
    }

    /**
     * A synthetic three-sensor log: 50 Hz accelerometer (walking), rotation vector and a 10 Hz
     * barometer (climbing 0.1 m/s, 0.03 hPa of noise), each on its own clock.
     */
    private static final class Log {
        final List<long[]> accT = new ArrayList<>();
        final List<float[]> acc = new ArrayList<>();
        final List<Long> rotT = new ArrayList<>();
        final List<float[]> rot = new ArrayList<>();
        final List<Long> pressureT = new ArrayList<>();
        final List<float[]> pressure = new ArrayList<>();

        Log(long seed, double seconds) {
            Random rng = new Random(seed);
            for (long t = 40_000_000L; t < seconds * 1e9; t += 20_000_000L + rng.nextInt(4_000_000)) {
                double s = t / 1e9;
                double angle = 0.3 * Math.sin(0.2 * s);  // the phone turns slowly about device x
                double up = 9.80665 + 2.5 * Math.sin(2 * Math.PI * 1.8 * s);
                accT.add(new long[] {t});
                acc.add(new float[] {(float) (0.1 * rng.nextGaussian()), (float) (up * Math.cos(angle)),
                                     (float) (up * Math.sin(angle))});
            }
            for (long t = 0; t < seconds * 1e9; t += 19_000_000L + rng.nextInt(3_000_000)) {
                double half = (Math.PI / 2 - 0.3 * Math.sin(0.2 * t / 1e9)) / 2;
                rotT.add(t);
                rot.add(new float[] {(float) Math.sin(half), 0f, 0f, (float) Math.cos(half)});
            }
            for (long t = 70_000_000L; t < seconds * 1e9; t += 95_000_000L + rng.nextInt(10_000_000)) {
                pressureT.add(t);
                pressure.add(new float[] {(float) (1000.0 - 0.012 * t / 1e9 + 0.03 * rng.nextGaussian())});
            }
        }

        /** The index of the latest sample at or before {@code t} in {@code times}, or -1. */
        static int held(List<Long> times, long t) {
            int held = -1;
            for (int k = 0; k < times.size() && times.get(k) <= t; k++) {
                held = k;
            }
            return held;
        }
    }

    private static void deliver(SensorEventListener listener, Log log, long batchNs) {
        Sensor accelerometer = new Sensor(Sensor.TYPE_ACCELEROMETER);
        Sensor rotation = new Sensor(Sensor.TYPE_ROTATION_VECTOR);
        Sensor barometer = new Sensor(Sensor.TYPE_PRESSURE);
        int a = 0;
        int r = 0;
        int p = 0;
        for (long end = batchNs, batch = 0; a < log.acc.size() || r < log.rot.size() || p < log.pressure.size();
             end += batchNs, batch++) {
            List<List<SensorEvent>> batches = new ArrayList<>();
            for (int k = 0; k < 3; k++) {
                batches.add(new ArrayList<>());
            }
            for (; a < log.acc.size() && log.accT.get(a)[0] < end; a++) {
                batches.get(0).add(new SensorEvent(accelerometer, log.accT.get(a)[0], log.acc.get(a).clone()));
            }
            for (; r < log.rot.size() && log.rotT.get(r) < end; r++) {
                batches.get(1).add(new SensorEvent(rotation, log.rotT.get(r), log.rot.get(r).clone()));
            }
            for (; p < log.pressure.size() && log.pressureT.get(p) < end; p++) {
                batches.get(2).add(new SensorEvent(barometer, log.pressureT.get(p), log.pressure.get(p).clone()));
            }
            // The sensor hub flushes each sensor's FIFO separately: every sensor's batch comes first in turn.
            for (int k = 0; k < 3; k++) {
                for (SensorEvent e : batches.get((int) ((batch + k) % 3))) {
                    listener.onSensorChanged(e);
                }
            }
        }
    }

    /**
     * Feeds {@code oracle} the rows the zero-order hold defines: each accelerometer sample with the
     * latest rotation (and pressure, when {@code withPressure}) at or before it; returns how many
     * had none yet. Samples after a stream's last one are left out: the glue holds them for a newer one.
     */
    private static int feedHeldRows(Pipeline oracle, Log log, boolean withPressure) {
        double[] row = new double[RawSample.WIDTH];
        java.util.Arrays.fill(row, Double.NaN);
        int skipped = 0;
        long last = Math.min(log.rotT.get(log.rotT.size() - 1),
                withPressure ? log.pressureT.get(log.pressureT.size() - 1) : Long.MAX_VALUE);
        for (int i = 0; i < log.acc.size() && log.accT.get(i)[0] <= last; i++) {
            long t = log.accT.get(i)[0];
            int rotation = Log.held(log.rotT, t);
            int pressure = withPressure ? Log.held(log.pressureT, t) : 0;
            if (rotation < 0 || pressure < 0) {
                skipped++;
                continue;
            }
            for (int c = 0; c < 3; c++) {
                row[RawSample.ACC + c] = log.acc.get(i)[c];
            }
            for (int c = 0; c < 4; c++) {
                row[RawSample.ROTVEC + c] = log.rot.get(rotation)[c];
            }
            if (withPressure) {
                row[RawSample.PRESSURE] = log.pressure.get(pressure)[0];
            }
            oracle.push(t, row);
        }
        return skipped;
    }

    /** The last counts {@code counts} published to a screen: {steps, stair steps}, kept up to date. */
    private static long[] published(StepCounts counts) {
        long[] published = new long[2];
        counts.addListener((steps, stairSteps) -> {
            published[0] = steps;
            published[1] = stairSteps;
        });
        return published;
    }

    @Test
    void replayedBatchedLogGivesThePipelinesCountsAndWindows() throws Exception {
        OrtStairClassifier classifier = new OrtStairClassifier(new byte[] {1, 2, 3}, "stairs.onnx");
        assertEquals(30.0, classifier.config().rateHz);
        StepCounts counts = new StepCounts();
        long[] published = published(counts);
        SensorStream stream = new SensorStream(classifier.config(), "rotvec", classifier, counts, 5_000_000);
        FakeSensorManager manager = new FakeSensorManager(true);
        stream.register(manager, new Handler(null));
        assertArrayEquals(new int[] {33_333, 5_000_000}, manager.registered.get(Sensor.TYPE_ACCELEROMETER));
        assertArrayEquals(new int[] {33_333, 5_000_000}, manager.registered.get(Sensor.TYPE_ROTATION_VECTOR));
        assertEquals(null, manager.registered.get(Sensor.TYPE_PRESSURE), "an accelerometer-only model never wakes it");

        Log log = new Log(7, 120);
        deliver(manager.listener, log, 5_000_000_000L);
        assertTrue(counts.stairSteps() > 0 && counts.floorsAscended() == -1 && MainActivity.floors(counts).isEmpty(),
                "an accelerometer-only model cannot tell up from down: no floors");
        List<float[]> fromGlue = new ArrayList<>(tensors);

        // Oracle: the rows the zero-order hold defines, straight into the core.
        tensors.clear();
        Pipeline.WindowClassifier direct = (samples, rows, cols) -> {
            float[] copy = java.util.Arrays.copyOf(samples, rows * cols);
            tensors.add(copy);
            return score(copy, new long[] {rows, cols}) >= 0f;
        };
        Pipeline oracle = new Pipeline(PipelineConfig.fromJson(CONFIG), "rotvec", 30, direct, null);
        int skipped = feedHeldRows(oracle, log, false);

        Pipeline glue = stream.pipeline();
        assertTrue(oracle.steps() > 150, "the log should have steps: " + oracle.steps());
        assertTrue(oracle.stairSteps() > 0 && oracle.stairSteps() < oracle.steps(), "both answers occur");
        assertEquals(oracle.steps(), glue.steps());
        assertEquals(oracle.stairSteps(), glue.stairSteps());
        assertEquals(oracle.samples(), glue.samples());
        assertEquals(skipped, stream.aligner().droppedBeforeRotation());
        assertEquals(0, stream.aligner().heldWithoutNewerRotation());
        assertEquals(tensors.size(), fromGlue.size());
        for (int k = 0; k < tensors.size(); k++) {
            assertArrayEquals(tensors.get(k), fromGlue.get(k), "window " + k);
        }
        assertArrayEquals(new long[] {glue.steps(), glue.stairSteps()}, published);
    }

    @Test
    void aModelTheCoreCannotRunIsRefusedAtLoad() {
        StubRuntime.inputShape = new long[] {-1, 6};
        ModelConfigException shape = assertThrows(ModelConfigException.class,
                () -> new OrtStairClassifier(new byte[0], "stairs.onnx"));
        assertTrue(shape.getMessage().contains("gives 3 columns"), shape.getMessage());
        StubRuntime.inputShape = new long[] {-1, 3};
        StubRuntime.customMetadata = metadata(CONFIG.replace("\"pattern\"", "\"sliding\""));
        ModelConfigException sliding = assertThrows(ModelConfigException.class,
                () -> new OrtStairClassifier(new byte[0], "stairs.onnx"));
        assertTrue(sliding.getMessage().startsWith("stairs.onnx: segmentation='sliding'"), sliding.getMessage());
    }

    @Test
    void aStepContextModelGetsEachKeptWindowsFeatures() throws Exception {
        StubRuntime.customMetadata = metadata(CONFIG.replace("}", ", \"step_context\": 5, \"step_context_gap_s\": 1.5}"));
        StubRuntime.stepContextShape = new long[] {1, 36};
        OrtStairClassifier classifier = new OrtStairClassifier(new byte[0], "stairs.onnx");
        assertEquals(5, classifier.config().stepContext);
        // Oracle: the double features the core computed for each kept window, read by a listener.
        List<float[]> computed = new ArrayList<>();
        Pipeline[] pipeline = new Pipeline[1];
        Pipeline.Listener listener = new Pipeline.Listener() {
            @Override
            public void onWindow(Window window, boolean stair) {
                if (window.kept()) {
                    double[] f = pipeline[0].stepContextFeatures();
                    float[] copy = new float[f.length];
                    for (int k = 0; k < f.length; k++) {
                        copy[k] = (float) f[k];
                    }
                    computed.add(copy);
                }
            }
        };
        pipeline[0] = new Pipeline(classifier.config(), "rotvec", 50, classifier, listener);
        double[] row = new double[RawSample.WIDTH];
        row[RawSample.ROTVEC + 3] = 1.0;  // identity rotation: device frame = ENU
        long t = 0;
        for (int i = 0; i < 50 * 60; i++) {
            double s = t / 1e9;
            boolean walking = (i / 500) % 3 != 2;  // 10 s walking, 10 s walking, 10 s still, ...
            row[RawSample.ACC] = 0.4 * Math.sin(2 * Math.PI * 0.9 * s);
            row[RawSample.ACC + 2] = 9.80665 + (walking ? 2.0 * Math.sin(2 * Math.PI * 1.8 * s) : 0.0);
            pipeline[0].push(t, row);
            t += 20_000_000L;
        }
        assertTrue(computed.size() > 50, "the stream should have steps: " + computed.size());
        assertEquals(computed.size(), StubRuntime.stepContexts.size());
        for (int k = 0; k < computed.size(); k++) {
            assertArrayEquals(computed.get(k), StubRuntime.stepContexts.get(k), "window " + k);
        }
    }

    @Test
    void aBarometerModelListensToThePressureSensorAndGetsEachKeptWindowsHeightFeatures() throws Exception {
        StubRuntime.customMetadata = metadata(BAROMETER);
        StubRuntime.stepContextShape = new long[] {1, 36};
        StubRuntime.heightShape = new long[] {1, HeightContext.N_FEATURES};
        OrtStairClassifier classifier = new OrtStairClassifier(new byte[0], "baro.onnx");
        assertEquals("with barometer", classifier.config().modelKind());
        StepCounts counts = new StepCounts();
        SensorStream stream = new SensorStream(classifier.config(), "rotvec", classifier, counts, 5_000_000);
        FakeSensorManager manager = new FakeSensorManager(true);
        stream.register(manager, new Handler(null));
        assertArrayEquals(new int[] {100_000, 5_000_000}, manager.registered.get(Sensor.TYPE_PRESSURE));  // 10 Hz
        Log log = new Log(8, 120);
        deliver(manager.listener, log, 5_000_000_000L);
        List<float[]> fromGlue = new ArrayList<>(StubRuntime.heights);

        // Oracle: the core fed the held rows directly; the height features it computed for each kept window.
        List<float[]> computed = new ArrayList<>();
        Pipeline[] oracle = new Pipeline[1];
        Pipeline.Listener listener = new Pipeline.Listener() {
            @Override
            public void onWindow(Window window, boolean stair) {
                if (window.kept()) {
                    double[] f = oracle[0].heightFeatures();
                    float[] copy = new float[f.length];
                    for (int k = 0; k < f.length; k++) {
                        copy[k] = (float) f[k];
                    }
                    computed.add(copy);
                }
            }
        };
        oracle[0] = new Pipeline(classifier.config(), "rotvec", 30, null, listener);
        int skipped = feedHeldRows(oracle[0], log, true);
        assertTrue(computed.size() > 150, "the log should have steps: " + computed.size());
        assertEquals(computed.size(), fromGlue.size());
        for (int k = 0; k < computed.size(); k++) {
            assertArrayEquals(computed.get(k), fromGlue.get(k), "window " + k);
        }
        assertEquals(computed.size(), StubRuntime.stepContexts.size());
        assertEquals(oracle[0].samples(), stream.pipeline().samples());
        assertTrue(skipped > 0, "the first accelerometer samples come before the first pressure reading");
        assertEquals(skipped, stream.aligner().droppedBeforeRotation() + stream.aligner().droppedBeforePressure());
        assertEquals(0, stream.aligner().heldWithoutNewerPressure());
        // The screen gets the core's climb: the log rises 12 m, and the stair steps the vote kept climbed some of it.
        ClimbCounter climb = stream.pipeline().climb();
        assertTrue(climb.floorsAscended() > 0, "climbed " + climb.climbedM() + " m");
        assertEquals(climb.floorsAscended(), counts.floorsAscended());
        assertEquals(climb.floorsDescended(), counts.floorsDescended());
        assertEquals(climb.floorsAscended() + " floors up, " + climb.floorsDescended() + " down\n",
                MainActivity.floors(counts));
    }

    @Test
    void batchesAreFlushedEveryHalfSecondOnlyWhileAScreenShowsTheCounts() {
        StepCounts counts = new StepCounts();
        SensorStream stream = new SensorStream(PipelineConfig.fromJson(CONFIG), "vertical", null, counts, 5_000_000);
        FakeSensorManager manager = new FakeSensorManager(true);
        Handler handler = new Handler(null);
        stream.register(manager, handler);
        assertEquals(List.of(500L), handler.delays);
        Runnable check = handler.posted.get(0);
        check.run();
        assertEquals(0, manager.flushes, "no screen shows the counts: the batches stay in the hub");
        assertEquals(2, handler.posted.size(), "the check comes again");
        StepCounts.Listener screen = (steps, stairSteps) -> { };
        counts.addListener(screen);
        check.run();
        check.run();
        assertEquals(2, manager.flushes, "a screen shows the counts: every check flushes");
        counts.removeListener(screen);
        check.run();
        assertEquals(2, manager.flushes);
        stream.unregister(manager);
        assertTrue(manager.registered.isEmpty());
        assertEquals(List.of(0L), handler.delays, "unregistering stops the checks and posts the vote's last decisions");

        Handler unbatched = new Handler(null);
        new SensorStream(PipelineConfig.fromJson(CONFIG), "vertical", null, counts, 0).register(manager, unbatched);
        assertTrue(unbatched.posted.isEmpty(), "events that come at once need no flush");
    }

    @Test
    void stoppingDecidesTheStepsWaitingForTheVoteOnTheSensorThread() throws Exception {
        StubRuntime.customMetadata = metadata(CONFIG.replace("}", ", \"vote_steps\": 3}"));
        OrtStairClassifier classifier = new OrtStairClassifier(new byte[0], "stairs.onnx");
        assertEquals(3, classifier.config().voteSteps);
        StepCounts counts = new StepCounts();
        long[] published = published(counts);
        SensorStream stream = new SensorStream(classifier.config(), "rotvec", classifier, counts, 5_000_000);
        FakeSensorManager manager = new FakeSensorManager(true);
        Handler handler = new Handler(null);
        stream.register(manager, handler);
        Log log = new Log(9, 60);
        deliver(manager.listener, log, 5_000_000_000L);

        // Oracle: the core fed the held rows directly, counting the vote's decisions.
        long[] decided = new long[1];
        Pipeline.Listener listener = new Pipeline.Listener() {
            @Override
            public void onStairDecision(long step, boolean stair) {
                decided[0]++;
            }
        };
        Pipeline oracle = new Pipeline(classifier.config(), "rotvec", 30,
                (samples, rows, cols) -> score(samples, new long[] {rows, cols}) >= 0f, listener);
        feedHeldRows(oracle, log, false);
        assertEquals(oracle.steps() - 1, decided[0], "the last step waits for the next one");
        assertArrayEquals(new long[] {oracle.steps(), oracle.stairSteps()}, published);

        stream.unregister(manager);
        assertArrayEquals(new long[] {oracle.steps(), oracle.stairSteps()}, published, "decided on the sensor thread");
        handler.posted.get(0).run();  // the sensor thread runs what was posted before it quits
        oracle.flush();
        assertEquals(oracle.steps(), decided[0]);
        assertArrayEquals(new long[] {oracle.steps(), oracle.stairSteps()}, published);
    }

    @Test
    void theOnsetFlagIsTheGraphsOnsetScoreWhenItHasOne() throws Exception {
        float[] window = new float[4 * 3];
        float[] scores = {-1f, 0f, 2f, -0.5f};
        OrtStairClassifier without = new OrtStairClassifier(new byte[0], "stairs.onnx");
        without.isStair(window, 4, 3);
        assertEquals(false, without.onset(), "a model without onset_score never reaches the onset");
        int[] call = {0};
        StubRuntime.onsetScorer = (data, shape) -> scores[call[0]++];
        OrtStairClassifier classifier = new OrtStairClassifier(new byte[0], "stairs.onnx");
        boolean[] onsets = new boolean[scores.length];
        for (int k = 0; k < scores.length; k++) {
            classifier.isStair(window, 4, 3);
            onsets[k] = classifier.onset();
        }
        assertArrayEquals(new boolean[] {false, false, true, false}, onsets, "onset_score > 0, the trees' rule");
    }

    @Test
    void aScoreOfZeroDecidesByTheGraphsStairOutputTheHeadsRule() throws Exception {
        float[] window = new float[4 * 3];
        StubRuntime.scorer = (data, shape) -> 0f;
        assertEquals(true, new OrtStairClassifier(new byte[0], "komd.onnx").isStair(window, 4, 3), "KOMD: f − θ ≥ 0");
        StubRuntime.treesHead = true;
        assertEquals(false, new OrtStairClassifier(new byte[0], "trees.onnx").isStair(window, 4, 3), "trees: score > 0");
    }

    @Test
    void theScreenIsToldWhichModelRuns() {
        StepCounts counts = new StepCounts();
        List<String> shown = new ArrayList<>();
        counts.addListener((steps, stairSteps) -> shown.add(counts.model()));
        counts.setModel("model " + PipelineConfig.fromJson(BAROMETER).modelKind());
        assertEquals(List.of("no model loaded", "model with barometer"), shown);
    }

    @Test
    void aBarometerModelOnAPhoneWithoutABarometerIsRefused() throws Exception {
        StubRuntime.customMetadata = metadata(BAROMETER);
        StubRuntime.stepContextShape = new long[] {1, 36};
        StubRuntime.heightShape = new long[] {1, HeightContext.N_FEATURES};
        OrtStairClassifier classifier = new OrtStairClassifier(new byte[0], "baro.onnx");
        SensorStream stream = new SensorStream(classifier.config(), "rotvec", classifier, new StepCounts(), 5_000_000);
        FakeSensorManager manager = new FakeSensorManager(false);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> stream.register(manager, new Handler(null)));
        assertTrue(e.getMessage().contains("no barometer (Sensor.TYPE_PRESSURE)")
                && e.getMessage().contains("accelerometer-only model"), e.getMessage());
        assertTrue(manager.registered.isEmpty(), "nothing is registered");
    }

    @Test
    void aBarometerModelMustDeclareTheHeightInputAndOnlyItMay() {
        StubRuntime.customMetadata = metadata(BAROMETER);
        StubRuntime.stepContextShape = new long[] {1, 36};
        ModelConfigException missing = assertThrows(ModelConfigException.class,
                () -> new OrtStairClassifier(new byte[0], "baro.onnx"));
        assertTrue(missing.getMessage().contains("barometer=true but the graph has no 'height' input"),
                missing.getMessage());
        StubRuntime.heightShape = new long[] {1, 4};
        ModelConfigException shape = assertThrows(ModelConfigException.class,
                () -> new OrtStairClassifier(new byte[0], "baro.onnx"));
        assertTrue(shape.getMessage().contains("input 'height' must be a float32 [1, 7] tensor"), shape.getMessage());
        StubRuntime.customMetadata = metadata(CONFIG.replace("}", ", \"step_context\": 5, \"step_context_gap_s\": 1.5}"));
        StubRuntime.heightShape = new long[] {1, HeightContext.N_FEATURES};
        ModelConfigException extra = assertThrows(ModelConfigException.class,
                () -> new OrtStairClassifier(new byte[0], "stairs.onnx"));
        assertTrue(extra.getMessage().contains("barometer=false but the graph has a 'height' input"), extra.getMessage());
    }

    @Test
    void aStepContextModelMustDeclareTheInputItsConfigurationNeeds() {
        StubRuntime.customMetadata = metadata(CONFIG.replace("}", ", \"step_context\": 5, \"step_context_gap_s\": 1.5}"));
        ModelConfigException missing = assertThrows(ModelConfigException.class,
                () -> new OrtStairClassifier(new byte[0], "stairs.onnx"));
        assertTrue(missing.getMessage().contains("step_context=5 but the graph has no 'step_context' input"),
                missing.getMessage());
        StubRuntime.customMetadata = metadata(CONFIG);  // an older record: step_context 0
        StubRuntime.stepContextShape = new long[] {1, 36};
        ModelConfigException extra = assertThrows(ModelConfigException.class,
                () -> new OrtStairClassifier(new byte[0], "stairs.onnx"));
        assertTrue(extra.getMessage().contains("step_context=0 but the graph has a 'step_context' input"),
                extra.getMessage());
    }
}

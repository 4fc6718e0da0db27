package org.stairsense.core;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The front-end configuration a model was trained with: mirrors {@code stream/_config.py}
 * ({@code PipelineConfig}), spec donini-easymkl-komd-climbtheworld-admm §3.2–§3.5.
 *
 * <p>A phone never builds one by hand: {@link ModelMetadata#configOf} reads it from the exported
 * model's {@code stairsense.config} metadata, so the front end always matches the classifier.
 * Every key Python writes must be present and no other: a model from a newer exporter with a key
 * this core does not know is refused rather than run with that key ignored. The one exception is
 * a key added later ({@link #RECORDED_BEFORE}): an older record without it meant its old value.
 */
public final class PipelineConfig {
    /** Smoothing buffer eviction (spec §3.3). */
    public enum Smoothing { TIME, COUNT, NONE }

    /** The keys of Python's {@code PipelineConfig.to_dict()}, in its field order. */
    static final List<String> KEYS = Arrays.asList(
            "rate_hz", "smoothing", "smooth_ms", "gravity_ms", "orientation", "segmentation",
            "peak_threshold", "valley_threshold", "hysteresis", "min_step_s", "max_step_s",
            "window_ms", "window_overlap", "max_gap_s", "step_context", "step_context_gap_s", "barometer",
            "vote_steps", "threshold_window_s", "threshold_floor");

    /**
     * Keys added after configurations were first recorded in model files, with the value that
     * reproduces what a record without them meant (Python's {@code _RECORDED_BEFORE}, read by
     * {@code PipelineConfig.from_record}; tests/test_android_parity.py compares the two):
     * a model exported before the step context took the 79 Table 12.1 features only, and one
     * exported before the height features read no barometer, and one exported before the
     * step vote decided every step alone, and one exported before adaptive thresholds took them in m/s².
     */
    static final Map<String, Object> RECORDED_BEFORE = Map.of("step_context", 0.0, "step_context_gap_s", 1.5,
            "barometer", false, "vote_steps", 1.0, "threshold_window_s", 0.0, "threshold_floor", 1.0);

    /**
     * Upper bounds, checked before anything is sized from them (Python's {@code _LIMITS}; the tests
     * compare the two): a model file's configuration is a claim like any other.
     */
    static final Map<String, Double> LIMITS = Map.of("rate_hz", 1000.0, "smooth_ms", 60000.0, "gravity_ms", 60000.0,
            "threshold_window_s", 60.0, "max_step_s", 60.0, "window_ms", 60000.0, "max_gap_s", 60.0,
            "step_context", 1000.0, "step_context_gap_s", 60.0, "vote_steps", 999.0);

    /** Orientation methods the Java core implements ({@code ahrs} needs the Madgwick filter, which it does not have). */
    static final List<String> ORIENTATIONS = Arrays.asList("auto", "rotvec", "vertical", "linear", "mizell");

    /** Resampling rate in Hz, or 0 for "keep the native rate" (Python's {@code None}). */
    public final double rateHz;
    public final Smoothing smoothing;
    public final double smoothMs;
    public final double gravityMs;
    /** One of {@code auto, rotvec, vertical, linear, mizell}. */
    public final String orientation;
    public final double peakThreshold;
    public final double valleyThreshold;
    public final double hysteresis;
    public final double minStepS;
    public final double maxStepS;
    public final double maxGapS;
    /** Kept steps in the step-context block (0: the model takes the Table 12.1 features only, no {@code step_context} input). */
    public final int stepContext;
    /** A longer pause (s) between kept windows starts a new step-context run. */
    public final double stepContextGapS;
    /**
     * The model reads the barometer: it takes the 7 height features ({@link HeightContext}, input
     * {@code height}), and every row needs the air pressure ({@link RawSample#PRESSURE}).
     */
    public final boolean barometer;
    /**
     * Kept windows each stair decision is the majority of, this one in the middle ({@link StepVote};
     * odd, 1 = every window decided alone).
     */
    public final int voteSteps;
    /**
     * Seconds of z whose RMS scales the three step thresholds ({@link StepSegmenter}); 0 = absolute
     * thresholds in m/s².
     */
    public final double thresholdWindowS;
    /** The smallest amplitude (m/s²) adaptive thresholds are scaled by. */
    public final double thresholdFloor;

    private PipelineConfig(Map<String, Object> recorded) {
        Map<String, Object> values = new java.util.HashMap<>(RECORDED_BEFORE);
        values.putAll(recorded);
        Set<String> unknown = new LinkedHashSet<>(values.keySet());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new ModelConfigException("the model's configuration has keys " + unknown + " that this Java core "
                    + "does not know (it knows " + KEYS + "); the model comes from a newer stairsense: update "
                    + "android_stub/core to that version");
        }
        Set<String> missing = new LinkedHashSet<>(KEYS);
        missing.removeAll(values.keySet());
        if (!missing.isEmpty()) {
            throw new ModelConfigException("the model's configuration lacks keys " + missing
                    + "; re-export the model with this stairsense version");
        }
        for (Map.Entry<String, Double> limit : LIMITS.entrySet()) {
            Object v = values.get(limit.getKey());
            if (v instanceof Double && (Double) v > limit.getValue()) {
                throw new ModelConfigException(limit.getKey() + " must be at most " + wholeOrDecimal(limit.getValue())
                        + ", got " + v);
            }
        }
        Object rate = values.get("rate_hz");
        rateHz = rate == null ? 0.0 : number(values, "rate_hz");
        smoothing = Smoothing.valueOf(choice(values, "smoothing", Arrays.asList("time", "count", "none")).toUpperCase());
        smoothMs = positive(values, "smooth_ms");
        gravityMs = positive(values, "gravity_ms");
        orientation = choice(values, "orientation", ORIENTATIONS);
        String segmentation = text(values, "segmentation");
        if (!segmentation.equals("pattern")) {
            throw new ModelConfigException("segmentation=" + quoted(segmentation) + ": the Java core implements only "
                    + "the step-pattern segmentation (spec §3.5); export a model trained with segmentation='pattern'");
        }
        peakThreshold = nonNegative(values, "peak_threshold");
        valleyThreshold = nonNegative(values, "valley_threshold");
        hysteresis = nonNegative(values, "hysteresis");
        minStepS = positive(values, "min_step_s");
        maxStepS = positive(values, "max_step_s");
        positive(values, "window_ms");
        double overlap = number(values, "window_overlap");
        maxGapS = positive(values, "max_gap_s");
        double context = nonNegative(values, "step_context");
        if (context != Math.rint(context)) {
            throw new ModelConfigException("step_context must be a whole number of steps, got " + context);
        }
        stepContext = (int) context;
        stepContextGapS = positive(values, "step_context_gap_s");
        Object baro = values.get("barometer");
        if (!(baro instanceof Boolean)) {
            throw new ModelConfigException("barometer must be true or false, got " + baro);
        }
        barometer = (Boolean) baro;
        if (barometer && stepContext < 1) {
            // Same rule as stream/_config.py: the height features are taken over the step context too.
            throw new ModelConfigException("barometer=true needs step_context >= 1 (the height features are taken "
                    + "over the step context), got " + stepContext);
        }
        double vote = number(values, "vote_steps");
        if (!(vote >= 1) || vote != Math.rint(vote) || vote % 2 == 0) {
            throw new ModelConfigException("vote_steps must be an odd whole number of steps >= 1 "
                    + "(1 = decide every step alone), got " + vote);
        }
        voteSteps = (int) vote;
        thresholdWindowS = nonNegative(values, "threshold_window_s");
        thresholdFloor = positive(values, "threshold_floor");
        if (rate != null && !(rateHz > 0)) {
            throw new ModelConfigException("rate_hz must be > 0 or null, got " + rateHz);
        }
        if (minStepS >= maxStepS) {
            throw new ModelConfigException("min_step_s < max_step_s is required, got " + minStepS + " and " + maxStepS);
        }
        if (!(overlap >= 0 && overlap < 1)) {
            throw new ModelConfigException("window_overlap must be in [0, 1), got " + overlap);
        }
        if (peakThreshold < hysteresis || valleyThreshold < hysteresis) {
            // Same rule as stream/_segment.py::_check_thresholds.
            throw new ModelConfigException("pattern segmentation needs peak_threshold and valley_threshold >= "
                    + "hysteresis (got " + peakThreshold + ", " + valleyThreshold + " and " + hysteresis + ")");
        }
    }

    /**
     * Which kind of stair-step model this configuration makes, in the words of Python's
     * {@code stairsense.pipeline.model_kind}: {@code "with barometer"} or {@code "accelerometer only"}.
     */
    public String modelKind() {
        return barometer ? "with barometer" : "accelerometer only";
    }

    /** Read the JSON object written by Python's {@code PipelineConfig.to_json()} / the export metadata. */
    public static PipelineConfig fromJson(String json) {
        return new PipelineConfig(Json.parseFlatObject(json));
    }

    /** Buffer lengths in ns as Python's {@code _ms}: {@code int(round(ms * 1e6))}, round half to even. */
    static long millisToNanos(double ms) {
        return (long) Math.rint(ms * 1e6);
    }

    /** Spans in ns as Python's {@code int(round(s * 1e9))}, round half to even. */
    static long secondsToNanos(double s) {
        return (long) Math.rint(s * 1e9);
    }

    /** A limit as Python's {@code f"{limit:g}"} prints it (every limit is below 1e6): 60000, not 60000.0. */
    static String wholeOrDecimal(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }

    private static String quoted(String s) {
        return "'" + s + "'";
    }

    private static double number(Map<String, Object> values, String key) {
        Object v = values.get(key);
        if (!(v instanceof Double)) {
            throw new ModelConfigException(key + " must be a number, got " + v);
        }
        return (Double) v;
    }

    private static double positive(Map<String, Object> values, String key) {
        double v = number(values, key);
        if (!(v > 0)) {
            throw new ModelConfigException(key + " must be > 0, got " + v);
        }
        return v;
    }

    private static double nonNegative(Map<String, Object> values, String key) {
        double v = number(values, key);
        if (!(v >= 0)) {
            throw new ModelConfigException(key + " must be >= 0, got " + v);
        }
        return v;
    }

    private static String text(Map<String, Object> values, String key) {
        Object v = values.get(key);
        if (!(v instanceof String)) {
            throw new ModelConfigException(key + " must be a string, got " + v);
        }
        return (String) v;
    }

    private static String choice(Map<String, Object> values, String key, List<String> allowed) {
        String v = text(values, key);
        if (!allowed.contains(v)) {
            String extra = key.equals("orientation") && v.equals("ahrs")
                    ? "; 'ahrs' needs the Madgwick filter, which the Java core does not implement" : "";
            throw new ModelConfigException(key + " must be one of " + allowed + ", got " + quoted(v) + extra);
        }
        return v;
    }
}

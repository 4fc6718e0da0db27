package org.stairsense.core;

/**
 * From standardized samples and kept windows to what the model reads of each window: mirrors
 * {@code features/_window_rows.py::WindowRowStage}. It holds the recent samples ({@link SampleTail}:
 * a window closing now may start up to {@code max_step_s} ago); when the configuration has
 * {@code step_context > 0}, the running {@link StepContext} with its sample period
 * {@code dt = 1 / rate_hz} (else 1 / the sensor rate requested); and when it has {@code barometer},
 * the {@link HeightFilter} over every standardized sample (its vertical acceleration and the air
 * pressure of the same row) and the running {@link HeightContext}.
 *
 * <p>{@link #close} is called for every kept window, classified or not, so the contexts see every
 * step as in Python; {@link #samples} then copies the window's float32 samples for the classifier.
 * Scratch arrays grow by doubling and are reused: steady state allocates nothing.
 */
public final class WindowRows {
    private final int columns;
    private final SampleTail tail;
    private final StepContext stepContext;  // null without step context
    private final HeightFilter heightFilter;  // null without barometer
    private final HeightContext heightContext;  // null without barometer
    private final double dt;
    private float[] samples = new float[0];
    // Two per-sample signals of the closing window: the step shape's (z, h), then the filter's (height, speed).
    private double[] a = new double[0];
    private double[] b = new double[0];
    private final float[] context = new float[StepContext.N_FEATURES];
    private final float[] height = new float[HeightContext.N_FEATURES];
    private double heightM = Double.NaN;

    /**
     * @param config the model's configuration
     * @param columns columns per standardized sample (3, or 6 for Mizell)
     * @param nativeRateHz the sensor rate requested (the step shape's rate without {@code rate_hz})
     */
    public WindowRows(PipelineConfig config, int columns, double nativeRateHz) {
        this.columns = columns;
        this.tail = new SampleTail(columns, config.maxStepS);
        this.stepContext = config.stepContext > 0 ? new StepContext(config.stepContext, config.stepContextGapS) : null;
        // Python's stage: the filter's defaults, and the front end's gap rule (a segment never has a longer step).
        this.heightFilter = config.barometer ? new HeightFilter(HeightFilter.DEFAULT_ACCELERATION_NOISE,
                HeightFilter.DEFAULT_PRESSURE_NOISE_HPA, HeightFilter.DEFAULT_PRESSURE_RATE_HZ, config.maxGapS) : null;
        this.heightContext = config.barometer ? new HeightContext(config.stepContext, config.stepContextGapS) : null;
        this.dt = 1.0 / (config.rateHz > 0 ? config.rateHz : nativeRateHz);
    }

    /** A new stream (the front end restarted after a gap): the tail empties, the contexts and the heights restart. */
    public void reset() {
        tail.reset();
        if (stepContext != null) {
            stepContext.reset();
        }
        if (heightFilter != null) {
            heightFilter.reset();
            heightContext.reset();
        }
    }

    /**
     * Standardized sample number {@code first + size} of the stream, its vertical acceleration and
     * the air pressure (hPa) of its row, which only a configuration with {@code barometer} reads.
     */
    public void add(long tNs, double[] sample, double verticalAcc, double pressureHpa) {
        if (heightFilter == null) {
            tail.add(tNs, sample, verticalAcc, Double.NaN, Double.NaN);
            return;
        }
        heightFilter.push(tNs, verticalAcc, pressureHpa);
        tail.add(tNs, sample, verticalAcc, heightFilter.height, heightFilter.speed);
    }

    /** A kept window closed: its step-context and height features are computed (when configured). */
    public void close(Window window) {
        if (stepContext == null && heightContext == null) {
            return;
        }
        int rows = (int) (window.stop - window.start);
        if (a.length < rows) {
            a = new double[rows * 2];
            b = new double[rows * 2];
        }
        if (stepContext != null) {
            tail.stepSignals(window.start, window.stop, a, b);
            toFloat(stepContext.push(a, b, rows, dt, window.tStartNs, window.tEndNs), context);
        }
        if (heightContext != null) {
            tail.heights(window.start, window.stop, a, b);
            toFloat(heightContext.push(a, b, rows, window.tStartNs, window.tEndNs), height);
            heightM = a[rows - 1];
        }
    }

    private static void toFloat(double[] from, float[] to) {
        for (int k = 0; k < to.length; k++) {
            to[k] = (float) from[k];
        }
    }

    /**
     * The window's standardized samples as float32, row-major {@code [rows, columns]} (the exported
     * model's {@code samples} input); reused, valid until the next call.
     */
    public float[] samples(Window window) {
        int n = (int) (window.stop - window.start) * columns;
        if (samples.length < n) {
            samples = new float[n * 2];
        }
        tail.copy(window.start, window.stop, samples);
        return samples;
    }

    /** The float32 step-context features of the last closed window, or null without step context; reused. */
    public float[] stepContext() {
        return stepContext == null ? null : context;
    }

    /** The same features in double, or null without step context; reused. */
    public double[] stepContextFeatures() {
        return stepContext == null ? null : stepContext.features;
    }

    /** The float32 height features of the last closed window, or null without barometer; reused. */
    public float[] height() {
        return heightContext == null ? null : height;
    }

    /** The same features in double, or null without barometer; reused. */
    public double[] heightFeatures() {
        return heightContext == null ? null : heightContext.features;
    }

    /**
     * The height filter's height (m) at the last closed window's last sample, the level its climbs
     * are measured between (replay's {@code WindowRows.height_m}); NaN without barometer.
     */
    public double heightM() {
        return heightM;
    }
}

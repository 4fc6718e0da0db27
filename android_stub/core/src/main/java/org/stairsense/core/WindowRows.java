package org.stairsense.core;

/**
 * From standardized samples and kept windows to what the model reads of each window: mirrors
 * {@code features/_window_rows.py::WindowRowStage}. It holds the recent samples ({@link SampleTail}:
 * a window closing now may start up to {@code max_step_s} ago) and, when the configuration has
 * {@code step_context > 0}, the running {@link StepContext} with its sample period
 * {@code dt = 1 / rate_hz} (else 1 / the sensor rate requested).
 *
 * <p>{@link #close} is called for every kept window, classified or not, so the context sees every
 * step as in Python; {@link #samples} then copies the window's float32 samples for the classifier.
 * Scratch arrays grow by doubling and are reused: steady state allocates nothing.
 */
public final class WindowRows {
    private final int columns;
    private final SampleTail tail;
    private final StepContext stepContext;  // null without step context
    private final double dt;
    private float[] samples = new float[0];
    private double[] z = new double[0];
    private double[] h = new double[0];
    private final float[] context = new float[StepContext.N_FEATURES];

    /**
     * @param config the model's configuration
     * @param columns columns per standardized sample (3, or 6 for Mizell)
     * @param nativeRateHz the sensor rate requested (the step shape's rate without {@code rate_hz})
     */
    public WindowRows(PipelineConfig config, int columns, double nativeRateHz) {
        this.columns = columns;
        this.tail = new SampleTail(columns, config.maxStepS);
        this.stepContext = config.stepContext > 0 ? new StepContext(config.stepContext, config.stepContextGapS) : null;
        this.dt = 1.0 / (config.rateHz > 0 ? config.rateHz : nativeRateHz);
    }

    /** A new stream (the front end restarted after a gap): the tail empties and the context restarts. */
    public void reset() {
        tail.reset();
        if (stepContext != null) {
            stepContext.reset();
        }
    }

    /** Standardized sample number {@code first + size} of the stream and its vertical acceleration. */
    public void add(long tNs, double[] sample, double verticalAcc) {
        tail.add(tNs, sample, verticalAcc);
    }

    /** A kept window closed: its step-context features are computed (when configured). */
    public void close(Window window) {
        if (stepContext == null) {
            return;
        }
        int rows = (int) (window.stop - window.start);
        if (z.length < rows) {
            z = new double[rows * 2];
            h = new double[rows * 2];
        }
        tail.stepSignals(window.start, window.stop, z, h);
        double[] features = stepContext.push(z, h, rows, dt, window.tStartNs, window.tEndNs);
        for (int k = 0; k < features.length; k++) {
            context[k] = (float) features[k];
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
}

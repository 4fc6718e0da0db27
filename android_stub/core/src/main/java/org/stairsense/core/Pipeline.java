package org.stairsense.core;

/**
 * What a phone runs per sensor sample: resampling to the model's rate, the front end, the step
 * counter, the stair-step classifier on every kept window and the vote over its neighbours'
 * answers. Mirrors {@code stairsense/pipeline.py::replay} with {@code repair=("split-gaps",)}: a
 * gap longer than {@code max_gap_s} restarts the front end (the buffers would otherwise mix data
 * from before and after it), as the Python reader splits a log at its gaps.
 *
 * <p>The step count is the number of kept windows (spec §3.5: one step per window), and needs no
 * model. With a {@link WindowClassifier}, every kept window's standardized samples are handed to it
 * as float32 {@code [rows, columns]}, the exported model's input; rejected windows are never
 * classified (they are NO_STAIR by the duration filter, which saves the energy). When the model's
 * configuration has {@code step_context > 0}, every kept window also gets its 36 step-context
 * features (float32 {@code [1, 36]}: the model's input {@code step_context}); when it has
 * {@code barometer}, its 7 height features (float32 {@code [1, 7]}: the input {@code height}), from
 * the air pressure every row must then carry ({@link RawSample#PRESSURE}; a row without one is
 * refused). All come from {@link WindowRows}, which restarts with the front end after a gap. A
 * model without {@code barometer} ignores the pressure.
 *
 * <p>A stair step is a kept window whose decision, voted over {@code vote_steps} consecutive kept
 * windows of its run ({@link StepVote}), is STAIR: {@link #stairSteps} counts those, as replay's
 * {@code stair_steps} does. A decision waits for the {@code vote_steps / 2} kept windows after it,
 * or for its run to end: replay decides the waiting windows at each segment's end and at the end of
 * the log, the pipeline at a restart after a gap and at {@link #flush} (the sensor stream stopped).
 * With {@code vote_steps = 1} every window is decided as it closes. A window the classifier says
 * reaches the model's flight-onset threshold ({@link WindowClassifier#onset}) is also STAIR when the
 * next window of its run is STAIR before the vote (with {@code vote_steps >= 3}; {@link StepVote}).
 *
 * <p>A model that reads the barometer also counts stair steps up and down, metres and floors from
 * the voted decisions ({@link ClimbCounter}, fed each decided window's height features as replay
 * feeds its climb counter); {@link #climb} reads them.
 *
 * <p>Not thread-safe: call {@link #push} and {@link #flush} from one thread (the sensor thread).
 */
public final class Pipeline {
    /** Scores one window; the Android glue implements it with an ONNX Runtime session. */
    public interface WindowClassifier {
        /**
         * @param samples float32 standardized samples, row-major; only the first {@code rows * columns} are the window
         * @return true when the window is a stair step
         */
        boolean isStair(float[] samples, int rows, int columns);

        /**
         * The same window with its step-context features, for models whose configuration has
         * {@code step_context > 0}; a classifier of such a model must override this method.
         *
         * @param stepContext the {@link StepContext#N_FEATURES} float32 features, or null when the model has none
         */
        default boolean isStair(float[] samples, int rows, int columns, float[] stepContext) {
            return isStair(samples, rows, columns);
        }

        /**
         * The same window with its step-context and height features, for models whose configuration
         * has {@code barometer}; a classifier of such a model must override this method.
         *
         * @param height the {@link HeightContext#N_FEATURES} float32 features, or null when the model has none
         */
        default boolean isStair(float[] samples, int rows, int columns, float[] stepContext, float[] height) {
            return isStair(samples, rows, columns, stepContext);
        }

        /**
         * Whether the window the last {@code isStair} call classified reaches the model's flight-onset
         * threshold (a model exported with one; see {@link StepVote}).
         */
        default boolean onset() {
            return false;
        }
    }

    /** Optional observer of everything the pipeline produces (all methods default to nothing). */
    public interface Listener {
        /** The front end restarted at {@code tNs} after a gap; window indices start again at 0. */
        default void onRestart(long tNs) {
        }

        /** Standardized sample number {@code index} (since the last restart). */
        default void onSample(long index, long tNs, double[] sample, double vertical) {
        }

        /**
         * A window closed; {@code stair} is the classifier's own answer for it, before the vote
         * (false when rejected or without a classifier). What is counted is {@link #onStairDecision}.
         */
        default void onWindow(Window window, boolean stair) {
        }

        /**
         * The voted decision of kept window number {@code step} (0 = the first kept window since the
         * pipeline was made, as {@link Pipeline#steps} counts them), in order; only with a classifier.
         * It comes when the vote decides the window: a few windows after its {@link #onWindow}, at a
         * restart (before {@link #onRestart}) or at {@link Pipeline#flush}.
         */
        default void onStairDecision(long step, boolean stair) {
        }
    }

    private final PipelineConfig config;
    private final FrontEnd frontEnd;
    private final Resampler resampler;  // null without rate_hz
    private final WindowRows rows;
    private final WindowClassifier classifier;
    private final StepVote vote;
    private final ClimbCounter climb;  // null without barometer
    // Per kept window until the vote decides it (at most vote_steps wait): what the climb counter reads.
    private final double[] waitingChangeM;
    private final double[] waitingHeightM;
    private final long[] waitingStartNs;
    private final long[] waitingEndNs;
    private final Listener listener;
    private final double maxGapNs;
    private final int columns;

    private boolean started;
    private long lastT;
    private long samples;
    private long segments;
    private long steps;
    private long stairSteps;
    private long decidedSteps;  // kept windows the vote has decided
    private long votedSteps;  // kept windows handed to the vote
    private final long[] byStatus = new long[WindowStatus.values().length];

    /**
     * @param config the model's configuration ({@link ModelMetadata#configOf})
     * @param method the concrete orientation method ({@link Standardizer#resolveOrientation})
     * @param nativeRateHz the sensor rate requested; without {@code rate_hz}, the rate of {@code smoothing='count'}
     *     and the sample period of the step-context features
     * @param classifier scores kept windows, or null to count steps only
     * @param listener observer, or null
     */
    public Pipeline(PipelineConfig config, String method, double nativeRateHz, WindowClassifier classifier, Listener listener) {
        this.config = config;
        this.frontEnd = new FrontEnd(config, method, nativeRateHz);
        this.resampler = config.rateHz > 0 ? new Resampler(config.rateHz) : null;
        this.columns = frontEnd.standardizer().columns();
        this.rows = new WindowRows(config, columns, nativeRateHz);
        this.classifier = classifier;
        this.vote = new StepVote(config.voteSteps, config.stepContextGapS);
        this.climb = config.barometer ? new ClimbCounter(config.stepContext, config.stepContextGapS) : null;
        int waiting = climb == null ? 0 : config.voteSteps;
        this.waitingChangeM = new double[waiting];
        this.waitingHeightM = new double[waiting];
        this.waitingStartNs = new long[waiting];
        this.waitingEndNs = new long[waiting];
        this.listener = listener;
        this.maxGapNs = config.maxGapS * 1e9;
    }

    /**
     * Consume one sensor sample (layout {@link RawSample}).
     *
     * @throws IllegalArgumentException when {@code tNs} does not increase, or when the model reads the
     *     barometer and the row has no air pressure (NaN) or one no barometer gives; nothing has changed then
     */
    public void push(long tNs, double[] raw) {
        if (config.barometer) {
            checkPressure(tNs, raw[RawSample.PRESSURE]);
        }
        if (started) {
            if (tNs <= lastT) {
                throw new IllegalArgumentException("timestamps must increase: t_ns=" + tNs + " after " + lastT);
            }
            if (tNs - lastT > maxGapNs) {
                restart(tNs);
            }
        } else {
            started = true;
            segments = 1;
        }
        lastT = tNs;
        samples++;
        if (resampler == null) {
            step(tNs, raw);
            return;
        }
        resampler.offer(tNs, raw);
        while (resampler.poll()) {
            step(resampler.tNs, resampler.row);
        }
    }

    private static void checkPressure(long tNs, double p) {
        if (Double.isNaN(p)) {
            throw new IllegalArgumentException("the model reads the barometer (barometer=true: height features) but "
                    + "the sample at t_ns=" + tNs + " has no air pressure; put the barometer's latest reading (hPa) "
                    + "in RawSample.PRESSURE of every row, or run an accelerometer-only model (barometer=false) on a "
                    + "phone without a barometer");
        }
        if (!(p >= HeightFilter.MIN_PRESSURE_HPA && p <= HeightFilter.MAX_PRESSURE_HPA)) {
            throw new IllegalArgumentException("pressure at t_ns=" + tNs + " is " + p + " hPa; a barometer reads "
                    + "300–1100 hPa (convert Pa by dividing by 100)");
        }
    }

    private void restart(long tNs) {
        count(vote.flush());  // the old segment's runs ended with it, as replay's segments do
        if (climb != null) {
            climb.newSegment();
        }
        frontEnd.reset();
        rows.reset();
        if (resampler != null) {
            resampler.reset();
        }
        segments++;
        if (listener != null) {
            listener.onRestart(tNs);
        }
    }

    private void step(long tNs, double[] raw) {
        Window window = frontEnd.push(tNs, raw);
        if (!frontEnd.produced()) {
            return;
        }
        Standardizer std = frontEnd.standardizer();
        rows.add(tNs, std.sample, std.verticalAcc, raw[RawSample.PRESSURE]);
        if (listener != null) {
            listener.onSample(frontEnd.standardizedCount() - 1, tNs, std.sample, std.verticalAcc);
        }
        if (window == null) {
            return;
        }
        byStatus[window.status.ordinal()]++;
        boolean stair = false;
        boolean onset = false;
        if (window.kept()) {
            steps++;
            rows.close(window);  // every kept window enters the contexts, classified or not
            if (classifier != null) {
                int n = (int) (window.stop - window.start);
                stair = classifier.isStair(rows.samples(window), n, columns, rows.stepContext(), rows.height());
                onset = classifier.onset();
            }
        }
        if (listener != null) {
            listener.onWindow(window, stair);
        }
        if (window.kept() && classifier != null) {
            if (climb != null) {
                int slot = (int) (votedSteps % waitingHeightM.length);
                waitingChangeM[slot] = rows.heightFeatures()[HeightContext.N_FEATURES - 1];  // ctx_height_change_m
                waitingHeightM[slot] = rows.heightM();
                waitingStartNs[slot] = window.tStartNs();
                waitingEndNs[slot] = window.tEndNs();
            }
            votedSteps++;
            count(vote.push(stair, onset, window.tStartNs(), window.tEndNs()));
        }
    }

    /** Counts the {@code n} windows the vote just decided. */
    private void count(int n) {
        for (int k = 0; k < n; k++) {
            boolean stair = vote.decided(k);
            if (stair) {
                stairSteps++;
            }
            if (climb != null) {
                int slot = (int) (decidedSteps % waitingHeightM.length);
                climb.push(stair, waitingChangeM[slot], waitingHeightM[slot], waitingStartNs[slot], waitingEndNs[slot]);
            }
            if (listener != null) {
                listener.onStairDecision(decidedSteps, stair);
            }
            decidedSteps++;
        }
    }

    /**
     * Decide the kept windows still waiting for the vote's later neighbours (at most
     * {@code vote_steps / 2}): call it when the sensor stream stops, then read {@link #stairSteps}.
     * Their run ends here, as replay's does at the end of the log; samples pushed afterwards start a
     * new one.
     */
    public void flush() {
        count(vote.flush());
    }

    /**
     * The step-context features (double) of the last kept window, or null when the model takes none;
     * reused, valid until the next kept window.
     */
    public double[] stepContextFeatures() {
        return rows.stepContextFeatures();
    }

    /**
     * The height features (double) of the last kept window, or null when the model reads no
     * barometer; reused, valid until the next kept window.
     */
    public double[] heightFeatures() {
        return rows.heightFeatures();
    }

    /** Steps counted: kept windows, each one step (works without a model). */
    public long steps() {
        return steps;
    }

    /**
     * Kept windows decided STAIR by the vote over the classifier's answers ({@code vote_steps}); the
     * last {@code vote_steps / 2} kept windows are not decided until later windows close or {@link #flush}.
     */
    public long stairSteps() {
        return stairSteps;
    }

    /**
     * Stair steps up and down, metres and floors of the decided windows, or null when the model
     * reads no barometer (an accelerometer cannot tell up from down).
     */
    public ClimbCounter climb() {
        return climb;
    }

    /** Windows closed with this status (KEPT, or the duration filter's reason). */
    public long windows(WindowStatus status) {
        return byStatus[status.ordinal()];
    }

    /** Sensor samples consumed. */
    public long samples() {
        return samples;
    }

    /** Gap-free stretches seen: 1 + the number of restarts after gaps. */
    public long segments() {
        return segments;
    }

    /** Columns per standardized sample (the model input's second dimension). */
    public int columns() {
        return columns;
    }

    public PipelineConfig config() {
        return config;
    }
}

package org.stairsense.core;

/**
 * The 7 height features of a kept window, from the {@link HeightFilter}'s height {@code h} and
 * vertical speed {@code v} at its samples: mirrors {@code features/_height_features.py}
 * ({@code HEIGHT_NAMES}, {@code LONG_STEPS}, {@code HeightContext.push}), whose docstring says why
 * each is there. The exported model takes them as its input {@code height} when its configuration
 * has {@code barometer}.
 *
 * <p>In order: |h at the window's last sample − h at its first|; |mean of v over the window|;
 * |mean of v over every sample of the block's windows|; |the block's height change| / its number
 * of windows; the same two over the long block; the block's height change, signed: h at this
 * window's last sample minus h at the first sample of the block's oldest window. The block is the
 * step context's (this window and up to {@code context − 1} before it), the long block the last
 * {@link #LONG_STEPS} windows of the same run ({@link StepRun}: a run is broken by a pause longer
 * than {@code max_gap_s}).
 *
 * <p>All arithmetic is double, in the order of the Python code, except that sums run left to right
 * where numpy sums pairwise (within 1e-15 relative). Nothing is allocated per window.
 */
public final class HeightContext {
    /** Features per window. */
    public static final int N_FEATURES = 7;
    /** Kept windows in the long block, this one included (Python's {@code LONG_STEPS}). */
    public static final int LONG_STEPS = 20;

    private final StepRun run;  // both blocks: the ring holds the longer
    private final int context;
    // Per ring slot (the run's): h at the window's first sample, the sum of v over it, its samples.
    private final double[] firstHeight;
    private final double[] speedSum;
    private final int[] samples;
    /** The features of the last {@link #push} (reused: copy what you keep). */
    public final double[] features = new double[N_FEATURES];

    /**
     * @param context kept steps in the block (this one included), {@code step_context}
     * @param maxGapS a longer pause between kept windows starts a new run, {@code step_context_gap_s}
     */
    public HeightContext(int context, double maxGapS) {
        if (context < 1) {
            throw new IllegalArgumentException("context must be >= 1, got " + context);
        }
        this.context = context;
        this.run = new StepRun(Math.max(context, LONG_STEPS), maxGapS);
        this.firstHeight = new double[run.size()];
        this.speedSum = new double[run.size()];
        this.samples = new int[run.size()];
    }

    /** Forget the run: the next window starts a new block (a new segment after a sensor gap). */
    public void reset() {
        run.reset();
    }

    /**
     * The features of the kept window that just closed.
     *
     * @param height the filter's height (m) at the window's samples, first {@code n} entries
     * @param speed the filter's vertical speed (m/s) at the same samples
     * @param n samples in the window (at least 1)
     * @return {@link #features}
     */
    public double[] push(double[] height, double[] speed, int n, long tStartNs, long tEndNs) {
        if (n < 1) {
            throw new IllegalArgumentException("HeightContext needs a window of at least one sample, got " + n);
        }
        double first = height[0];
        double last = height[n - 1];
        double sum = 0.0;
        for (int i = 0; i < n; i++) {
            sum += speed[i];
        }
        int slot = run.push(tStartNs, tEndNs);
        firstHeight[slot] = first;
        speedSum[slot] = sum;
        samples[slot] = n;
        int held = run.held();
        int ctxHeld = Math.min(held, context);
        double change = last - firstHeight[run.slot(held - ctxHeld)];
        features[0] = Math.abs(last - first);
        features[1] = Math.abs(sum / n);
        features[2] = Math.abs(blockSpeed(held - ctxHeld, held));
        features[3] = Math.abs(change) / ctxHeld;
        int longHeld = Math.min(held, LONG_STEPS);
        features[4] = Math.abs(blockSpeed(held - longHeld, held));
        features[5] = Math.abs(last - firstHeight[run.slot(held - longHeld)]) / longHeld;
        features[6] = change;
        return features;
    }

    /** The mean vertical speed over every sample of the run's windows {@code from} … {@code to − 1}, oldest first. */
    private double blockSpeed(int from, int to) {
        double blockSum = 0.0;
        long blockSamples = 0;
        for (int r = from; r < to; r++) {
            blockSum += speedSum[run.slot(r)];
            blockSamples += samples[run.slot(r)];
        }
        return blockSum / blockSamples;
    }
}

package org.stairsense.core;

/**
 * The 5 height features of a kept window, from the {@link HeightFilter}'s height {@code h} and
 * vertical speed {@code v} at its samples: mirrors {@code features/_height_features.py}
 * ({@code HEIGHT_NAMES}, {@code HeightContext.push}), whose docstring says why each is there. The
 * exported model takes them as its input {@code height} when its configuration has {@code barometer}.
 *
 * <p>In order: |h at the window's last sample − h at its first|; |mean of v over the window|;
 * |mean of v over every sample of the block's windows|; |the block's height change| / its number
 * of windows; the block's height change, signed: h at this window's last sample minus h at the
 * first sample of the block's oldest window. The block is the step context's ({@link StepRun}:
 * this window and up to {@code context − 1} before it, a run broken by a pause longer than
 * {@code max_gap_s}).
 *
 * <p>All arithmetic is double, in the order of the Python code, except that sums run left to right
 * where numpy sums pairwise (within 1e-15 relative). Nothing is allocated per window.
 */
public final class HeightContext {
    /** Features per window. */
    public static final int N_FEATURES = 5;

    private final StepRun run;
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
        this.run = new StepRun(context, maxGapS);
        this.firstHeight = new double[context];
        this.speedSum = new double[context];
        this.samples = new int[context];
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
        double change = last - firstHeight[run.slot(0)];
        double blockSum = 0.0;
        long blockSamples = 0;
        for (int r = 0; r < held; r++) {
            blockSum += speedSum[run.slot(r)];
            blockSamples += samples[run.slot(r)];
        }
        features[0] = Math.abs(last - first);
        features[1] = Math.abs(sum / n);
        features[2] = Math.abs(blockSum / blockSamples);
        features[3] = Math.abs(change) / held;
        features[4] = change;
        return features;
    }
}

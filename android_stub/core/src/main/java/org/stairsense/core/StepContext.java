package org.stairsense.core;

/**
 * The 36 step-context features of a kept window: the shape of the step (19) and a causal context
 * over the last kept steps (17). Mirrors {@code features/_step_context.py} ({@code step_shape} and
 * {@code StepContext.push}); the exported model takes them as its second input {@code step_context}
 * when its configuration has {@code step_context > 0}.
 *
 * <p>Per window the shape reads two signals per standardized sample: {@code z}, the vertical
 * dynamic acceleration (the standardizer's vertical: column 2 for the ENU methods, Mizell's signed
 * vertical scalar), and {@code h}, the horizontal magnitude ({@code hypot(x, y)}, or the norm of
 * Mizell's horizontal vector). A context run ({@link StepRun}) holds the shape rows of the kept
 * windows since the last gap longer than {@code max_gap_s} between one window's end and the next
 * one's start (or since {@link #reset}); the context features are the mean, the coefficient of
 * variation and the count of the last {@code context} rows of the run, this one included.
 *
 * <p>All arithmetic is double, in the order of the Python code. Scratch arrays grow by doubling and
 * are reused, so steady state allocates nothing per window.
 */
public final class StepContext {
    /** Shape features per window. */
    public static final int N_SHAPE = 19;
    /** Shape columns whose context is taken: step_duration_s, step_z_std, step_z_range, h_over_z_std, dz_range,
     * step_z_skew, dz_range_norm, step_z_argmax (Python's {@code STEP_CONTEXT_OF}). */
    static final int[] CONTEXT_OF = {0, 6, 7, 13, 15, 1, 17, 3};
    /** Features per window: the shape, the context means, the context CVs, the number of context rows. */
    public static final int N_FEATURES = N_SHAPE + 2 * CONTEXT_OF.length + 1;

    private static final double STD_EPS = 1e-9;
    private static final double CV_EPS = 1e-6;

    private final StepRun run;
    private final double[] rows;  // ring of the run's last `context` shape rows, at the run's slots
    private double[] v = new double[64];
    private double[] d = new double[64];
    private final double[] shapeRow = new double[N_SHAPE];
    /** The features of the last {@link #push} (reused: copy what you keep). */
    public final double[] features = new double[N_FEATURES];

    /**
     * @param context kept steps in the context block (this one included), {@code step_context}
     * @param maxGapS a longer pause between kept windows starts a new run, {@code step_context_gap_s}
     */
    public StepContext(int context, double maxGapS) {
        this.run = new StepRun(context, maxGapS);
        this.rows = new double[context * N_SHAPE];
    }

    /** Forget the run: the next window starts a new context (a new segment after a sensor gap). */
    public void reset() {
        run.reset();
    }

    /**
     * The features of the kept window that just closed.
     *
     * @param z vertical dynamic acceleration of the window's samples, first {@code n} entries
     * @param h horizontal magnitude of the same samples
     * @param n samples in the window (at least 1)
     * @param dt seconds per standardized sample, 1 / rate
     * @return {@link #features}
     */
    public double[] push(double[] z, double[] h, int n, double dt, long tStartNs, long tEndNs) {
        shape(z, h, n, dt, shapeRow);
        return pushShape(shapeRow, tStartNs, tEndNs);
    }

    /** As {@link #push}, from a shape row computed elsewhere ({@link #shape}). */
    public double[] pushShape(double[] shape, long tStartNs, long tEndNs) {
        System.arraycopy(shape, 0, rows, run.push(tStartNs, tEndNs) * N_SHAPE, N_SHAPE);
        int held = run.held();
        System.arraycopy(shape, 0, features, 0, N_SHAPE);
        int m = CONTEXT_OF.length;
        for (int k = 0; k < m; k++) {
            int c = CONTEXT_OF[k];
            // numpy's mean and std (ddof 0) over axis 0 of the block, oldest row first.
            double sum = 0.0;
            for (int r = 0; r < held; r++) {
                sum += rows[run.slot(r) * N_SHAPE + c];
            }
            double mean = sum / held;
            double sq = 0.0;
            for (int r = 0; r < held; r++) {
                double dev = rows[run.slot(r) * N_SHAPE + c] - mean;
                sq += dev * dev;
            }
            features[N_SHAPE + k] = mean;
            features[N_SHAPE + m + k] = Math.sqrt(sq / held) / (Math.abs(mean) + CV_EPS);
        }
        features[N_FEATURES - 1] = held;
        return features;
    }

    /**
     * The 19 shape features of one window into {@code out}, in the order of {@code STEP_SHAPE_NAMES}.
     */
    public void shape(double[] z, double[] h, int n, double dt, double[] out) {
        if (v.length < n) {
            v = new double[2 * n];
            d = new double[2 * n];
        }
        double zMean = mean(z, n);
        double sd = std(z, n, zMean) + STD_EPS;
        double skew = 0.0;
        double kurt = 0.0;
        double zMax = z[0];
        double zMin = z[0];
        int argMax = 0;
        int argMin = 0;
        int positive = 0;
        for (int i = 0; i < n; i++) {
            double zc = (z[i] - zMean) / sd;
            double zc2 = zc * zc;
            skew += zc2 * zc;
            kurt += zc2 * zc2;
            if (z[i] > zMax) {
                zMax = z[i];
                argMax = i;
            }
            if (z[i] < zMin) {
                zMin = z[i];
                argMin = i;
            }
            if (z[i] > 0) {
                positive++;
            }
        }
        // Vertical velocity and position inside the step, v(start) = 0, trapezoid rule.
        double halfDt = 0.5 * dt;
        v[0] = 0.0;
        d[0] = 0.0;
        for (int i = 1; i < n; i++) {
            v[i] = v[i - 1] + (z[i] + z[i - 1]) * halfDt;
        }
        for (int i = 1; i < n; i++) {
            d[i] = d[i - 1] + (v[i] + v[i - 1]) * halfDt;
        }
        double excursion = n > 2 ? detrendedRange(d, n, dt) : 0.0;  // a line through <= 2 points fits them
        double hMean = mean(h, n);
        double hs = std(h, n, hMean) + STD_EPS;
        double hMax = h[0];
        double hMin = h[0];
        double cross = 0.0;
        for (int i = 0; i < n; i++) {
            hMax = Math.max(hMax, h[i]);
            hMin = Math.min(hMin, h[i]);
            cross += (z[i] - zMean) * (h[i] - hMean);
        }
        double duration = n * dt;
        out[0] = duration;
        out[1] = skew / n;
        out[2] = kurt / n;
        out[3] = (double) argMax / n;
        out[4] = (double) argMin / n;
        out[5] = (double) positive / n;
        out[6] = sd;
        out[7] = zMax - zMin;
        out[8] = zMax;
        out[9] = zMin;
        out[10] = hMean;
        out[11] = hs;
        out[12] = hMax - hMin;
        out[13] = hs / sd;
        out[14] = cross / n / (sd * hs);
        out[15] = excursion;
        out[16] = d[n - 1];
        out[17] = excursion / (sd * (duration * duration) + 1e-9);
        out[18] = range(v, n);
    }

    /** Range of d minus its least-squares line over t = i·dt (the trajectory relative to constant velocity). */
    private static double detrendedRange(double[] d, int n, double dt) {
        double tMean = 0.0;
        double dMean = mean(d, n);
        for (int i = 0; i < n; i++) {
            tMean += i * dt;
        }
        tMean /= n;
        double stt = 0.0;
        double std = 0.0;
        for (int i = 0; i < n; i++) {
            double tc = i * dt - tMean;
            stt += tc * tc;
            std += tc * (d[i] - dMean);
        }
        double slope = std / stt;
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            double r = d[i] - (dMean + slope * (i * dt - tMean));
            lo = Math.min(lo, r);
            hi = Math.max(hi, r);
        }
        return hi - lo;
    }

    private static double mean(double[] x, int n) {
        double s = 0.0;
        for (int i = 0; i < n; i++) {
            s += x[i];
        }
        return s / n;
    }

    private static double std(double[] x, int n, double mean) {
        double s = 0.0;
        for (int i = 0; i < n; i++) {
            double dev = x[i] - mean;
            s += dev * dev;
        }
        return Math.sqrt(s / n);
    }

    private static double range(double[] x, int n) {
        double lo = x[0];
        double hi = x[0];
        for (int i = 1; i < n; i++) {
            lo = Math.min(lo, x[i]);
            hi = Math.max(hi, x[i]);
        }
        return hi - lo;
    }
}

package org.stairsense.core;

/**
 * Smoothing, gravity removal and rotation to a fixed frame, one sample at a time (spec §3.3–§3.4):
 * mirrors {@code stream/_standardize.py::Standardizer.push}.
 *
 * <p>The chain: the causal smoothing buffer (300 ms, current sample excluded) on the input stream,
 * then the 500 ms gravity buffer (current sample included) on the smoothed stream, d = a − g, then
 * the rotation of the method: {@code rotvec} (rotation vector → ENU, the thesis's method),
 * {@code vertical} (accelerometer only, smallest rotation of g to +Z), {@code mizell} (vertical and
 * horizontal parts, 6 columns), {@code linear} (the phone's linear acceleration, rotated; no
 * gravity buffer).
 */
public final class Standardizer {
    private final String method;
    private final BufferMean smoother;  // null when smoothing is off
    private final BufferMean gravity;
    private final boolean linear;
    private final boolean mizell;
    private final boolean vertical;

    /** The standardized sample of the last {@link #push} that returned true: 3 columns, 6 for Mizell. */
    public final double[] sample;
    /** Its vertical dynamic acceleration (positive up), what the segmentation runs on. */
    public double verticalAcc;

    /**
     * @param config the model's configuration
     * @param method a concrete method, see {@link #resolveOrientation}
     * @param nativeRateHz the sensor's rate; used only for {@code smoothing='count'} without {@code rate_hz}
     */
    public Standardizer(PipelineConfig config, String method, double nativeRateHz) {
        if (!method.equals("rotvec") && !method.equals("vertical") && !method.equals("linear") && !method.equals("mizell")) {
            throw new IllegalArgumentException("method must be rotvec, vertical, linear or mizell (resolve 'auto' "
                    + "first), got '" + method + "'");
        }
        this.method = method;
        linear = method.equals("linear");
        mizell = method.equals("mizell");
        vertical = method.equals("vertical");
        sample = new double[mizell ? 6 : 3];
        if (config.smoothing == PipelineConfig.Smoothing.TIME) {
            smoother = BufferMean.ofSpan(PipelineConfig.millisToNanos(config.smoothMs), false);
        } else if (config.smoothing == PipelineConfig.Smoothing.COUNT) {
            smoother = BufferMean.ofCount(smoothingCount(config, config.rateHz > 0 ? config.rateHz : nativeRateHz), false);
        } else {
            smoother = null;
        }
        gravity = BufferMean.ofSpan(PipelineConfig.millisToNanos(config.gravityMs), true);
    }

    /**
     * {@code resolve_orientation}: the concrete method for a phone with the given sensors;
     * {@code auto} prefers the rotation vector, else the accelerometer-only {@code vertical} method,
     * exactly as Python resolves it ({@code ahrs} is never chosen by {@code auto}: it lost step counts
     * on stairs, benchmarks/results/orientation.md; the Java core does not implement it).
     *
     * @throws ModelConfigException when the configured method needs a sensor the phone lacks
     */
    public static String resolveOrientation(PipelineConfig config, boolean hasRotationVector, boolean hasLinearAcceleration) {
        String method = config.orientation;
        if (method.equals("auto")) {
            return hasRotationVector ? "rotvec" : "vertical";
        }
        boolean needsRotvec = method.equals("rotvec") || method.equals("linear");
        if (needsRotvec && !hasRotationVector) {
            throw new ModelConfigException("orientation='" + method + "' needs the rotation-vector sensor, which this "
                    + "device does not have; use a model trained with orientation 'auto' or 'vertical'");
        }
        if (method.equals("linear") && !hasLinearAcceleration) {
            throw new ModelConfigException("orientation='linear' needs the linear-acceleration sensor, which this "
                    + "device does not have");
        }
        return method;
    }

    /** {@code _smoothing_count}: {@code max(1, round(smooth_ms * 1e-3 * rate_hz))}, round half to even. */
    static int smoothingCount(PipelineConfig config, double rateHz) {
        if (!(rateHz > 0) || Double.isInfinite(rateHz)) {
            throw new ModelConfigException("smoothing='count' needs the sampling rate to size the buffer; "
                    + "give the sensor's rate");
        }
        return (int) Math.max(1, Math.rint(config.smoothMs * 1e-3 * rateHz));
    }

    public String method() {
        return method;
    }

    /** Columns per standardized sample: 3, or 6 for Mizell's (vertical, horizontal) pair. */
    public int columns() {
        return sample.length;
    }

    public void reset() {
        if (smoother != null) {
            smoother.reset();
        }
        gravity.reset();
    }

    /**
     * Consume one raw row (layout {@link RawSample}).
     *
     * @return true when {@link #sample} and {@link #verticalAcc} hold a standardized sample (false while the buffers fill)
     */
    public boolean push(long tNs, double[] raw) {
        int src = linear ? RawSample.LINACC : RawSample.ACC;
        double x = raw[src];
        double y = raw[src + 1];
        double z = raw[src + 2];
        if (smoother != null) {
            if (!smoother.push(tNs, x, y, z)) {
                return false;
            }
            x = smoother.meanX;
            y = smoother.meanY;
            z = smoother.meanZ;
        }
        int q = RawSample.ROTVEC;
        if (linear) {
            Orientation.rotateByQuaternion(raw[q], raw[q + 1], raw[q + 2], raw[q + 3], x, y, z, sample, 0);
            verticalAcc = sample[2];
            return true;
        }
        if (!gravity.push(tNs, x, y, z)) {
            return false;
        }
        double gx = gravity.meanX;
        double gy = gravity.meanY;
        double gz = gravity.meanZ;
        double dx = x - gx;
        double dy = y - gy;
        double dz = z - gz;
        if (mizell) {
            verticalAcc = Orientation.mizell(gx, gy, gz, dx, dy, dz, sample, 0);
            return true;
        }
        if (vertical) {
            Orientation.rotateToVertical(gx, gy, gz, dx, dy, dz, sample, 0);
        } else {
            Orientation.rotateByQuaternion(raw[q], raw[q + 1], raw[q + 2], raw[q + 3], dx, dy, dz, sample, 0);
        }
        verticalAcc = sample[2];
        return true;
    }
}

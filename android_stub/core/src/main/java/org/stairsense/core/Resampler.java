package org.stairsense.core;

/**
 * Zero-order-hold resampling to the model's {@code rate_hz}, one input sample at a time: the
 * streaming form of {@code stream/_resample.py::resample}, which the Python pipeline applies
 * before the front end (and which a phone needs: sensor rates are requests, not promises).
 *
 * <p>Output sample k sits at {@code t0 + rint(k * 1e9 / rate_hz)} ns (rounded per sample, so a
 * 33 333 333.3 ns period never drifts) and carries the latest input at or before that time. Usage:
 * {@link #offer} one input, then {@link #poll} until false; each true poll leaves the output in
 * {@link #tNs} and {@link #row}. An output at time g is released by the first input at or after g,
 * so the delay is under one input period.
 */
public final class Resampler {
    private final double periodNs;
    private final double[] previous = new double[RawSample.WIDTH];
    private final double[] current = new double[RawSample.WIDTH];
    private boolean started;
    private long t0;
    private long k;
    private long nextT;
    private long currentT;

    /** Time of the output sample of the last true {@link #poll}. */
    public long tNs;
    /** Row of the output sample of the last true {@link #poll} (layout {@link RawSample}); do not modify. */
    public double[] row;

    public Resampler(double rateHz) {
        if (!(rateHz > 0) || Double.isInfinite(rateHz)) {
            throw new IllegalArgumentException("rate_hz must be a finite number > 0, got " + rateHz);
        }
        periodNs = 1e9 / rateHz;
    }

    public void reset() {
        started = false;
    }

    /** Take one input sample (timestamps strictly increasing); copies {@code raw}. */
    public void offer(long t, double[] raw) {
        System.arraycopy(current, 0, previous, 0, RawSample.WIDTH);
        System.arraycopy(raw, 0, current, 0, RawSample.WIDTH);
        currentT = t;
        if (!started) {
            started = true;
            t0 = t;
            k = 0;
            nextT = t;
        }
    }

    /** Release the next output sample at or before the last input's time; false when there is none. */
    public boolean poll() {
        if (!started || nextT > currentT) {
            return false;
        }
        tNs = nextT;
        row = nextT == currentT ? current : previous;
        k++;
        nextT = t0 + (long) Math.rint(k * periodNs);
        return true;
    }
}

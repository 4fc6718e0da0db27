package org.stairsense.core;

/**
 * Causal buffer mean of a three-axis stream, one sample at a time: mirrors the {@code push} form
 * of {@code stream/_buffer_mean.py::CausalBufferMean} operation for operation.
 *
 * <p>Serves the smoothing buffer (spec §3.3: the mean of the last 300 ms is taken <em>before</em>
 * the new reading is inserted) and the gravity buffer (spec §3.4: the current reading is included),
 * told apart by {@code includeCurrent}. The buffer holds the samples with {@code t >= t_now - span}
 * (time mode) or the last {@code count} samples (count mode). Nothing is emitted until the buffer
 * is full: until {@code span} has elapsed since the first sample, or {@code count} samples were seen.
 *
 * <p>The per-axis sums are running sums (add on insert, subtract on evict), recomputed from the
 * buffer by a plain left-to-right loop every {@value #RESUM_EVERY} inserts so rounding cannot drift:
 * the same additions in the same order as Python, so the means are bit-identical.
 *
 * <p>The buffer is a ring of primitive arrays whose power-of-two capacity doubles when full (an index
 * mask instead of a division), so steady state allocates nothing.
 */
public final class BufferMean {
    static final int RESUM_EVERY = 4096;

    private final long spanNs;   // > 0 in time mode
    private final int count;     // > 0 in count mode
    private final boolean includeCurrent;

    private long[] t = new long[16];
    private double[] x = new double[16];
    private double[] y = new double[16];
    private double[] z = new double[16];
    private int mask = 15;  // capacity - 1
    private int head;  // index of the oldest sample
    private int size;

    private double sx, sy, sz;
    private boolean started;
    private long tFirst;
    private long seen;
    private int sinceResum;

    /** The mean of the last {@link #push} that returned true. */
    public double meanX, meanY, meanZ;

    private BufferMean(long spanNs, int count, boolean includeCurrent) {
        this.spanNs = spanNs;
        this.count = count;
        this.includeCurrent = includeCurrent;
    }

    /** Time mode: the buffer holds the samples of the last {@code spanNs} nanoseconds. */
    public static BufferMean ofSpan(long spanNs, boolean includeCurrent) {
        if (spanNs <= 0) {
            throw new IllegalArgumentException("spanNs must be > 0, got " + spanNs);
        }
        return new BufferMean(spanNs, 0, includeCurrent);
    }

    /** Count mode: the buffer holds the last {@code count} samples (the thesis's literal cyclic buffer). */
    public static BufferMean ofCount(int count, boolean includeCurrent) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1, got " + count);
        }
        return new BufferMean(0, count, includeCurrent);
    }

    public void reset() {
        head = 0;
        size = 0;
        sx = sy = sz = 0.0;
        started = false;
        seen = 0;
        sinceResum = 0;
    }

    /**
     * Consume one sample.
     *
     * @return true when the buffer is full and {@link #meanX}, {@link #meanY}, {@link #meanZ} hold its mean
     * @throws IllegalStateException when a gap longer than the buffer left it empty (split at gaps first)
     */
    public boolean push(long tNs, double vx, double vy, double vz) {
        if (!started) {
            started = true;
            tFirst = tNs;
        }
        boolean full = spanNs > 0 ? tNs - tFirst >= spanNs : seen >= (includeCurrent ? count - 1 : count);
        seen++;
        if (spanNs > 0) {
            evict(tNs);
        }
        if (includeCurrent) {
            insert(tNs, vx, vy, vz);
            evict(tNs);
            if (full) {
                mean(tNs);
            }
            return full;
        }
        if (full) {
            mean(tNs);
        }
        insert(tNs, vx, vy, vz);
        evict(tNs);
        return full;
    }

    private void evict(long tNs) {
        if (spanNs > 0) {
            long limit = tNs - spanNs;
            while (size > 0 && t[head] < limit) {
                dropOldest();
            }
        } else {
            while (size > count) {
                dropOldest();
            }
        }
    }

    private void dropOldest() {
        sx -= x[head];
        sy -= y[head];
        sz -= z[head];
        head = (head + 1) & mask;
        size--;
    }

    private void insert(long tNs, double vx, double vy, double vz) {
        if (size == t.length) {
            grow();
        }
        int i = (head + size) & mask;
        t[i] = tNs;
        x[i] = vx;
        y[i] = vy;
        z[i] = vz;
        size++;
        sx += vx;
        sy += vy;
        sz += vz;
        sinceResum++;
        if (sinceResum >= RESUM_EVERY) {
            resum();
        }
    }

    private void resum() {
        sinceResum = 0;
        double ax = 0.0, ay = 0.0, az = 0.0;
        for (int k = 0; k < size; k++) {
            int i = (head + k) & mask;
            ax += x[i];
            ay += y[i];
            az += z[i];
        }
        sx = ax;
        sy = ay;
        sz = az;
    }

    private void mean(long tNs) {
        if (size == 0) {
            throw new IllegalStateException("no sample within the " + (spanNs / 1_000_000) + " ms buffer before t_ns="
                    + tNs + ": the stream has a gap longer than the buffer. Split the stream at gaps first "
                    + "(Pipeline restarts the front end after a gap longer than max_gap_s)");
        }
        double n = size;
        meanX = sx / n;
        meanY = sy / n;
        meanZ = sz / n;
    }

    private void grow() {
        int n = t.length * 2;
        long[] t2 = new long[n];
        double[] x2 = new double[n];
        double[] y2 = new double[n];
        double[] z2 = new double[n];
        for (int k = 0; k < size; k++) {
            int i = (head + k) & mask;
            t2[k] = t[i];
            x2[k] = x[i];
            y2[k] = y[i];
            z2[k] = z[i];
        }
        t = t2;
        x = x2;
        y = y2;
        z = z2;
        head = 0;
        mask = n - 1;
    }
}

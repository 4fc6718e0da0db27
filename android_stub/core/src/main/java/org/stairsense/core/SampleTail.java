package org.stairsense.core;

/**
 * The most recent standardized samples, enough to hand any kept window to the classifier: the
 * sample store of {@link WindowRows}, as in {@code features/_window_rows.py::WindowRowStage}. Each
 * sample comes with its vertical acceleration and the {@link HeightFilter}'s height and speed at
 * it (NaN without a barometer). A kept window lasts at most {@code max_step_s}, so older samples
 * are dropped; the ring doubles when full, so steady state allocates nothing.
 */
public final class SampleTail {
    private final int columns;
    private final long keepNs;
    private long[] t = new long[64];
    private double[] values;
    private double[] vertical;
    private double[] height;
    private double[] speed;
    private long first;  // global index of the oldest sample held
    private int mask = 63;  // capacity - 1 (a power of two: an index mask instead of a division)
    private int head;
    private int size;

    public SampleTail(int columns, double maxStepS) {
        this.columns = columns;
        this.values = new double[t.length * columns];
        this.vertical = new double[t.length];
        this.height = new double[t.length];
        this.speed = new double[t.length];
        // One millisecond of slack: the filter compares seconds as doubles, this compares nanoseconds.
        this.keepNs = (long) Math.ceil(maxStepS * 1e9) + 1_000_000L;
    }

    public void reset() {
        first = 0;
        head = 0;
        size = 0;
    }

    /**
     * Append standardized sample number {@code first + size}, its vertical dynamic acceleration and
     * the height (m) and vertical speed (m/s) estimated at it, dropping those too old for any kept window.
     */
    public void add(long tNs, double[] sample, double verticalAcc, double heightM, double speedMS) {
        while (size > 0 && t[head] < tNs - keepNs) {
            head = (head + 1) & mask;
            size--;
            first++;
        }
        if (size == t.length) {
            grow();
        }
        int i = (head + size) & mask;
        t[i] = tNs;
        System.arraycopy(sample, 0, values, i * columns, columns);
        vertical[i] = verticalAcc;
        height[i] = heightM;
        speed[i] = speedMS;
        size++;
    }

    /**
     * Copy samples {@code [start, stop)} as float32, row-major {@code [rows, columns]} (the layout of
     * the exported model's {@code samples} input), into {@code out}.
     *
     * @return the number of floats written, {@code (stop - start) * columns}
     * @throws IllegalStateException when the window is no longer (or not yet) held
     */
    public int copy(long start, long stop, float[] out) {
        check(start, stop);
        int n = 0;
        for (long g = start; g < stop; g++) {
            int base = ((head + (int) (g - first)) & mask) * columns;
            for (int c = 0; c < columns; c++) {
                out[n++] = (float) values[base + c];
            }
        }
        return n;
    }

    /**
     * The two signals of the step-context shape for samples {@code [start, stop)}: {@code z}, the
     * vertical dynamic acceleration, and {@code h}, the horizontal magnitude: {@code hypot(x, y)} of
     * an ENU sample, the norm of Mizell's horizontal vector (columns 3..5).
     *
     * @return the number of samples written to each array
     * @throws IllegalStateException when the window is no longer (or not yet) held
     */
    public int stepSignals(long start, long stop, double[] z, double[] h) {
        check(start, stop);
        int n = 0;
        for (long g = start; g < stop; g++) {
            int i = (head + (int) (g - first)) & mask;
            int base = i * columns;
            z[n] = vertical[i];
            if (columns == 6) {
                double a = values[base + 3];
                double b = values[base + 4];
                double c = values[base + 5];
                h[n] = Math.sqrt(a * a + b * b + c * c);
            } else {
                h[n] = Math.hypot(values[base], values[base + 1]);
            }
            n++;
        }
        return n;
    }

    /**
     * The height and vertical speed of samples {@code [start, stop)} (the inputs of {@link HeightContext}).
     *
     * @return the number of samples written to each array
     * @throws IllegalStateException when the window is no longer (or not yet) held
     */
    public int heights(long start, long stop, double[] h, double[] v) {
        check(start, stop);
        int n = 0;
        for (long g = start; g < stop; g++) {
            int i = (head + (int) (g - first)) & mask;
            h[n] = height[i];
            v[n] = speed[i];
            n++;
        }
        return n;
    }

    private void check(long start, long stop) {
        if (start < first || stop > first + size) {
            throw new IllegalStateException("samples [" + start + ", " + stop + ") are not in the tail [" + first
                    + ", " + (first + size) + "): only windows up to max_step_s are held");
        }
    }

    private void grow() {
        int n = t.length * 2;
        long[] t2 = new long[n];
        double[] v2 = new double[n * columns];
        double[] z2 = new double[n];
        double[] h2 = new double[n];
        double[] s2 = new double[n];
        for (int k = 0; k < size; k++) {
            int i = (head + k) & mask;
            t2[k] = t[i];
            System.arraycopy(values, i * columns, v2, k * columns, columns);
            z2[k] = vertical[i];
            h2[k] = height[i];
            s2[k] = speed[i];
        }
        t = t2;
        values = v2;
        vertical = z2;
        height = h2;
        speed = s2;
        head = 0;
        mask = n - 1;
    }
}

package org.stairsense.core;

/**
 * The most recent standardized samples, enough to hand any kept window to the classifier: mirrors
 * {@code stairsense/pipeline.py::_SampleTail}. A kept window lasts at most {@code max_step_s}, so
 * older samples are dropped; the ring doubles when full, so steady state allocates nothing.
 */
public final class SampleTail {
    private final int columns;
    private final long keepNs;
    private long[] t = new long[64];
    private double[] values;
    private long first;  // global index of the oldest sample held
    private int mask = 63;  // capacity - 1 (a power of two: an index mask instead of a division)
    private int head;
    private int size;

    public SampleTail(int columns, double maxStepS) {
        this.columns = columns;
        this.values = new double[t.length * columns];
        // One millisecond of slack: the filter compares seconds as doubles, this compares nanoseconds.
        this.keepNs = (long) Math.ceil(maxStepS * 1e9) + 1_000_000L;
    }

    public void reset() {
        first = 0;
        head = 0;
        size = 0;
    }

    /** Append standardized sample number {@code first + size}, dropping those too old for any kept window. */
    public void add(long tNs, double[] sample) {
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
        if (start < first || stop > first + size) {
            throw new IllegalStateException("samples [" + start + ", " + stop + ") are not in the tail [" + first
                    + ", " + (first + size) + "): only windows up to max_step_s are held");
        }
        int n = 0;
        for (long g = start; g < stop; g++) {
            int base = ((head + (int) (g - first)) & mask) * columns;
            for (int c = 0; c < columns; c++) {
                out[n++] = (float) values[base + c];
            }
        }
        return n;
    }

    private void grow() {
        int n = t.length * 2;
        long[] t2 = new long[n];
        double[] v2 = new double[n * columns];
        for (int k = 0; k < size; k++) {
            int i = (head + k) & mask;
            t2[k] = t[i];
            System.arraycopy(values, i * columns, v2, k * columns, columns);
        }
        t = t2;
        values = v2;
        head = 0;
        mask = n - 1;
    }
}

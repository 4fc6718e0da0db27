package org.stairsense.core;

/**
 * One candidate step window: standardized samples {@code [start, stop)}, mirrors
 * {@code stream/_segment.py::Window}. Sample indices count standardized samples since the last reset.
 *
 * <p>The segmenter reuses one instance (no allocation per window): its fields change at the next
 * window, so copy what you keep.
 */
public final class Window {
    long start;
    long stop;
    long tStartNs;
    long tEndNs;
    WindowStatus status;

    public long start() {
        return start;
    }

    /** Index of the sample that closed the window (the upward crossing); not part of the window. */
    public long stop() {
        return stop;
    }

    public long tStartNs() {
        return tStartNs;
    }

    public long tEndNs() {
        return tEndNs;
    }

    public WindowStatus status() {
        return status;
    }

    public boolean kept() {
        return status == WindowStatus.KEPT;
    }

    public double durationS() {
        return (tEndNs - tStartNs) / 1e9;
    }

    @Override
    public String toString() {
        return "Window[" + start + ", " + stop + ") " + status + " " + durationS() + " s";
    }
}

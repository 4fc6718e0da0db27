package org.stairsense.core;

/**
 * The block of the last {@code size} kept windows of a run, this one included: what every context
 * feature is taken over ({@link StepContext}, {@link HeightContext}). Mirrors
 * {@code features/_step_context.py::StepRun}: a run ends where the time from one window's end to
 * the next one's start exceeds {@code maxGapS}, or at {@link #reset}.
 *
 * <p>It keeps only the ring's bookkeeping; each context stores its own per-window values in a ring
 * of {@code size} slots, at the slot {@link #push} returns. Nothing is allocated.
 */
final class StepRun {
    private final int size;
    private final double maxGapS;
    private int held;  // windows of the current run in the ring (at most `size`)
    private int next;  // ring slot of the next window
    private long lastEndNs;

    /**
     * @param size windows in the block, this one included (at least 1)
     * @param maxGapS a longer pause (s) between kept windows starts a new run
     */
    StepRun(int size, double maxGapS) {
        if (size < 1) {
            throw new IllegalArgumentException("context must be >= 1, got " + size);
        }
        this.size = size;
        this.maxGapS = maxGapS;
    }

    /** Ring slots a context needs. */
    int size() {
        return size;
    }

    /** Forget the run: the next window starts a new one. */
    void reset() {
        held = 0;
        next = 0;
    }

    /** The window that just closed joins the run (after a long pause, a new one); returns its ring slot. */
    int push(long tStartNs, long tEndNs) {
        if (held > 0 && (tStartNs - lastEndNs) / 1e9 > maxGapS) {
            reset();
        }
        lastEndNs = tEndNs;
        int slot = next;
        next = (next + 1) % size;
        held = Math.min(held + 1, size);
        return slot;
    }

    /** Windows in the block, this one included. */
    int held() {
        return held;
    }

    /** Ring slot of the block's {@code r}-th window, oldest first ({@code r < held()}). */
    int slot(int r) {
        return ((next - held + size) % size + r) % size;
    }
}

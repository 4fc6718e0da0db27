package org.stairsense.core;

/**
 * Streaming majority vote of each kept window's stair decision with its neighbours in the run.
 * Mirrors {@code models/stairstep/_vote.py::StepVote} (Python's {@code stairsense.models.StepVote}):
 * a window's decision becomes the majority over {@code steps} consecutive kept windows of its run
 * centred on it ({@code steps} odd; 1 keeps every decision). Runs are the step context's
 * ({@link StepRun}): a new one starts where the time from one window's end to the next one's start
 * exceeds {@code maxGapS}, or after {@link #flush}. Near a run's ends the nearest window of the run
 * stands in for the missing neighbours, so with {@code steps = 3} a run's first and last windows keep
 * their own decision.
 *
 * <p>A flight's onset: a model exported with an onset threshold also says, per window, whether it
 * reaches that lower threshold. The barometer lags a climb, so a flight's first stair step often
 * scores below the decision threshold while the steps after it do not. With {@code steps >= 3} a
 * window at the onset threshold is STAIR, whatever the majority says, when the next window of its
 * run is STAIR before the vote. Reading that window costs no latency: the vote already waits for it.
 * A run's last window has no next one, so the rule never applies to it; with {@code steps = 1}
 * nothing waits, so the onset flag is ignored. With the flag always false the vote is the majority
 * alone.
 *
 * <p>A window is decided when the {@code steps / 2}-th window after it in its run closes, or when its
 * run ends: the next window starts a new run, or {@link #flush} (a segment or the stream ended). Each
 * {@link #push} and {@link #flush} returns how many windows it decided; {@link #decided} reads their
 * decisions, oldest first, until the next call. Windows are decided in the order they were pushed,
 * so the n-th decision ever is the n-th window's. Nothing is allocated after construction.
 */
public final class StepVote {
    private final int steps;
    private final int half;
    // Only the break rule: with a block of 2, held() == 1 after a push means the window starts a run.
    private final StepRun run;
    private final boolean[] values;  // ring of the run's last `steps` raw decisions
    private final boolean[] onsets;  // and whether each window reached the onset threshold
    private int held;  // decisions of the current run in the ring (at most `steps`)
    private int next;  // ring slot of the next decision
    private int waiting;  // the newest `waiting` held windows are not decided yet (at most `half`)
    // A push decides at most one window, or the `half` waiting ones when it breaks the run; a flush `half`.
    private final boolean[] decided;
    private int count;

    /**
     * @param steps windows in the vote, this one in the middle: odd, at least 1 ({@code vote_steps})
     * @param maxGapS a longer pause (s) between kept windows starts a new run ({@code step_context_gap_s})
     */
    public StepVote(int steps, double maxGapS) {
        if (steps < 1 || steps % 2 == 0) {
            throw new IllegalArgumentException("StepVote steps must be an odd whole number >= 1 (1 = no vote), got " + steps);
        }
        if (!(maxGapS > 0)) {
            throw new IllegalArgumentException("StepVote max_gap_s must be > 0, got " + maxGapS);
        }
        this.steps = steps;
        this.half = steps / 2;
        this.run = new StepRun(2, maxGapS);
        this.values = new boolean[steps];
        this.onsets = new boolean[steps];
        this.decided = new boolean[Math.max(half, 1)];
    }

    /**
     * The kept window that just closed, with the classifier's decision.
     *
     * @param stair the classifier's decision (STAIR)
     * @param onset whether the window reaches the model's flight-onset threshold (false for a model
     *     without one): STAIR when the next window of its run is (class comment)
     * @return how many windows this decided ({@link #decided}): 0 or 1, or up to {@code steps / 2}
     *     when the window starts a new run and the previous run's waiting windows are decided
     */
    public int push(boolean stair, boolean onset, long tStartNs, long tEndNs) {
        count = 0;
        run.push(tStartNs, tEndNs);
        if (run.held() == 1) {
            finishRun();
        }
        values[next] = stair;
        onsets[next] = onset;
        next = (next + 1) % steps;
        held = Math.min(held + 1, steps);
        waiting++;
        if (waiting > half) {
            decide(held - 1 - half);
            waiting--;
        }
        return count;
    }

    /**
     * Decide every waiting window (its run ended: a new segment, or the end of the stream); the next
     * window starts a new run.
     *
     * @return how many windows this decided ({@link #decided})
     */
    public int flush() {
        count = 0;
        finishRun();
        run.reset();
        return count;
    }

    /** The voted decision of the {@code k}-th window the last {@link #push} or {@link #flush} decided, oldest first. */
    public boolean decided(int k) {
        if (k < 0 || k >= count) {
            throw new IndexOutOfBoundsException("the last call decided " + count + " windows, asked for " + k);
        }
        return decided[k];
    }

    /** Windows pushed but not yet decided (at most {@code steps / 2}). */
    public int waiting() {
        return waiting;
    }

    private void finishRun() {
        while (waiting > 0) {
            decide(held - waiting);
            waiting--;
        }
        held = 0;
    }

    /**
     * Majority over the held positions i − half … i + half, the run's nearest end standing in; or a
     * flight's onset: position i reached the onset threshold and position i + 1, held in the same
     * run, is STAIR before the vote.
     */
    private void decide(int i) {
        int votes = 0;
        for (int j = i - half; j <= i + half; j++) {
            int r = Math.min(Math.max(j, 0), held - 1);
            if (values[slot(r)]) {
                votes++;
            }
        }
        boolean onset = half >= 1 && i + 1 <= held - 1 && onsets[slot(i)] && values[slot(i + 1)];
        decided[count++] = votes > half || onset;
    }

    /** The ring slot of held position {@code r} (0 = the run's oldest window held). */
    private int slot(int r) {
        return (next - held + r + steps) % steps;
    }
}

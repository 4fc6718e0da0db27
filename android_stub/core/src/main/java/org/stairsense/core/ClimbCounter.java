package org.stairsense.core;

/**
 * Stair steps up and down, metres and floors climbed, from a barometer model's voted decisions.
 * Mirrors {@code models/stairstep/_climb.py::ClimbCounter} (its docstring gives the reasons):
 *
 * <ul>
 *   <li>a stair step's direction is the sign of its context's height change
 *       ({@code ctx_height_change_m}, the fifth height feature);
 *   <li>stair steps chain into a flight while each one's previous stair step is in its context block
 *       ({@link StepRun}); a flight's height runs from the start of its first stair step's context to
 *       the end of its last stair step, and counts as climbed or descended by its own sign;
 *   <li>a flight's height counts once it holds {@code minFlight} stair steps (the open flight
 *       included, so the figures grow during a climb);
 *   <li>floors are metres / 3, rounded to the nearest whole floor.
 * </ul>
 *
 * Nothing is allocated after construction.
 */
public final class ClimbCounter {
    /** The height of one floor, as Apple's CMPedometer counts floors ("approximately three meters"). */
    public static final double FLOOR_M = 3.0;

    private final StepRun run;
    private final boolean[] stair;  // per ring slot: the window's decision
    private final double[] endM;  // per ring slot: the height at the window's end
    private final int minFlight;
    private long up;
    private long down;
    private double closedUpM;  // flights that ended
    private double closedDownM;
    private int flightSteps;  // the open flight
    private double flightM;

    /**
     * @param context the step context's size ({@code step_context}, at least 1)
     * @param maxGapS the step context's run break ({@code step_context_gap_s})
     * @param minFlight stair steps a flight holds before its height counts (at least 1; at most {@code context})
     */
    public ClimbCounter(int context, double maxGapS, int minFlight) {
        if (minFlight < 1) {
            throw new IllegalArgumentException("ClimbCounter min_flight must be a whole number >= 1, got " + minFlight);
        }
        this.run = new StepRun(context, maxGapS);
        this.stair = new boolean[context];
        this.endM = new double[context];
        this.minFlight = Math.min(minFlight, context);
    }

    /** The defaults of {@code ClimbCounter(context, max_gap_s)}: flights of 3. */
    public ClimbCounter(int context, double maxGapS) {
        this(context, maxGapS, 3);
    }

    /** A new stream (after a sensor gap): its heights have a new zero; the open flight ends, the counts go on. */
    public void newSegment() {
        endFlight();
        run.reset();
    }

    /**
     * One kept window, in the order the vote decided them.
     *
     * @param isStair its voted decision
     * @param contextChangeM its {@code ctx_height_change_m} (the fifth height feature)
     * @param heightM the height filter's height at its last sample
     */
    public void push(boolean isStair, double contextChangeM, double heightM, long tStartNs, long tEndNs) {
        int slot = run.push(tStartNs, tEndNs);
        stair[slot] = isStair;
        endM[slot] = heightM;
        int previous = -1;  // slot of the block's newest earlier stair step
        for (int r = run.held() - 2; r >= 0 && previous < 0; r--) {
            if (stair[run.slot(r)]) {
                previous = run.slot(r);
            }
        }
        if (previous < 0) {  // a new run, or the stair steps ran out of the block
            endFlight();
        }
        if (!isStair) {
            return;
        }
        if (contextChangeM >= 0) {
            up++;
        } else {
            down++;
        }
        double reference = previous >= 0 ? endM[previous] : heightM - contextChangeM;
        flightSteps++;
        flightM += heightM - reference;
    }

    private double openFlightM() {
        return flightSteps >= minFlight ? flightM : 0.0;
    }

    private void endFlight() {
        double rise = openFlightM();
        closedUpM += Math.max(rise, 0.0);
        closedDownM += Math.max(-rise, 0.0);
        flightSteps = 0;
        flightM = 0.0;
    }

    /** Stair steps up. */
    public long up() {
        return up;
    }

    /** Stair steps down. */
    public long down() {
        return down;
    }

    /** Metres climbed on stairs (flights that went up, the open one included). */
    public double climbedM() {
        return closedUpM + Math.max(openFlightM(), 0.0);
    }

    /** Metres descended on stairs (flights that went down, the open one included). */
    public double descendedM() {
        return closedDownM + Math.max(-openFlightM(), 0.0);
    }

    /** Floors climbed on stairs: {@link #climbedM} / 3 m, to the nearest whole floor. */
    public long floorsAscended() {
        return floors(climbedM());
    }

    /** Floors descended on stairs: {@link #descendedM} / 3 m, to the nearest whole floor. */
    public long floorsDescended() {
        return floors(descendedM());
    }

    private static long floors(double metres) {
        return Math.max(0L, (long) Math.floor(metres / FLOOR_M + 0.5));
    }
}

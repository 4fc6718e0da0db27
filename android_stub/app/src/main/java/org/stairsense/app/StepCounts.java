package org.stairsense.app;

import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The counters the UI shows: steps (kept windows, no model needed) and stair steps (kept windows
 * the model called STAIR). Written by the sensor thread, read by any thread.
 */
public final class StepCounts {
    /** Told about every change, on the sensor thread. */
    public interface Listener {
        void onCounts(long steps, long stairSteps);
    }

    public static final StepCounts INSTANCE = new StepCounts();

    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    private volatile long steps;
    private volatile long stairSteps;

    public void addListener(Listener listener) {
        listeners.add(listener);
        listener.onCounts(steps, stairSteps);
    }

    public void removeListener(Listener listener) {
        listeners.remove(listener);
    }

    void update(long newSteps, long newStairSteps) {
        if (newSteps == steps && newStairSteps == stairSteps) {
            return;
        }
        steps = newSteps;
        stairSteps = newStairSteps;
        for (Listener l : listeners) {
            l.onCounts(newSteps, newStairSteps);
        }
    }

    public long steps() {
        return steps;
    }

    public long stairSteps() {
        return stairSteps;
    }
}

package org.stairsense.app;

import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the UI shows: steps (kept windows, no model needed), stair steps (kept windows the step
 * vote over the model's answers called STAIR, {@code Pipeline.stairSteps}) and which model runs.
 * Written by the service and the sensor thread, read by any thread.
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
    private volatile String model = "no model loaded";

    public void addListener(Listener listener) {
        listeners.add(listener);
        listener.onCounts(steps, stairSteps);
    }

    public void removeListener(Listener listener) {
        listeners.remove(listener);
    }

    /** Whether a screen shows the counts now (a listener is registered): they must then be live. */
    public boolean watched() {
        return !listeners.isEmpty();
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

    /** Which model counts the stair steps, e.g. "model with barometer" ({@code PipelineConfig.modelKind}). */
    public String model() {
        return model;
    }

    void setModel(String description) {
        model = description;
        for (Listener l : listeners) {
            l.onCounts(steps, stairSteps);
        }
    }
}
